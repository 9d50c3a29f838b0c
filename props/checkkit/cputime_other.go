//go:build !linux

package checkkit

import "time"

// processCPU and threadCPU are not measured off Linux: the watchdog then
// counts wall time instead of CPU time for spins (see guard), as it did
// everywhere before it learnt to tell a starved subject from a spinning
// one.
func processCPU() (time.Duration, bool) { return 0, false }

func threadCPU() (time.Duration, bool) { return 0, false }
