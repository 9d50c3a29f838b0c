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
	// GNoError is the guarantee a check breaks when its step engine
	// returns an error that is not a Violation (Recorder.Errorf): the
	// check met a failure it has no guarantee for.
	GNoError = "no error"
)

// Guarantees returns the guarantees the toolkit reports for every
// component: each component's guarantees are these and its package's.
func Guarantees() []string {
	return []string{GTermination, GNoPanic, GNoError}
}
