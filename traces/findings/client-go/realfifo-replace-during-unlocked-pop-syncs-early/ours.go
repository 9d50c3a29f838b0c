//go:build kverify_ours

package main

import "github.com/kverify/kverify/impl/realfifo"

// newUnlockedFIFO is kverify's RealFIFO in the informer's mode.
func newUnlockedFIFO() (fifo, func(func(any, bool) error) error) {
	f, err := realfifo.New(realfifo.Options{Atomic: true, UnlockWhileProcessing: true})
	if err != nil {
		panic(err)
	}
	return f, func(process func(any, bool) error) error {
		_, err := f.Pop(process)
		return err
	}
}
