package resource

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/kverify/kverify/props/modelserver"
	"github.com/kverify/kverify/spec/apiserver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// source is the ListerWatcher the check gives the subject: the model
// server, each object given the UID of its incarnation (as props/wire
// serves them: an object deleted and created again is another object), the
// version of every complete sync it served recorded (a list's last page, a
// watch-list's end bookmark), and every open stream cut by a restart.
type source struct {
	srv *modelserver.Server

	mu      sync.Mutex
	syncs   []int64 // the versions of the complete syncs served, in order (0: not a version)
	streams []*stream
}

// noWatchList is source for an informer that must not stream its syncs.
type noWatchList struct{ *source }

// IsWatchListSemanticsUnSupported reports true.
func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

// uidOf is the UID of the incarnation of key whose state (or deletion) has
// version rv (props/wire's).
func uidOf(m *apiserver.Server, key string, rv int64) types.UID {
	return types.UID(fmt.Sprintf("kverify-%s-%d", strings.ReplaceAll(key, "/", "-"), m.Created(key, rv)))
}

func metaKey(o *metav1.PartialObjectMetadata) string {
	if o.Namespace == "" {
		return o.Name
	}
	return o.Namespace + "/" + o.Name
}

// stamp sets o's UID (the model's objects are fresh copies per answer).
func (s *source) stamp(o *metav1.PartialObjectMetadata) {
	rv, err := strconv.ParseInt(o.ResourceVersion, 10, 64)
	if err != nil {
		return
	}
	s.srv.Model(func(m *apiserver.Server) { o.UID = uidOf(m, metaKey(o), rv) })
}

func (s *source) served(rv string) {
	n, _ := strconv.ParseInt(rv, 10, 64)
	s.mu.Lock()
	s.syncs = append(s.syncs, n)
	s.mu.Unlock()
}

// firstSync is the lowest version of a complete sync served so far (1 if
// one had no version), and whether any was served.
func (s *source) firstSync() (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.syncs) == 0 {
		return 0, false
	}
	lo := s.syncs[0]
	for _, v := range s.syncs {
		lo = min(lo, v)
	}
	return max(lo, 1), true
}

func (s *source) List(opts metav1.ListOptions) (runtime.Object, error) {
	return s.ListWithContext(context.Background(), opts)
}

func (s *source) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return s.WatchWithContext(context.Background(), opts)
}

func (s *source) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	obj, err := s.srv.ListWithContext(ctx, opts)
	if err != nil {
		return obj, err
	}
	list, ok := obj.(*metav1.PartialObjectMetadataList)
	if !ok {
		return obj, nil
	}
	for i := range list.Items {
		s.stamp(&list.Items[i])
	}
	if list.Continue == "" {
		s.served(list.ResourceVersion)
	}
	return list, nil
}

func (s *source) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := s.srv.WatchWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	st := &stream{src: s, inner: w, out: make(chan watch.Event), cut: make(chan struct{}), done: make(chan struct{})}
	s.mu.Lock()
	s.streams = append(s.streams, st)
	s.mu.Unlock()
	go st.run()
	return st, nil
}

// restart cuts every open stream (the client sees it end, as when a
// server restarts) and compacts the history.
func (s *source) restart() {
	s.mu.Lock()
	streams := s.streams
	s.streams = nil
	s.mu.Unlock()
	for _, st := range streams {
		st.end()
	}
	s.srv.Compact()
}

// stream forwards one model watch, stamping UIDs; cut or stopped, it
// closes its channel.
type stream struct {
	src       *source
	inner     watch.Interface
	out       chan watch.Event
	cut       chan struct{}
	cutOnce   sync.Once
	stopInner sync.Once
	done      chan struct{}
}

func (st *stream) ResultChan() <-chan watch.Event { return st.out }

// end stops forwarding and stops the model's stream.
func (st *stream) end() {
	st.cutOnce.Do(func() { close(st.cut) })
	st.stopInner.Do(st.inner.Stop)
	<-st.done
}

// Stop is the client's stop.
func (st *stream) Stop() { st.end() }

func (st *stream) run() {
	defer close(st.done)
	defer close(st.out)
	in := st.inner.ResultChan()
	for {
		var e watch.Event
		var ok bool
		select {
		case e, ok = <-in:
			if !ok {
				return
			}
		case <-st.cut:
			return
		}
		if m, isMeta := e.Object.(*metav1.PartialObjectMetadata); isMeta && m != nil {
			m = m.DeepCopy()
			switch e.Type {
			case watch.Added, watch.Modified, watch.Deleted:
				st.src.stamp(m)
			case watch.Bookmark:
				if m.Annotations[apiserver.InitialEventsAnnotationKey] == "true" {
					st.src.served(m.ResourceVersion)
				}
			}
			e.Object = m
		}
		select {
		case st.out <- e:
		case <-st.cut:
			return
		}
	}
}
