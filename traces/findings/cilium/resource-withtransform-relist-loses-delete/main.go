// Command resource-withtransform-relist-loses-delete shows that a cilium
// Resource[T] built with resource.WithTransform loses the delete of an
// object that went away while its watch was down: when the informer lists
// again, client-go's DeltaFIFO hands the resource a Deleted delta whose
// object is a cache.DeletedFinalStateUnknown tombstone, WithTransform's
// wrapper fails on it ("expected *T, got cache.DeletedFinalStateUnknown",
// pkg/k8s/resource/resource.go:180-188), the resource's Process returns
// that error before it deletes the object from its store and queues its
// key (resource.go:755-761, 797-806), and client-go's controller drops
// Process errors (k8s.io/client-go@v0.36.4/tools/cache/controller.go:
// 236-261). The object stays in the store and no subscriber ever gets its
// Delete, until the same key is created and deleted again.
//
// Sequence: the server lists default/o1 at version 2; the watch from 2
// ends with 410 Expired; default/o1 is deleted meanwhile, so the relist
// answers an empty list at version 4. A subscriber of the resource
// (resource.New(lc, lw, nil, resource.WithTransform(project)); Events)
// gets Upsert default/o1 and Sync, then nothing: 10s after the relist it
// has no Delete and Store() still holds default/o1.
package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// grace is how long after the relist the delete may take to reach the
// subscriber.
const grace = 10 * time.Second

// server is a ListerWatcher: its first LIST holds default/o1 at version
// 2, its first WATCH ends at once with 410 Expired, and every later LIST
// is empty at version 4 (default/o1 was deleted at 3); later watches stay
// open, quiet. It cannot stream initial events, so the informer lists.
type server struct {
	mu       sync.Mutex
	lists    int
	watches  int
	relisted chan struct{}
}

func object() metav1.PartialObjectMetadata {
	return metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "o1", UID: "uid-o1", ResourceVersion: "2"}}
}

func (s *server) List(opts metav1.ListOptions) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lists++
	if s.lists == 1 {
		return &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "2"}, Items: []metav1.PartialObjectMetadata{object()}}, nil
	}
	if s.lists == 2 {
		close(s.relisted)
	}
	return &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "4"}}, nil
}

func (s *server) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watches++
	w := watch.NewFake()
	if s.watches == 1 {
		go w.Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version: 2 (3)"})
	}
	return w, nil
}

func (s *server) ListWithContext(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return s.List(opts)
}

func (s *server) WatchWithContext(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return s.Watch(opts)
}

// IsWatchListSemanticsUnSupported: the informer lists, then watches.
func (s *server) IsWatchListSemanticsUnSupported() bool { return true }

func main() {
	srv := &server{relisted: make(chan struct{})}
	deleted := make(chan struct{})
	var once sync.Once
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	held, stop, err := start(ctx, srv, func(key string) {
		if key == "default/o1" {
			once.Do(func() { close(deleted) })
		}
	})
	if err != nil {
		fmt.Printf("ERROR: starting: %v\n", err)
		os.Exit(2)
	}
	defer stop()
	select {
	case <-srv.relisted:
	case <-time.After(30 * time.Second):
		fmt.Println("ERROR: the informer did not list again within 30s of the watch's 410")
		os.Exit(2)
	}
	select {
	case <-deleted:
		fmt.Println("OK: the subscriber got the delete of default/o1, which the relist no longer had")
	case <-time.After(grace):
		fmt.Printf("DEFECT: %v after a relist without default/o1 (deleted while the watch was down), the subscriber got no Delete of it; the store still holds it: %v\n", grace, held())
		os.Exit(1)
	}
}
