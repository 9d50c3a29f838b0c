package checkkit

import (
	"runtime"
	"unsafe"
	"weak"
)

// Probe returns a fresh heap-allocated string that nothing else references,
// and a weak pointer to its bytes: hand the string to the subject, drop
// every other reference to it, and Held tells whether the subject still
// keeps it. The name makes probes distinct keys; the bytes are at least 17
// long, so the allocation is never shared with others (tiny allocations
// are).
func Probe(name string) (string, weak.Pointer[byte]) {
	v := string([]byte("retention-probe-" + name))
	return v, weak.Make(unsafe.StringData(v))
}

// LiveHeap runs the garbage collector twice and returns the bytes of live
// heap objects then (runtime.MemStats.HeapAlloc): what a structure still
// holds, as the checks that measure memory after a burst read it.
func LiveHeap() uint64 {
	stacksMu.Lock() // not while the watchdog holds a stack dump
	defer stacksMu.Unlock()
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// Held runs the garbage collector and returns the indexes of the probes
// that are still reachable. Finalizers and weak pointers are settled by a
// completed cycle, so a few cycles are enough: no sleeping.
func Held(probes ...weak.Pointer[byte]) []int {
	for range 3 {
		runtime.GC()
	}
	var held []int
	for i, p := range probes {
		if p.Value() != nil {
			held = append(held, i)
		}
	}
	return held
}
