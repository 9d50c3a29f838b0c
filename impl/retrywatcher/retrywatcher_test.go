package retrywatcher

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// server hands out one fake stream per watch call and records the calls.
type server struct {
	calls   []metav1.ListOptions
	at      []time.Time
	streams chan *watch.FakeWatcher
	refuse  error
}

func newServer() *server { return &server{streams: make(chan *watch.FakeWatcher, 16)} }

func (s *server) Watch(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
	s.calls, s.at = append(s.calls, o), append(s.at, time.Now())
	if s.refuse != nil {
		return nil, s.refuse
	}
	w := watch.NewFake()
	s.streams <- w
	return w, nil
}

func obj(rv string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: rv}}
}

func TestValidation(t *testing.T) {
	for _, c := range []Config{{InitialRV: "", Watcher: newServer()}, {InitialRV: "0", Watcher: newServer()}, {InitialRV: "5"}, {InitialRV: "5", Watcher: newServer(), RestartPeriod: -1}} {
		if _, err := New(context.Background(), c); err == nil {
			t.Errorf("New(%+v) took it", c)
		}
	}
}

func TestResumesFromBookmarkAfterClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newServer()
		rw, err := New(t.Context(), Config{InitialRV: "5", Watcher: s})
		if err != nil {
			t.Fatal(err)
		}
		defer rw.Stop()
		w := <-s.streams
		go func() {
			w.Add(obj("6"))
			w.Action(watch.Bookmark, obj("9"))
			w.Stop() // the stream closes
		}()
		if ev := <-rw.ResultChan(); ev.Type != watch.Added || ev.Object.(*metav1.PartialObjectMetadata).ResourceVersion != "6" {
			t.Fatalf("first event %+v", ev)
		}
		start := time.Now()
		<-s.streams // the restart
		if got := time.Since(start); got != DefaultRestartPeriod {
			t.Errorf("restarted after %v, want %v", got, DefaultRestartPeriod)
		}
		if s.calls[1].ResourceVersion != "9" || !s.calls[1].AllowWatchBookmarks {
			t.Errorf("second watch %+v, want from the bookmark's 9 with bookmarks", s.calls[1])
		}
	})
}

func TestGoneInTheStreamEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newServer()
		rw, _ := New(t.Context(), Config{InitialRV: "5", Watcher: s})
		w := <-s.streams
		gone := apierrors.NewResourceExpired("too old").ErrStatus
		go w.Error(&gone)
		if ev := <-rw.ResultChan(); ev.Type != watch.Error {
			t.Fatalf("got %+v, want the 410", ev)
		}
		if _, ok := <-rw.ResultChan(); ok {
			t.Fatal("an event after the 410")
		}
		<-rw.Done()
		rw.Stop()
		rw.Stop()
	})
}

func TestForbiddenEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newServer()
		s.refuse = apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("no"))
		rw, _ := New(t.Context(), Config{InitialRV: "5", Watcher: s})
		ev := <-rw.ResultChan()
		if st, ok := ev.Object.(*metav1.Status); ev.Type != watch.Error || !ok || st.Code != 403 {
			t.Fatalf("got %+v, want a 403 Error event", ev)
		}
		<-rw.Done()
	})
}

func TestRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newServer()
		rw, _ := New(t.Context(), Config{InitialRV: "5", Watcher: s})
		defer rw.Stop()
		w := <-s.streams
		st := apierrors.NewTimeoutError("busy", 3).ErrStatus // 504, retry after 3s
		start := time.Now()
		go w.Error(&st)
		<-s.streams
		if got := time.Since(start); got != 3*time.Second {
			t.Errorf("restarted after %v, want the server's 3s", got)
		}
	})
}

func TestStopWhileSending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newServer()
		rw, _ := New(t.Context(), Config{InitialRV: "5", Watcher: s})
		w := <-s.streams
		go w.Add(obj("6"))
		synctest.Wait() // the watcher waits to hand the event over
		rw.Stop()
		<-rw.Done()
	})
}
