//go:build clientgo_before_v0_24 || (clientgo_before_v0_24_13 && !clientgo_before_v0_24) || (clientgo_before_v0_25_9 && !clientgo_before_v0_25) || (clientgo_before_v0_26_4 && !clientgo_before_v0_26)

package upstream

import "github.com/kverify/kverify/subjects/suite"

// DeltaFIFOOptions.Transformer, which the DeltaFIFO adapter passes the
// checks' transformers to, is first in v0.27.0 and was backported to
// v0.24.13, v0.25.9 and v0.26.4 (fifo_v0_24.go covers those to v0.35;
// this file the releases before v0.24 and the patches of v0.24-v0.26
// before the backport, which kverify matrix --patches runs); RealFIFO as
// the adapter drives it (its options and PopBatch) arrived in v0.36.
func fifoEntries() []suite.Entry {
	return absentEntries("the adapter takes DeltaFIFOOptions.Transformer (first in v0.27.0, backported to v0.24.13, v0.25.9 and v0.26.4), RealFIFO's options and PopBatch and the FIFO's Done channel (first in v0.36.0)", "deltafifo", "realfifo")
}
