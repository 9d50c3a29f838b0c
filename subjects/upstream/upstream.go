// Package upstream puts k8s.io/client-go v0.37.2 behind kverify's subject
// interfaces, and declares where client-go knowingly differs from the
// contract our checks state: each divergence has its reason and the
// client-go file:line it comes from.
package upstream

// Version is the client-go release these adapters and divergences describe.
const Version = "k8s.io/client-go@v0.37.2"
