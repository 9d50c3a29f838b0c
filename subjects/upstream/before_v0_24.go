//go:build clientgo_before_v0_24

package upstream

import "github.com/kverify/kverify/subjects/suite"

// DeltaFIFOOptions.Transformer, which the DeltaFIFO adapter passes the
// checks' transformers to, arrived in v0.24 (fifo_v0_24.go covers v0.24
// to v0.35); RealFIFO as the adapter drives it (its options and
// PopBatch) arrived in v0.36.
func fifoEntries() []suite.Entry {
	return absentEntries("the adapter takes DeltaFIFOOptions.Transformer (first in v0.24.0), RealFIFO's options and PopBatch and the FIFO's Done channel (first in v0.36.0)", "deltafifo", "realfifo")
}
