//go:build !kverify_ours

package main

import "k8s.io/client-go/tools/cache"

func newUnlockedFIFO() (fifo, func(func(any, bool) error) error) {
	f := cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{AtomicEvents: true, UnlockWhileProcessing: true})
	return f, func(process func(any, bool) error) error {
		_, err := f.Pop(process)
		return err
	}
}
