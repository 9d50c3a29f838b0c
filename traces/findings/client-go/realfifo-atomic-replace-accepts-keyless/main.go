// Command realfifo-atomic-replace-accepts-keyless shows that a RealFIFO
// with AtomicEvents accepts a relist holding an object that has no key.
// Replace "1. finds those items in f.items that are not in newItems and
// creates synthetic deletes for them ... 3. adds the newItems to the queue"
// (k8s.io/client-go@v0.37.2/tools/cache/the_real_fifo.go:600-604), which
// takes every new item's key; without AtomicEvents it does, and a keyless
// object is a KeyError before anything is queued (reconcileReplacement,
// the_real_fifo.go:646-653). Sequence: f :=
// cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{AtomicEvents: true});
// f.Replace([]interface{}{obj("a"), 42}, "1"), where 42 has no key
// (MetaNamespaceKeyFunc: "object has no meta"). Replace returns nil: in
// atomic mode it wraps the list in one ReplacedAll delta without keying
// any object (addReplaceToItemsLocked, the_real_fifo.go:295-322), so the
// error surfaces only when the consumer processes the delta
// (processReplacedAllInfo, controller.go:972-997), which then drops the
// whole relist, far from the Replace that should have failed.
package main

import (
	"fmt"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fifo is the part of cache.RealFIFO the sequence uses.
type fifo interface {
	Replace(list []interface{}, resourceVersion string) error
}

func obj(name string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
}

func main() {
	f := newAtomicFIFO() // AtomicEvents, keyed by MetaNamespaceKeyFunc

	// A relist whose second object has no key.
	if err := f.Replace([]interface{}{obj("a"), 42}, "1"); err == nil {
		fmt.Println("DEFECT: atomic Replace accepted (and queued) a relist holding an object without a key (42); no KeyError")
		os.Exit(1)
	} else {
		fmt.Printf("OK: atomic Replace rejected the relist: %v\n", err)
	}
}
