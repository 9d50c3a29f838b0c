// Command informer-panicking-initial-add-never-syncs shows that a handler
// whose OnAdd panics for an object of the initial list never syncs. A
// registration's HasSynced "reports if both the parent has synced and all
// pre-sync events have been delivered" (k8s.io/client-go@v0.37.2/tools/
// cache/shared_informer.go:269-270), and with utilruntime.ReallyCrash false
// a panicking notification is contained: "the offending item will be
// skipped!, and after a short delay (one second) the next notification will
// be attempted" (shared_informer.go:1480-1485). But the listener counts an
// initial-list add as delivered only after OnAdd returns
// (syncTracker.Finished, shared_informer.go:1509-1512), so a panicking one
// is never counted. Sequence: utilruntime.ReallyCrash = false; a
// ListerWatcher listing one object "boom"; informer :=
// cache.NewSharedIndexInformer(lw, &metav1.PartialObjectMetadata{}, 0,
// cache.Indexers{}); reg, _ := informer.AddEventHandler(handler whose OnAdd
// panics for "boom"); go informer.Run(stop). informer.HasSynced() becomes
// true at once, reg.HasSynced() stays false for good (2s here, well past the
// documented one-second pause), so a controller that waits for its
// handler's sync (cache.WaitForCacheSync(stop, reg.HasSynced)) never starts.
// Reported as kubernetes/kubernetes#129024.
package main

import (
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// informer is the part of cache.SharedIndexInformer the sequence uses.
type informer interface {
	AddEventHandler(h cache.ResourceEventHandler) (registration, error)
	HasSynced() bool
	Run(stopCh <-chan struct{})
}

// registration is cache.ResourceEventHandlerRegistration.
type registration interface {
	HasSynced() bool
}

func main() {
	// Contain handler panics instead of crashing the process.
	utilruntime.ReallyCrash = false

	inf := newInformer(&fakeLW{})
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) {
			if obj.(*metav1.PartialObjectMetadata).Name == "boom" {
				panic("handler bug on boom")
			}
		},
	})
	if err != nil {
		fmt.Printf("DEFECT: setup: AddEventHandler: %v\n", err)
		os.Exit(1)
	}
	stop := make(chan struct{})
	defer close(stop)
	go inf.Run(stop)

	if !waitFor(2*time.Second, inf.HasSynced) {
		fmt.Println("DEFECT: setup: the informer did not sync its one-object list within 2s")
		os.Exit(1)
	}
	if !waitFor(2*time.Second, reg.HasSynced) {
		fmt.Println("DEFECT: the informer has synced, but the registration whose initial OnAdd panicked still has HasSynced() false 2s later (it never syncs)")
		os.Exit(1)
	}
	fmt.Println("OK: the handler whose initial OnAdd panicked was contained and its registration synced")
}

// fakeLW is a cache.ListerWatcher listing one object, "boom", at resource
// version "1", and whose watch stays open without events.
type fakeLW struct{}

func (*fakeLW) List(metav1.ListOptions) (runtime.Object, error) {
	return &metav1.PartialObjectMetadataList{
		ListMeta: metav1.ListMeta{ResourceVersion: "1"},
		Items: []metav1.PartialObjectMetadata{{ObjectMeta: metav1.ObjectMeta{
			Namespace: "default", Name: "boom", ResourceVersion: "1"}}},
	}, nil
}

func (*fakeLW) Watch(metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil }

// IsWatchListSemanticsUnSupported tells client-go (v0.35 and later, where
// streaming the initial list with a watch is on by default) that this
// ListerWatcher serves a plain LIST, as its unit tests do.
func (*fakeLW) IsWatchListSemanticsUnSupported() bool { return true }

// waitFor polls cond for up to d of real time.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}
