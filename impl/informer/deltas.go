package informer

import (
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kverify/kverify/impl/delta"
)

// DeltaHandler returns the delta.Handler through which delta.Process feeds
// p, as client-go's sharedIndexInformer feeds its processor
// (shared_informer.go:1083-1117):
//   - OnAdd distributes an Add to every listener, with isInInitialList;
//   - OnUpdate distributes an Update; when old and new both have metadata
//     and the same resource version (a Sync delta, or a relisted object that
//     did not change), as a sync notification, which only the listeners in
//     the resync round get;
//   - OnDelete distributes a Delete (Old is the object, possibly a
//     delta.DeletedFinalStateUnknown) to every listener.
//
// Each call returns once p has handed the notification to every listener
// concerned (Distribute: before p runs, it waits for Run if p has
// listeners); it never waits for a handler. client-go's cache mutation
// detector is not part of it.
func DeltaHandler(p *Processor) delta.Handler { return processorHandler{p} }

// processorHandler is DeltaHandler's delta.Handler.
type processorHandler struct{ p *Processor }

// OnAdd distributes an Add to every listener.
func (h processorHandler) OnAdd(obj any, isInInitialList bool) {
	h.p.Distribute(Notification{Kind: Add, New: obj, InInitialList: isInInitialList}, false)
}

// OnUpdate distributes an Update, as a sync notification if the resource
// version did not change.
func (h processorHandler) OnUpdate(oldObj, newObj any) {
	h.p.Distribute(Notification{Kind: Update, Old: oldObj, New: newObj}, sameResourceVersion(oldObj, newObj))
}

// sameResourceVersion reports whether a and b both have metadata and the
// same resource version: an update that is a resync.
func sameResourceVersion(a, b any) bool {
	if delta.IsNil(a) || delta.IsNil(b) {
		return false // meta.Accessor takes a nil *T whose getters panic
	}
	am, err := meta.Accessor(a)
	if err != nil {
		return false
	}
	bm, err := meta.Accessor(b)
	if err != nil {
		return false
	}
	return am.GetResourceVersion() == bm.GetResourceVersion()
}

// OnDelete distributes a Delete to every listener.
func (h processorHandler) OnDelete(obj any) {
	h.p.Distribute(Notification{Kind: Delete, Old: obj}, false)
}
