//go:build !kverify_ours

package main

import (
	"reflect"

	"k8s.io/client-go/tools/cache"
)

func newFIFO() fifo {
	return deltaFIFO{cache.NewDeltaFIFO(cache.MetaNamespaceKeyFunc, nil)}
}

type deltaFIFO struct{ *cache.DeltaFIFO }

// Pop pops with a process func that does nothing and returns the popped
// Deltas' newest object.
func (f deltaFIFO) Pop() (interface{}, error) {
	item, err := f.DeltaFIFO.Pop(noopProcess())
	if err != nil {
		return nil, err
	}
	return item.(cache.Deltas).Newest().Object, nil
}

// noopProcess is a PopProcessFunc that does nothing, whichever of its two
// signatures this client-go has (isInInitialList was added in v0.27), so
// this file builds on every release.
func noopProcess() cache.PopProcessFunc {
	var p cache.PopProcessFunc
	v := reflect.ValueOf(&p).Elem()
	v.Set(reflect.MakeFunc(v.Type(), func([]reflect.Value) []reflect.Value {
		return []reflect.Value{reflect.Zero(reflect.TypeOf((*error)(nil)).Elem())}
	}))
	return p
}
