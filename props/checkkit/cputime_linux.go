package checkkit

import (
	"syscall"
	"time"
)

// rusageThread is Linux's RUSAGE_THREAD, which package syscall does not
// name: the resources used by the calling thread alone.
const rusageThread = 1

// processCPU is the CPU time (user and system) the whole process has been
// given so far. The watchdog's clocks run on it: a process that waits for
// a core is given none, so waiting is not counted as a lack of progress.
func processCPU() (time.Duration, bool) { return rusage(syscall.RUSAGE_SELF) }

// threadCPU is the CPU time the calling thread has been given, for the
// watchdog to measure its own stack dumps on a thread it has locked.
func threadCPU() (time.Duration, bool) { return rusage(rusageThread) }

func rusage(who int) (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
