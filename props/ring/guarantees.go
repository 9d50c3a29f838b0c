package ring

import "github.com/kverify/kverify/props/checkkit"

// The guarantees the ring checks name in violations.
const (
	// GFIFO: a read returned another value (or none) than the model
	// buffer's next, in first-in first-out order.
	GFIFO = "FIFO"
	// GLen: Len is not the number of values written minus those read.
	GLen = "Len law"
	// GCap: Cap is below the values held, or differs from the capacity
	// law the subject declares.
	GCap = "Cap law"
	// GNoPanic is checkkit's: a call on the buffer panicked.
	GNoPanic = checkkit.GNoPanic
	// GNoRetention: a value ReadOne returned is still referenced by the
	// buffer.
	GNoRetention = "No retention"
	// GNoGrowthSpike: a write of a burst grew Cap past len + 3*chunk - 2.
	GNoGrowthSpike = "No growth spike"
	// GMemoryReturned: after a burst and a full drain, Cap or the heap
	// keeps more than allowed of what the burst added.
	GMemoryReturned = "Memory returned"
)

// Guarantees returns every guarantee the ring checks can name in a
// violation (besides checkkit's GTermination, which any check can).
func Guarantees() []string {
	return []string{GFIFO, GLen, GCap, GNoPanic, GNoRetention, GNoGrowthSpike, GMemoryReturned}
}
