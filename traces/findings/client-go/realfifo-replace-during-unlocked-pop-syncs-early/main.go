// Command realfifo-replace-during-unlocked-pop-syncs-early shows that a
// RealFIFO with UnlockWhileProcessing reports synced while its initial
// population is still queued, when its first Replace lands while a delta
// queued before it is being processed. Pop counts the initial population
// down in a defer "so concurrent calls to hasSynced will not incorrectly
// return true while processing is still happening"
// (k8s.io/client-go@v0.37.2/tools/cache/the_real_fifo.go:410-418), and
// with UnlockWhileProcessing it releases the lock while the process func
// runs (:454-466). Sequence: f :=
// cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{AtomicEvents: true,
// UnlockWhileProcessing: true}); f.Resync() (one SyncAll, the FIFO not yet
// populated); f.Pop(process) whose process func calls
// f.Replace([]interface{}{obj("a")}, "1"). That first Replace sets the
// initial population to the one ReplacedAll it queued (:624-628); when the
// SyncAll's process func returns, the deferred count-down takes it to 0,
// although the SyncAll was popped before the Replace and is not one of
// its deltas. HasSynced is then true with the ReplacedAll unprocessed.
package main

import (
	"fmt"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fifo is the part of cache.RealFIFO the sequence uses; pop is its Pop
// (whose process func type is named differently by each subject).
type fifo interface {
	Resync() error
	Replace(list []interface{}, resourceVersion string) error
	HasSynced() bool
}

func obj(name string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: "1"}}
}

func main() {
	f, pop := newUnlockedFIFO() // AtomicEvents and UnlockWhileProcessing, as the informer's

	// A resync before the first relist: one SyncAll, the FIFO unpopulated.
	if err := f.Resync(); err != nil {
		fmt.Printf("ERROR: Resync: %v\n", err)
		os.Exit(2)
	}
	// The first relist lands while the SyncAll is processed (unlocked).
	var replaceErr error
	if err := pop(func(any, bool) error {
		replaceErr = f.Replace([]interface{}{obj("a")}, "1")
		return nil
	}); err != nil || replaceErr != nil {
		fmt.Printf("ERROR: Pop: %v; Replace: %v\n", err, replaceErr)
		os.Exit(2)
	}
	// The relist's ReplacedAll is still queued: not synced yet.
	if f.HasSynced() {
		fmt.Println("DEFECT: HasSynced is true while the first relist's ReplacedAll is still queued: the SyncAll popped before that Replace was counted down from its initial population")
		os.Exit(1)
	}
	fmt.Println("OK: HasSynced is false until the first relist's ReplacedAll is processed")
}
