package modelserver

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/kverify/kverify/spec/apiserver"
	specrefl "github.com/kverify/kverify/spec/reflector"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Server serves the model API server (spec/apiserver) to reflectors under
// test through client-go's ListerWatcher method set. The test writes to it
// (Create, Update, Delete, Progress, Bookmark, Compact); every open watch
// stream has a goroutine that delivers the model's events, so a Server is
// used inside one synctest bubble, where the model's lack of a clock is
// filled by the bubble's fake time (TimeoutSeconds, Fault.Slow). Close it
// before the bubble ends.
type Server struct {
	mu       sync.Mutex
	m        *apiserver.Server
	cfg      apiserver.Config
	faults   []Fault
	next     int
	changed  chan struct{}
	streams  []*stream
	times    []time.Time // of each recorded call
	syncs    int
	closed   bool
	requests int
	rules    *shapes
	relist   *relistRules
	// answers counts the kinds of answers given (Answers); served is the
	// highest version a list or a watch-list's snapshot was served at.
	answers map[string]int
	served  int64
	found   []string // violations seen while serving
	// released is closed by Release, gone by Close: they end every hold
	// (Fault.Hold, Fault.HoldStop), which waits on them and not on mu, so
	// that a held call is durably blocked in a synctest bubble. held counts
	// the calls waiting now, holds every call that was held.
	released, gone chan struct{}
	held, holds    int
}

// NewServer returns a server with the given configuration and fault
// schedule.
func NewServer(cfg apiserver.Config, faults []Fault) *Server {
	return &Server{m: apiserver.New(cfg), cfg: cfg, faults: slices.Clone(faults), changed: make(chan struct{}),
		released: make(chan struct{}), gone: make(chan struct{})}
}

// Release lets every held call go on (Fault.Hold, Fault.HoldStop), and
// every later one at once. It may be called more than once.
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.released:
	default:
		close(s.released)
	}
}

// Held is the number of calls held now (waiting for Release) and the
// number held so far.
func (s *Server) Held() (now, ever int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held, s.holds
}

// waitLocked, called with s.mu held, waits without it until Release,
// Close or the end of ctx (context.Background for Stop, which takes
// none) and takes it again. It returns ctx's error if ctx ended first, ErrServerGone if the
// server was closed first.
func (s *Server) waitLocked(ctx context.Context) error {
	s.held++
	s.holds++
	done := ctx.Done() // nil for context.Background: no end but Release or Close
	released, gone := s.released, s.gone
	s.mu.Unlock()
	var err error
	select {
	case <-released:
	case <-gone:
		err = errServerGone
	case <-done:
		err = ctx.Err()
	}
	s.mu.Lock()
	s.held--
	return err
}

// errServerGone ends a call held when the server was closed.
var errServerGone = apiserver.ConnectionRefused()

// Model runs f on the model under the server's lock (for oracle reads).
func (s *Server) Model(f func(m *apiserver.Server)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s.m)
}

// Current returns the server's current version and state (oracle access).
func (s *Server) Current() (int64, []apiserver.Object) {
	s.mu.Lock()
	defer s.mu.Unlock()
	objs, _ := s.m.Snapshot(s.m.RV())
	return s.m.RV(), objs
}

// write applies a write to the model and wakes the streams.
func (s *Server) write(f func(m *apiserver.Server) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := f(s.m); err != nil {
		return err
	}
	close(s.changed)
	s.changed = make(chan struct{})
	return nil
}

// Create, Update and Delete write the object at key.
func (s *Server) Create(key string) error {
	return s.write(func(m *apiserver.Server) error { _, err := m.Create(key); return err })
}

// Update writes a new state of the object at key.
func (s *Server) Update(key string) error {
	return s.write(func(m *apiserver.Server) error { _, err := m.Update(key); return err })
}

// Delete deletes the object at key.
func (s *Server) Delete(key string) error {
	return s.write(func(m *apiserver.Server) error { _, err := m.Delete(key); return err })
}

// Progress advances the version without an event.
func (s *Server) Progress() {
	_ = s.write(func(m *apiserver.Server) error { m.Progress(); return nil })
}

// Bookmark makes a bookmark due on every open watch that allows them.
func (s *Server) Bookmark() {
	_ = s.write(func(m *apiserver.Server) error { m.Bookmark(); return nil })
}

// Compact compacts the history up to the current version.
func (s *Server) Compact() {
	_ = s.write(func(m *apiserver.Server) error { return m.Compact(m.RV()) })
}

// Syncs is the number of completed syncs the server served: lists
// answered in full (the last page of a paged list) and watch-list streams
// that delivered a well-formed initial-events-end bookmark.
func (s *Server) Syncs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.syncs
}

// Requests is the number of List and Watch requests so far.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Calls returns every recorded call with the fake time it was made at.
func (s *Server) Calls() ([]apiserver.Call, []time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m.Calls(), slices.Clone(s.times)
}

// OpenStreams is the number of watch streams whose goroutine still runs.
func (s *Server) OpenStreams() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, st := range s.streams {
		select {
		case <-st.done:
		default:
			n++
		}
	}
	return n
}

// Close ends every stream's goroutine (without recording a Stop) and waits
// for them; later watches fail.
func (s *Server) Close() {
	s.mu.Lock()
	if !s.closed {
		close(s.gone)
	}
	s.closed = true
	streams := slices.Clone(s.streams)
	s.mu.Unlock()
	for _, st := range streams {
		st.kill()
		<-st.done
	}
}

// Outage applies writes to the model while every open stream is ended
// (closed, without their events) and the next request gets fault: the
// client sees its watch close, then fault on its next request. It fails
// if faults of the schedule are still to be served.
func (s *Server) Outage(writes func(m *apiserver.Server) error, fault Fault) error {
	s.mu.Lock()
	if s.next != len(s.faults) {
		s.mu.Unlock()
		return fmt.Errorf("outage: %d faults still scheduled", len(s.faults)-s.next)
	}
	if err := writes(s.m); err != nil {
		s.mu.Unlock()
		return err
	}
	s.faults = append(s.faults, fault)
	streams := slices.Clone(s.streams)
	for _, st := range streams {
		st.kill()
	}
	s.mu.Unlock()
	for _, st := range streams {
		<-st.done
	}
	s.mu.Lock()
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	return nil
}

func (s *Server) takeLocked() Fault {
	s.requests++
	if s.next < len(s.faults) {
		s.next++
		return s.faults[s.next-1]
	}
	return Fault{}
}

func (s *Server) recordTimesLocked() {
	for n := len(s.m.Calls()); len(s.times) < n; {
		s.times = append(s.times, time.Now())
	}
}

// tooLarge is the status of a request for a version ahead of the server.
func tooLarge(rv int64) *metav1.Status {
	st := apiserver.TooLarge(rv+1, rv).ErrStatus
	return &st
}

// staleAt picks the snapshot a stale read is served from: Stale versions
// back, not below lo (0: the read may not be stale).
func (s *Server) staleAt(f Fault, lo int64) int64 {
	if f.Stale <= 0 || lo <= 0 || lo > s.m.RV() {
		return 0
	}
	return max(lo, s.m.RV()-f.Stale)
}

// ListWithContext serves a LIST; a held one (Fault.Hold) returns ctx's
// error if ctx ends before it is released.
func (s *Server) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.recordTimesLocked()
	f := s.takeLocked()
	if f.Hold {
		if err := s.waitLocked(ctx); err != nil {
			return nil, err
		}
	}
	c := apiserver.ListChoice{IgnoreLimit: f.IgnoreLimit, Refuse: f.Refuse, Reject: f.reject(f.Reject)}
	if f.TooLarge {
		c.Reject = tooLarge(s.m.RV())
	}
	if opts.Continue == "" {
		switch rv := opts.ResourceVersion; {
		case rv == "0":
			c.At = s.staleAt(f, 1)
		case rv != "" && opts.Limit == 0 && opts.ResourceVersionMatch == "":
			if n, err := strconv.ParseInt(rv, 10, 64); err == nil {
				c.At = s.staleAt(f, n)
			}
		}
	}
	s.checkOpenLocked("List", opts)
	if s.rules != nil {
		s.rules.list(opts)
	}
	if s.relist != nil {
		s.relist.request(specrefl.List, opts)
	}
	list, err := s.m.List(opts, c)
	s.reachListLocked(opts, c, f, list, err)
	if s.relist != nil {
		cont := ""
		if list != nil {
			cont = list.Continue
		}
		s.relist.listed(cont, err)
	}
	if s.rules != nil {
		cont := ""
		if list != nil {
			cont = list.Continue
		}
		s.rules.listed(opts, cont, err)
	}
	if err != nil {
		return nil, err
	}
	if list.Continue == "" {
		s.syncs++
	}
	switch {
	case f.BlankRV:
		list.ResourceVersion = ""
	case f.ZeroRV:
		list.ResourceVersion = "0"
	}
	return list, nil
}

// WatchWithContext serves a WATCH: the stream's goroutine delivers the
// model's events until the stream ends, is stopped, or times out. A held
// one (Fault.Hold) returns ctx's error if ctx ends before it is released.
func (s *Server) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.recordTimesLocked()
	f := s.takeLocked()
	if f.Hold {
		if err := s.waitLocked(ctx); err != nil {
			return nil, err
		}
	}
	if s.closed {
		return nil, apiserver.ConnectionRefused()
	}
	c := apiserver.WatchChoice{Refuse: f.Refuse, Reject: f.reject(f.Reject), InitialBookmarks: f.InitialBookmarks,
		Faults: apiserver.Faults{DropEndBookmark: f.DropEndBookmark, Malform: f.Malform}}
	if f.TooLarge {
		c.Reject = tooLarge(s.m.RV())
	}
	if f.Ends {
		c.Faults.End = &apiserver.End{After: f.EndAfter, Status: f.reject(f.EndStatus), AfterSync: f.EndAfterSync}
	}
	if f.Reverse {
		objs, _ := s.m.Snapshot(s.m.RV())
		for i := len(objs) - 1; i >= 0; i-- {
			c.Order = append(c.Order, objs[i].Key)
		}
	}
	sie := opts.SendInitialEvents
	switch rv := opts.ResourceVersion; {
	case rv == "0":
		c.At = s.staleAt(f, 1)
	case rv == "" && sie == nil && s.cfg.NoWatchList:
		c.At = s.staleAt(f, 1)
	case rv != "" && sie != nil && *sie:
		if n, err := strconv.ParseInt(rv, 10, 64); err == nil && n <= s.m.RV() {
			c.At = s.staleAt(f, n)
		}
	}
	s.checkOpenLocked("Watch", opts)
	if s.rules != nil {
		s.rules.watch(opts)
	}
	if s.relist != nil {
		req := specrefl.Watch
		if sie != nil && *sie {
			req = specrefl.WatchList
		}
		s.relist.request(req, opts)
	}
	w, err := s.m.Watch(opts, c)
	if s.rules != nil {
		s.rules.watched(opts, err)
	}
	if err != nil {
		if s.relist != nil {
			s.relist.watched(nil, err)
		}
		s.reachLocked(requestName(sie != nil && *sie) + ": " + answer(err))
		return nil, err
	}
	if sie != nil && *sie {
		if c.At != 0 {
			s.reachLocked("watch-list from a version served from a newer snapshot")
		}
		at := c.At
		if at == 0 {
			at = s.m.RV()
		}
		s.served = max(s.served, at)
	}
	st := &stream{srv: s, w: w, f: f, ch: make(chan watch.Event), stop: make(chan struct{}), done: make(chan struct{}),
		watchList: sie != nil && *sie, from: opts.ResourceVersion, openedAt: time.Now()}
	if s.relist != nil {
		s.relist.watched(st, nil)
	}
	if opts.TimeoutSeconds != nil && !f.NoTimeout {
		st.timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	s.streams = append(s.streams, st)
	go st.run()
	return st, nil
}

// checkOpenLocked: a reflector makes no request while a stream it was
// given is open (not stopped by it).
func (s *Server) checkOpenLocked(kind string, opts metav1.ListOptions) {
	for _, st := range s.streams {
		if !st.stopped {
			s.found = append(s.found, fmt.Sprintf("%s %s while watch %d is open (not stopped)", kind, Describe(opts), st.w.ID()))
			return
		}
	}
}

// List and Watch are the context-free forms of client-go's ListerWatcher.
func (s *Server) List(opts metav1.ListOptions) (runtime.Object, error) {
	return s.ListWithContext(context.Background(), opts)
}

// Watch is WatchWithContext without a context.
func (s *Server) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return s.WatchWithContext(context.Background(), opts)
}

// NoWatchList wraps s for a client that cannot stream initial events: it
// implements client-go's IsWatchListSemanticsUnSupported.
type NoWatchList struct{ *Server }

// IsWatchListSemanticsUnSupported reports true.
func (NoWatchList) IsWatchListSemanticsUnSupported() bool { return true }
