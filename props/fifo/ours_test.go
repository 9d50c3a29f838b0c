package fifo_test

import (
	"github.com/kverify/kverify/props/fifo"
	"github.com/kverify/kverify/subjects/ours"
)

// Our FIFOs for the internal reach tests (reach_test.go's reachSubject),
// which cannot import subjects/ours themselves: it imports this package.
func init() {
	fifo.SetReachSubject(func(real bool) fifo.Subject {
		if real {
			return ours.RealFIFO()
		}
		return ours.DeltaFIFO()
	})
}
