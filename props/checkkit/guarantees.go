package checkkit

// Guarantees that the runner and the toolkit report for every component.
// A component's own guarantees are declared in its package (its
// Guarantees function); these are the ones any check can break through
// the toolkit, whatever its component.
const (
	// GTermination is the guarantee a hang, spin or deadlock breaks.
	GTermination = "Termination"
	// GNoPanic is the guarantee a call that panics breaks.
	GNoPanic = "No panic"
)
