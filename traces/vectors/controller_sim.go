package vectors

import (
	"cmp"
	"slices"
	"time"

	spec "github.com/kverify/kverify/spec/controller"
)

// sim is a single-worker controller as client-go's rate-limited queue runs
// it: a FIFO of ready keys (a key queued at most once, and not while it is
// processed: then it is queued again when its reconcile ends), and one
// waiting entry per key for the delayed adds (the earliest kept).
type sim struct {
	g        *ctlGen
	ready    []string
	dirty    map[string]bool
	busy     string
	waiting  map[string]time.Duration
	failures map[string]int
}

func (g *ctlGen) newSim() *sim {
	return &sim{g: g, dirty: map[string]bool{}, waiting: map[string]time.Duration{}, failures: map[string]int{}}
}

func (s *sim) add(k string) {
	if s.dirty[k] {
		return
	}
	s.dirty[k] = true
	if s.busy != k {
		s.ready = append(s.ready, k)
	}
}

func (s *sim) addAfter(k string, d time.Duration) {
	due := s.g.now + d
	if old, ok := s.waiting[k]; !ok || due < old {
		s.waiting[k] = due
	}
}

// advance lets d pass, the delayed adds due by then joining the queue in
// due order.
func (s *sim) advance(d time.Duration) {
	s.g.now += d
	var due []string
	for k, at := range s.waiting {
		if at <= s.g.now {
			due = append(due, k)
		}
	}
	slices.SortFunc(due, func(a, b string) int {
		if c := cmp.Compare(s.waiting[a], s.waiting[b]); c != 0 {
			return c
		}
		if a < b {
			return -1
		}
		return 1
	})
	for _, k := range due {
		delete(s.waiting, k)
		s.add(k)
	}
}

func (s *sim) startNext() bool {
	if s.busy != "" || len(s.ready) == 0 {
		return false
	}
	k := s.ready[0]
	s.ready = s.ready[1:]
	s.dirty[k] = false
	s.busy = k
	s.g.startRead(k)
	return true
}

func (s *sim) endBusy(o spec.Outcome) {
	k := s.busy
	if k == "" {
		return
	}
	s.busy = ""
	s.g.end(k, o)
	switch {
	case o.Failed:
		s.failures[k]++
		s.addAfter(k, s.g.lim.Delay(s.failures[k]))
	case o.RequeueAfter > 0:
		s.failures[k] = 0
		s.addAfter(k, o.RequeueAfter)
	default:
		s.failures[k] = 0
	}
	if s.dirty[k] {
		s.ready = append(s.ready, k)
	}
}

// next is the due time of the earliest waiting entry.
func (s *sim) next() (time.Duration, bool) {
	var at time.Duration
	found := false
	for _, d := range s.waiting {
		if !found || d < at {
			at, found = d, true
		}
	}
	return at, found
}

// settle runs the worker, every reconcile succeeding, until nothing is
// queued or waiting.
func (s *sim) settle() {
	for i := 0; i < 100 && !s.g.done(); i++ {
		s.endBusy(spec.Outcome{})
		if s.startNext() {
			s.advance(s.g.pick([]time.Duration{0, time.Millisecond, time.Second}))
			continue
		}
		at, ok := s.next()
		if !ok {
			return
		}
		s.advance(at - s.g.now)
	}
}

// run plays n random actions: writes, time passing, reconciles starting
// and ending.
func (s *sim) run(n int) {
	g := s.g
	for range n {
		switch g.r.IntN(6) {
		case 0, 1:
			k := g.key()
			_, live := g.server[k]
			g.write(k, live && g.r.IntN(3) == 0)
			s.add(k)
		case 2:
			s.advance(g.pick([]time.Duration{0, time.Millisecond, time.Second, 10 * time.Second, time.Minute}))
		case 3, 4:
			if !s.startNext() {
				s.endBusy(g.outcome())
			}
		case 5:
			s.endBusy(g.outcome())
		}
	}
}
