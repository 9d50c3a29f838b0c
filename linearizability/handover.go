package linearizability

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"

	"github.com/anishathalye/porcupine"
	wq "github.com/kverify/kverify/spec/workqueue"
)

// A queue whose Add hands the item over to a goroutine of its own
// (Profile.AddHandedOver: knative's two-lane queue) changes state between
// calls as well as inside them, so one call can lead to several states.
// Its porcupine model is the power set of the spec's TwoLane: a state is
// every TwoLane the queue may be in, closed under its goroutines' steps
// (TwoLane.Internal), and a call is legal when it is legal in at least one
// of them. A history is linearizable against it when some order of the
// calls, each at a point inside its interval, with the goroutines' steps
// anywhere in between, is a run of the three client-go queues.
//
// The sets hold a hundred states and more, and a search takes thousands
// of steps, each closing the set again: on the spec's TwoLane (maps,
// string keys) one whole-queue search took minutes. So the porcupine
// states are a compact copy of TwoLane (lane, twoLane below: bit sets and
// a fixed array over interned keys, comparable values), and
// TestHandoverMirrorsSpec runs both on the same random calls and internal
// steps and requires the same states and results at every step.

// maxLaneKeys bounds the distinct keys of one history under this model
// (bit sets of 64). The workloads use six.
const maxLaneKeys = 64

// lane is a client-go queue (spec Model, ClientGo profile) over interned
// keys: the FIFO q[:n], the dirty and processing sets, shutdown.
type lane struct {
	q           [maxLaneKeys]uint8
	n           uint8
	dirty, proc uint64
	shut        bool
}

func (l *lane) add(k uint8) {
	if l.shut || l.dirty&(1<<k) != 0 {
		return
	}
	l.dirty |= 1 << k
	if l.proc&(1<<k) == 0 {
		l.q[l.n] = k
		l.n++
	}
}

// get is enabled when l.n > 0 || l.shut; ok false means shutdown.
func (l *lane) get() (k uint8, ok bool) {
	if l.n == 0 {
		return 0, false
	}
	k = l.q[0]
	copy(l.q[:l.n-1], l.q[1:l.n])
	l.n--
	l.q[l.n] = 0
	l.proc |= 1 << k
	l.dirty &^= 1 << k
	return k, true
}

func (l *lane) done(k uint8) {
	if l.proc&(1<<k) == 0 {
		return
	}
	l.proc &^= 1 << k
	if l.dirty&(1<<k) != 0 {
		l.q[l.n] = k
		l.n++
	}
}

// twoLane is spec TwoLane over interned keys (see there for the steps).
type twoLane struct {
	fast, cons lane
	mover      uint8 // 0 idle, 1 holding, 2 sending, 3 stopped (spec moverState)
	item       uint8
	busy       bool // the consumer goroutine holds adding (spec TwoLane.adding)
	adding     uint8
}

const (
	mIdle = iota
	mHolding
	mSending
	mStopped
)

// internal is spec TwoLane.Internal: the successors, at most two (the
// mover's step and the consumer goroutine's), appended to out.
func (t twoLane) internal(out []twoLane) []twoLane {
	switch t.mover {
	case mIdle:
		if t.fast.n > 0 || t.fast.shut {
			n := t
			if k, ok := n.fast.get(); ok {
				n.mover, n.item = mHolding, k
			} else {
				n.mover = mStopped
			}
			out = append(out, n)
		}
	case mHolding:
		n := t
		n.fast.done(t.item)
		n.mover = mSending
		out = append(out, n)
	case mSending:
		if !t.busy {
			n := t
			n.busy, n.adding = true, t.item
			n.mover, n.item = mIdle, 0
			out = append(out, n)
		}
	}
	if t.busy {
		n := t
		n.cons.add(t.adding)
		n.busy, n.adding = false, 0
		out = append(out, n)
	} else if t.mover == mStopped && !t.cons.shut {
		n := t
		n.cons.shut = true
		out = append(out, n)
	}
	return out
}

// lanes is a porcupine state of the handed-over model: the possible
// twoLanes, closed under internal steps, sorted.
type lanes struct {
	ts   []twoLane
	hash uint64
}

// closeLanes closes ts under internal steps and sorts it.
func closeLanes(ts []twoLane) lanes {
	seen := make(map[twoLane]bool, 2*len(ts))
	var out, todo, next []twoLane
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out, todo = append(out, t), append(todo, t)
		}
	}
	for len(todo) > 0 {
		t := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		next = t.internal(next[:0])
		for _, n := range next {
			if !seen[n] {
				seen[n] = true
				out, todo = append(out, n), append(todo, n)
			}
		}
	}
	slices.SortFunc(out, compareLanes)
	h := fnv.New64a()
	var b []byte
	for _, t := range out {
		b = t.fast.appendTo(t.cons.appendTo(b[:0]))
		b = append(b, t.mover, t.item, t.adding)
		if t.busy {
			b = append(b, 1)
		}
		h.Write(append(b, 0xff))
	}
	return lanes{ts: out, hash: h.Sum64()}
}

func (l lane) appendTo(b []byte) []byte {
	b = append(b, l.n)
	b = append(b, l.q[:l.n]...)
	b = binary.LittleEndian.AppendUint64(b, l.dirty)
	b = binary.LittleEndian.AppendUint64(b, l.proc)
	if l.shut {
		return append(b, 1)
	}
	return append(b, 0)
}

func compareLanes(a, b twoLane) int {
	if c := compareLane(a.fast, b.fast); c != 0 {
		return c
	}
	if c := compareLane(a.cons, b.cons); c != 0 {
		return c
	}
	switch {
	case a.mover != b.mover:
		return int(a.mover) - int(b.mover)
	case a.item != b.item:
		return int(a.item) - int(b.item)
	case a.busy != b.busy:
		if a.busy {
			return 1
		}
		return -1
	}
	return int(a.adding) - int(b.adding)
}

func compareLane(a, b lane) int {
	switch {
	case a.n != b.n:
		return int(a.n) - int(b.n)
	case a.dirty != b.dirty:
		return cmpU64(a.dirty, b.dirty)
	case a.proc != b.proc:
		return cmpU64(a.proc, b.proc)
	case a.shut != b.shut:
		if a.shut {
			return 1
		}
		return -1
	}
	return slices.Compare(a.q[:a.n], b.q[:b.n])
}

func cmpU64(a, b uint64) int {
	if a < b {
		return -1
	}
	return 1
}

// interner numbers a history's keys, for one model value (porcupine may
// step partitions in parallel).
type interner struct {
	mu    sync.Mutex
	ids   map[string]uint8
	names []string
}

func (in *interner) id(k string) uint8 {
	in.mu.Lock()
	defer in.mu.Unlock()
	if id, ok := in.ids[k]; ok {
		return id
	}
	if len(in.names) == maxLaneKeys {
		panic(fmt.Sprintf("linearizability: the handed-over model takes at most %d distinct keys in one history", maxLaneKeys))
	}
	if in.ids == nil {
		in.ids = map[string]uint8{}
	}
	id := uint8(len(in.names))
	in.ids[k] = id
	in.names = append(in.names, k)
	return id
}

func (in *interner) name(id uint8) string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.names[id]
}

// step is the handed-over model's step: every possible state in which
// the call is enabled and returns what it returned leads to a successor;
// the call is illegal when none does.
//
// Len's result is not judged: the two-lane queue's Len is three reads
// under three locks (two_lane_queue.go:150-152), with the goroutines
// moving items and other calls between them, so it takes effect at no
// single point, and its own comment says the sum is not the number of
// items ("NB: actual _number_ of unique object might be less than this
// sum"). What Len returns is judged by the model checks, where the queue
// settles first (the lenCounts declaration).
func (in *interner) step(st, input, output any) (bool, any) {
	s, i, o := st.(lanes), input.(Input), output.(Output)
	var next []twoLane
	switch i.Op {
	case wq.Len:
		return true, st
	case wq.Add, wq.ShutDown:
		k := uint8(0)
		if i.Op == wq.Add {
			k = in.id(i.Key)
		}
		for _, t := range s.ts {
			if i.Op == wq.Add {
				t.fast.add(k)
			} else {
				t.fast.shut = true
			}
			next = append(next, t)
		}
	case wq.Done:
		k := in.id(i.Key)
		for _, t := range s.ts {
			t.cons.done(k)
			next = append(next, t)
		}
	case wq.Get:
		var want uint8
		if !o.Shutdown {
			want = in.id(o.Key)
		}
		for _, t := range s.ts {
			if t.cons.n == 0 && !t.cons.shut {
				continue // Get would block
			}
			k, ok := t.cons.get()
			if o.Shutdown && (ok || o.Key != "") || !o.Shutdown && (!ok || k != want) {
				continue
			}
			next = append(next, t)
		}
	default:
		return false, st // unsupported; see Input
	}
	if len(next) == 0 {
		return false, st
	}
	return true, closeLanes(next)
}

func (in *interner) describeLane(l lane) string {
	var q, d, p []string
	for _, k := range l.q[:l.n] {
		q = append(q, in.name(k))
	}
	for k := range uint8(maxLaneKeys) {
		if l.dirty&(1<<k) != 0 {
			d = append(d, in.name(k))
		}
		if l.proc&(1<<k) != 0 {
			p = append(p, in.name(k))
		}
	}
	s := fmt.Sprintf("q=%s d=%s p=%s", strings.Join(q, ","), strings.Join(d, ","), strings.Join(p, ","))
	if l.shut {
		s += " shut"
	}
	return s
}

func (in *interner) describe(st any) string {
	var out []string
	for _, t := range st.(lanes).ts {
		s := fmt.Sprintf("{fast{%s} mover=%s", in.describeLane(t.fast), [...]string{"idle", "holding", "sending", "stopped"}[t.mover])
		if t.mover == mHolding || t.mover == mSending {
			s += ":" + in.name(t.item)
		}
		if t.busy {
			s += " adding=" + in.name(t.adding)
		}
		out = append(out, s+" consumer{"+in.describeLane(t.cons)+"}}")
	}
	return "one of " + strings.Join(out, " | ")
}

// handedOverModel is QueueModelFor a profile with AddHandedOver. Each
// call makes a model with its own key numbering.
func handedOverModel() porcupine.Model {
	in := &interner{}
	return porcupine.Model{
		Init: func() any { return closeLanes([]twoLane{{}}) },
		Step: in.step,
		Equal: func(a, b any) bool {
			x, y := a.(lanes), b.(lanes)
			return x.hash == y.hash && slices.Equal(x.ts, y.ts)
		},
		Hash:              func(st any) uint64 { return st.(lanes).hash },
		DescribeOperation: func(i, o any) string { return describe(i.(Input), o.(Output)) },
		DescribeState:     in.describe,
	}
}

// weight is the cost of a step from s in the search's budget: one step
// per member.
func (s lanes) weight() int { return len(s.ts) }
