// Command deltafifo-pop-retains-keys shows that DeltaFIFO keeps popped keys
// reachable. Pop "returns a 'Deltas', which has a complete list of all the
// things that happened to the object (deltas) while it was sitting in the
// queue" (k8s.io/client-go@v0.37.2/tools/cache/delta_fifo.go:560-561): once
// popped, the object no longer sits in the queue and the FIFO has no reason
// to hold anything of it, but Pop reslices its key queue, f.queue =
// f.queue[1:] (delta_fifo.go:578), so the backing array still holds the
// popped key until a later append reallocates it. Sequence:
// f := cache.NewDeltaFIFO(cache.MetaNamespaceKeyFunc, nil); f.Add(a);
// f.Add(b); f.Pop(process) (pops a); then, with every reference of the
// caller to a dropped, runtime.GC(): a weak pointer to a's key (for a
// cluster-scoped object MetaNamespaceKeyFunc's key is the name string
// itself, built here at run time) is still live while the FIFO is, and a
// weak pointer to a itself is not: the FIFO retains the popped key, not the
// object. In an informer whose queue never fully drains, that is one
// leaked key per popped item until the array is reallocated.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"unsafe"
	"weak"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fifo is the part of cache.DeltaFIFO the sequence uses; Pop returns the
// newest object of the popped key's Deltas.
type fifo interface {
	Add(obj interface{}) error
	Pop() (interface{}, error)
}

// object is a cluster-scoped object whose name (and so key) is built at
// run time, long enough not to share a tiny-allocator block.
func object(prefix string) *metav1.PartialObjectMetadata {
	name := prefix + "-object-number-" + strconv.Itoa(len(os.Args)+41)
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// addAndPop adds two objects, pops the first and returns weak pointers to
// the popped object and to its key's bytes; nothing else of it survives
// this frame.
//
//go:noinline
func addAndPop(f fifo) (key weak.Pointer[byte], obj weak.Pointer[metav1.PartialObjectMetadata], popped string) {
	a, b := object("popped"), object("queued")
	key, obj = weak.Make(unsafe.StringData(a.Name)), weak.Make(a)
	if err := f.Add(a); err != nil {
		panic(err)
	}
	if err := f.Add(b); err != nil {
		panic(err)
	}
	o, err := f.Pop()
	if err != nil {
		panic(err)
	}
	return key, obj, strings.Clone(o.(metav1.Object).GetName())
}

// popWithFIFO runs the sequence and reports, while the FIFO is still
// reachable, whether the popped object and its key are.
//
//go:noinline
func popWithFIFO() (keyLive, objLive bool, popped string, key weak.Pointer[byte]) {
	f := newFIFO() // keyed by MetaNamespaceKeyFunc, no known objects
	key, obj, popped := addAndPop(f)
	runtime.GC()
	runtime.GC()
	keyLive, objLive = key.Value() != nil, obj.Value() != nil
	runtime.KeepAlive(f)
	return keyLive, objLive, popped, key
}

func main() {
	keyLive, objLive, popped, key := popWithFIFO()

	// Control: once the FIFO itself is unreachable, the key goes too.
	runtime.GC()
	runtime.GC()
	released := "and released once the FIFO is dropped"
	if key.Value() != nil {
		released = "and still live once the FIFO is dropped (inconclusive)"
	}

	switch {
	case objLive:
		fmt.Printf("DEFECT: the popped object %q is still reachable from the FIFO\n", popped)
		os.Exit(1)
	case keyLive:
		fmt.Printf("DEFECT: the popped object %q was collected but its key is still referenced by the FIFO (its key queue's backing array), %s\n", popped, released)
		os.Exit(1)
	}
	fmt.Printf("OK: neither the popped object %q nor its key is referenced by the FIFO\n", popped)
}
