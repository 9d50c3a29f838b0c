package informer

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// Notation of what a handler received, one string per call:
// "init:k" (OnAdd from the initial list), "add:k", "update:k" (old and new
// key equal; "update:old>new" otherwise), "delete:k".
func initEv(k string) string   { return "init:" + k }
func addEv(k string) string    { return "add:" + k }
func updateEv(k string) string { return "update:" + k }
func deleteEv(k string) string { return "delete:" + k }

// eventOf is the notation of a subject event on key k.
func eventOf(kind Kind, k string) string {
	switch kind {
	case Add:
		return addEv(k)
	case Update:
		return updateEv(k)
	case Delete:
		return deleteEv(k)
	}
	return fmt.Sprintf("kind(%d):%s", kind, k)
}

// probe is a Handler that records its calls, detects overlapping calls
// and can be made to block: a call whose index is at or after blockFrom
// waits until the gate is opened. It must be made inside the bubble that
// runs the subject, so that a blocked call is durably blocked.
type probe struct {
	name string

	inCall  atomic.Int32
	overlap atomic.Bool
	waiting atomic.Int32 // calls blocked at the gate (0 or 1 when serial)

	mu        sync.Mutex
	got       []string
	gate      chan struct{} // nil: calls do not block
	blockFrom int
	onCall    func(index int, ev string) // runs at the start of each call, outside mu
}

// MaxCalls bounds the calls a probe takes; no check needs more.
const MaxCalls = 4096

func newProbe(name string) *probe { return &probe{name: name} }

func (p *probe) OnAdd(key string, isInInitialList bool) {
	if isInInitialList {
		p.call(initEv(key))
	} else {
		p.call(addEv(key))
	}
}

func (p *probe) OnUpdate(oldKey, newKey string) {
	if oldKey == newKey {
		p.call(updateEv(newKey))
	} else {
		p.call("update:" + oldKey + ">" + newKey)
	}
}

func (p *probe) OnDelete(key string) { p.call(deleteEv(key)) }

func (p *probe) call(ev string) {
	if p.inCall.Add(1) > 1 {
		p.overlap.Store(true)
	}
	defer p.inCall.Add(-1)
	p.mu.Lock()
	i := len(p.got)
	p.got = append(p.got, ev)
	if i >= MaxCalls {
		// A runaway subject (one re-delivering forever) would keep the
		// bubble busy, so synctest.Wait would never return: park this
		// handler goroutine for good instead, and let the checks see the
		// surplus calls.
		p.mu.Unlock()
		select {}
	}
	var gate chan struct{}
	if p.gate != nil && i >= p.blockFrom {
		gate = p.gate
	}
	hook := p.onCall
	p.mu.Unlock()
	if hook != nil {
		hook(i, ev)
	}
	if gate != nil {
		p.waiting.Add(1)
		<-gate
		p.waiting.Add(-1)
	}
}

// block makes the calls from the next one on wait until unblock.
func (p *probe) block() { p.blockAt(-1) }

// blockAt makes the call with index i (and every later one) wait until
// unblock; i < 0 means the next call.
func (p *probe) blockAt(i int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i < 0 {
		i = len(p.got)
	}
	if p.gate == nil {
		p.gate = make(chan struct{})
	}
	p.blockFrom = i
}

// unblock releases the blocked call and lets every later call through.
func (p *probe) unblock() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gate != nil {
		close(p.gate)
		p.gate = nil
	}
}

// received is a copy of the calls so far, in order.
func (p *probe) received() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.got)
}

// returned is how many calls have returned or are not held at the gate:
// at a quiescent point, every recorded call but a blocked one.
func (p *probe) returned() int {
	p.mu.Lock()
	n := len(p.got)
	p.mu.Unlock()
	return n - int(p.waiting.Load())
}

// expectation is what one handler must receive: its initial list (a set:
// its order is not part of the contract), then the events distributed to
// it, in emit order.
type expectation struct {
	init []string // keys, sorted
	seq  []string // notation
}

// conforms checks got against e: got must start with the initial list (in
// any order, each key once) and continue with a prefix of seq; with exact,
// everything must have arrived. It returns "" or what is wrong.
func (e expectation) conforms(got []string, exact bool) string {
	n := len(e.init)
	seen := map[string]bool{}
	for i, ev := range got {
		if i < n {
			k, ok := cutPrefix(ev, "init:")
			if !ok || !slices.Contains(e.init, k) || seen[k] {
				return fmt.Sprintf("call %d is %s; the initial list is %v (as init adds, each once, before any event)", i, ev, e.init)
			}
			seen[k] = true
			continue
		}
		j := i - n
		if j >= len(e.seq) {
			return fmt.Sprintf("call %d is %s, beyond the %d initial adds and %d events distributed (%v): an invented or repeated call", i, ev, n, len(e.seq), e.seq)
		}
		if ev != e.seq[j] {
			return fmt.Sprintf("call %d is %s, want %s (events in emit order: %v)", i, ev, e.seq[j], e.seq)
		}
	}
	if exact && len(got) != n+len(e.seq) {
		return fmt.Sprintf("received %d of %d notifications: initial list %v then %v", len(got), n+len(e.seq), e.init, e.seq)
	}
	return ""
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return "", false
}

func isClosed(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
