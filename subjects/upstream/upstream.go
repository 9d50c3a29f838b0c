// Package upstream puts k8s.io/client-go behind kverify's subject
// interfaces, and declares where client-go knowingly differs from the
// contract our checks state: each divergence has its reason, the
// client-go file:line it comes from, its class (defect, design or caller
// precondition) with the upstream evidence, and the releases it holds for.
//
// In this module the adapters are those of the pinned release, v0.37.2
// (Release). For any other release kverify builds a copy of this package
// in a module of its own (subjects/releases), keeping the adapter files
// of that release's API era: files carry build constraints on the era
// tags clientgo_before_vX_Y, and absent.go's entries report what a
// release cannot take part in. Entries binds them all.
package upstream

// Version is the client-go release the divergences' file:line references
// name: the pinned one, also when a generated module runs them on another
// release (their ranges say where they hold).
const Version = "k8s.io/client-go@v0.37.2"
