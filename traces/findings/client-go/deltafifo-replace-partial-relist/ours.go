//go:build kverify_ours

package main

import (
	"github.com/kverify/kverify/impl/delta"
	"github.com/kverify/kverify/impl/deltafifo"
)

// newFIFO is kverify's DeltaFIFO, keyed by its MetaNamespaceKeyFunc
// equivalent (the zero Options), with no known objects.
func newFIFO() fifo { return oursFIFO{deltafifo.New(deltafifo.Options{})} }

type oursFIFO struct{ *deltafifo.FIFO }

func (f oursFIFO) Pop() (interface{}, error) {
	item, err := f.FIFO.Pop(func(any, bool) error { return nil })
	if err != nil {
		return nil, err
	}
	return item.(delta.Deltas).Newest().Object, nil
}
