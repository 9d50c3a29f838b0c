package workqueue

import (
	"fmt"
	"strconv"
	"strings"

	wq "github.com/kverify/kverify/spec/workqueue"
)

// Step is one operation of a queue machine. Worker is the logical worker
// for Get and Done; Key the item for Add and, with Misuse, a Done of an item
// the caller does not hold. A bulk step (Bulk != 0) does N operations at
// once, with fresh keys that no other step uses, so that the queue holds
// far more distinct items than Keys: sizes past every threshold where an
// implementation changes behaviour (ring growth, shrinking, chunk
// boundaries).
type Step struct {
	Kind   wq.Kind
	Key    string
	Worker int
	Bulk   Bulk
	N      int
}

// Bulk is the kind of a bulk step.
type Bulk uint8

// The bulk steps.
const (
	// burst adds N fresh keys ("Burst(N)").
	burst Bulk = iota + 1
	// drain has one worker Get and Done up to N items, stopping when the
	// queue is empty ("w0:Drain(N)").
	drain
	// steady has one worker add a fresh key, Get and Done, N times: the
	// backlog stays the same while the FIFO turns over ("w0:Steady(N)").
	steady
)

var bulkNames = [...]string{burst: "Burst", drain: "Drain", steady: "Steady"}

// String is the trace notation: "Add(a)", "w1:Get", "w1:Done", "Done(a)",
// "Len", "ShutDown", "Burst(500)", "w1:Drain(500)", ...
func (s Step) String() string {
	switch s.Bulk {
	case burst:
		return fmt.Sprintf("Burst(%d)", s.N)
	case drain, steady:
		return fmt.Sprintf("w%d:%s(%d)", s.Worker, bulkNames[s.Bulk], s.N)
	}
	switch s.Kind {
	case wq.Add:
		return "Add(" + s.Key + ")"
	case wq.Get:
		return fmt.Sprintf("w%d:Get", s.Worker)
	case wq.Done:
		if s.Key != "" {
			return "Done(" + s.Key + ")"
		}
		return fmt.Sprintf("w%d:Done", s.Worker)
	}
	return s.Kind.String()
}

// cutWorker splits a worker step "w<n>:<op>"; ok reports whether s has that
// form, err whether the worker number is out of range.
func cutWorker(s string) (worker int, op string, ok bool, err error) {
	w, op, ok := strings.Cut(s, ":")
	if !ok || !strings.HasPrefix(w, "w") {
		return 0, "", false, nil
	}
	n, err := strconv.Atoi(w[1:])
	if err != nil || n < 0 || n >= Workers {
		return 0, "", true, fmt.Errorf("bad worker in step %q", s)
	}
	return n, op, true, nil
}

// parseBulk parses "Name(n)" for a bulk step name.
func parseBulk(s string) (Bulk, int, bool) {
	name, arg, ok := strings.Cut(s, "(")
	if !ok || !strings.HasSuffix(arg, ")") {
		return 0, 0, false
	}
	n, err := strconv.Atoi(strings.TrimSuffix(arg, ")"))
	if err != nil || n < 0 {
		return 0, 0, false
	}
	for b, bn := range bulkNames {
		if bn != "" && bn == name {
			return Bulk(b), n, true
		}
	}
	return 0, 0, false
}

// parseStep is the inverse of Step.String.
func parseStep(s string) (Step, error) {
	if b, n, ok := parseBulk(s); ok && b == burst {
		return Step{Kind: wq.Add, Bulk: burst, N: n}, nil
	}
	if n, op, ok, err := cutWorker(s); ok {
		if err != nil {
			return Step{}, err
		}
		if b, k, ok := parseBulk(op); ok && b != burst {
			return Step{Kind: wq.Get, Worker: n, Bulk: b, N: k}, nil
		}
		k, err := wq.ParseKind(op)
		if err != nil || (k != wq.Get && k != wq.Done) {
			return Step{}, fmt.Errorf("bad worker step %q", s)
		}
		return Step{Kind: k, Worker: n}, nil
	}
	if name, arg, ok := strings.Cut(s, "("); ok && strings.HasSuffix(arg, ")") {
		k, err := wq.ParseKind(name)
		if err != nil || (k != wq.Add && k != wq.Done) {
			return Step{}, fmt.Errorf("bad step %q", s)
		}
		return Step{Kind: k, Key: strings.TrimSuffix(arg, ")")}, nil
	}
	k, err := wq.ParseKind(s)
	if err != nil {
		return Step{}, err
	}
	return Step{Kind: k}, nil
}
