// Command deltafifo-replace-partial-relist shows that DeltaFIFO.Replace is
// not atomic when its list holds an object the key function rejects. The
// doc says "Replace atomically does two things: (1) it adds the given
// objects using the Sync or Replace DeltaType and then (2) it does some
// deletions" (k8s.io/client-go@v0.37.2/tools/cache/delta_fifo.go:610-618).
// Sequence: f := cache.NewDeltaFIFO(cache.MetaNamespaceKeyFunc, nil);
// f.Replace([]interface{}{obj("a"), 42}, "1"), where 42 has no key
// (MetaNamespaceKeyFunc: "object has no meta"); f.Close(); f.Pop(...)
// until it fails. Replace returns the KeyError, yet "a" was queued and
// pops (delta_fifo.go:631-640 queue the list one object at a time and
// return at the first failure): a partial relist the caller was told
// failed, with no deletions done and not counted as the FIFO's initial
// population. A transformer that rejects an object in the middle of the
// list does the same (delta_fifo.go:491-516).
package main

import (
	"fmt"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fifo is the part of cache.DeltaFIFO the sequence uses; Pop returns the
// newest object of the popped key's Deltas.
type fifo interface {
	Replace(list []interface{}, resourceVersion string) error
	Close()
	Pop() (interface{}, error)
}

func obj(name string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
}

func main() {
	f := newFIFO() // keyed by MetaNamespaceKeyFunc, no known objects

	// A relist whose second object has no key.
	err := f.Replace([]interface{}{obj("a"), 42}, "1")

	// What did it queue? Close, then pop until the FIFO is empty.
	f.Close()
	var queued []string
	for {
		o, perr := f.Pop()
		if perr != nil {
			break
		}
		if m, ok := o.(metav1.Object); ok {
			queued = append(queued, m.GetNamespace()+"/"+m.GetName())
		} else {
			queued = append(queued, fmt.Sprintf("%v", o))
		}
	}

	switch {
	case err == nil:
		fmt.Printf("DEFECT: Replace accepted a list holding an object without a key (queued %v)\n", queued)
		os.Exit(1)
	case len(queued) > 0:
		fmt.Printf("DEFECT: Replace returned %q but queued %v: a partial relist, not atomic\n", err, queued)
		os.Exit(1)
	}
	fmt.Printf("OK: Replace returned %q and queued nothing\n", err)
}
