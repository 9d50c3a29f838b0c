//go:build kverify_ours

package main

import "github.com/kverify/kverify/impl/realfifo"

// newAtomicFIFO is kverify's RealFIFO in atomic mode, keyed by its
// MetaNamespaceKeyFunc equivalent.
func newAtomicFIFO() fifo {
	f, err := realfifo.New(realfifo.Options{Atomic: true})
	if err != nil {
		panic(err)
	}
	return f
}
