package informer

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
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
	at        []time.Time   // when each call started (fake time in a bubble)
	gate      chan struct{} // nil: calls do not block
	blockFrom int
	onCall    func(index int, ev string) // runs at the start of each call, outside mu
}

// maxCalls bounds the calls a probe takes; no check needs more (the
// delivery machine's largest bursts and initial lists stay well below).
const maxCalls = 1 << 16

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
	p.at = append(p.at, time.Now())
	if i >= maxCalls {
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

// receivedFrom is a copy of the calls from index i on.
func (p *probe) receivedFrom(i int) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i >= len(p.got) {
		return nil
	}
	return slices.Clone(p.got[i:])
}

// receivedAt is a copy of the calls so far and the time each one started.
func (p *probe) receivedAt() ([]string, []time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.got), slices.Clone(p.at)
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
	var c cursor
	return c.advance(e, got, exact)
}

// cursor is how far a handler's calls have been found to conform to its
// expectation. Calls and expectation only ever grow, so a later check
// starts where the last one ended: checking stays linear in the calls even
// when a machine checks after every step.
type cursor struct {
	n    int             // calls checked
	seen map[string]bool // initial-list keys among them
}

// advance checks more, the calls from index c.n on, against e (see
// conforms), and moves past them.
func (c *cursor) advance(e expectation, more []string, exact bool) string {
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	n := len(e.init)
	for _, ev := range more {
		i := c.n
		if i < n {
			k, ok := cutPrefix(ev, "init:")
			if ok {
				_, ok = slices.BinarySearch(e.init, k) // init is sorted
			}
			if !ok || c.seen[k] {
				return fmt.Sprintf("call %d is %s; the initial list is %s (as init adds, each once, before any event)", i, ev, window(e.init, -1))
			}
			c.seen[k] = true
			c.n++
			continue
		}
		j := i - n
		if j >= len(e.seq) {
			return fmt.Sprintf("call %d is %s, beyond the %d initial adds and %d events distributed (%s): an invented or repeated call", i, ev, n, len(e.seq), window(e.seq, len(e.seq)))
		}
		if ev != e.seq[j] {
			return fmt.Sprintf("call %d is %s, want %s (events in emit order: %s)", i, ev, e.seq[j], window(e.seq, j))
		}
		c.n++
	}
	if exact && c.n != n+len(e.seq) {
		return fmt.Sprintf("received %d of %d notifications: initial list %s then %s", c.n, n+len(e.seq), window(e.init, -1), window(e.seq, c.n-n))
	}
	return ""
}

// window shows a long list around index at (its start if at < 0), so that
// a report about thousands of notifications stays readable.
func window(xs []string, at int) string {
	const r = 8
	if len(xs) <= 4*r {
		return fmt.Sprint(xs)
	}
	at = max(0, min(at, len(xs)))
	lo, hi := max(0, at-r), min(len(xs), at+r)
	out := fmt.Sprint(xs[lo:hi])
	if lo > 0 {
		out = fmt.Sprintf("[... %d before] ", lo) + out
	}
	if hi < len(xs) {
		out += fmt.Sprintf(" [... %d after]", len(xs)-hi)
	}
	return fmt.Sprintf("%d notifications: %s", len(xs), out)
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
