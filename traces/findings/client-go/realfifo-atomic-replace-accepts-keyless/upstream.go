//go:build !kverify_ours

package main

import "k8s.io/client-go/tools/cache"

func newAtomicFIFO() fifo {
	return cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{AtomicEvents: true})
}
