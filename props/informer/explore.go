package informer

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/traces"
)

// CheckExhaustive is the fan-out's exhaustive mode: every sequence of
// delivery-machine steps up to a depth bound, breadth first, one run per
// state of the model (see checkkit.Explore).
const CheckExhaustive = "listener/exhaustive"

// exhaustiveDepth is listener/exhaustive's default bound, in steps
// (KVERIFY_DEEPER adds to it).
const exhaustiveDepth = 8

// exhaustiveHandlers is how many handlers listener/exhaustive registers
// at most: two, so that one joins while the other is blocked in its
// initial list or behind events.
const exhaustiveHandlers = 2

// deliveryAlphabet is what listener/exhaustive enumerates: events on two
// keys (an add, an update or a delete as the store has it), a handler
// added before Start, between Start and its sync, while the other is
// blocked in its initial list or behind events, or after; handlers
// blocked, released and removed at every point; Start at every point.
var deliveryAlphabet = []step{
	{Op: opEmit, Key: "a"}, {Op: opEmit, Key: "a", Delete: true},
	{Op: opEmit, Key: "b"}, {Op: opEmit, Key: "b", Delete: true},
	{Op: opAddHandler}, {Op: opStart},
	{Op: opBlock, Handler: 0}, {Op: opUnblock, Handler: 0}, {Op: opRemove, Handler: 0},
	{Op: opBlock, Handler: 1}, {Op: opUnblock, Handler: 1}, {Op: opRemove, Handler: 1},
}

// enabled reports whether s changes anything in x's state: the steps a
// search must try from here.
func (x *machine) enabled(s step) bool {
	switch s.Op {
	case opAddHandler:
		return len(x.handlers) < exhaustiveHandlers
	case opStart:
		return !x.started
	case opBlock, opUnblock, opRemove:
		if s.Handler >= len(x.handlers) {
			return false
		}
		h := x.handlers[s.Handler]
		switch s.Op {
		case opBlock:
			return !h.blocked && !h.removed
		case opUnblock:
			return h.blocked
		}
		return !h.removed
	case opEmit:
		return !s.Delete || x.store[s.Key] // EmitDel of an absent key is Emit's add
	}
	return false
}

// key is the machine's abstract state: the store, whether it started, and
// for each handler what the model still owes it (the notifications it
// has not received, in order), whether it is blocked, removed, and how
// many of its calls returned against its initial list.
func (x *machine) key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "store=%v started=%v", x.storeKeys(), x.started)
	for _, h := range x.handlers {
		owed := h.owed()
		fmt.Fprintf(&b, " | %s init=%v blocked=%v removed=%v lossy=%v owed=%v synced=%v",
			h.p.name, h.hasInit, h.blocked, h.removed, h.lossy, owed, h.p.returned() >= len(h.exp.init))
	}
	return b.String()
}

// owed is what h has not received of what the model expects: the initial
// adds it has not seen, then the events past its cursor.
func (h *mHandler) owed() []string {
	var out []string
	for _, k := range h.exp.init {
		if !h.cur.seen[k] {
			out = append(out, initEv(k))
		}
	}
	if j := h.cur.n - len(h.exp.init); j >= 0 && j <= len(h.exp.seq) {
		out = append(out, h.exp.seq[j:]...)
	} else if j < 0 {
		out = append(out, h.exp.seq...)
	}
	return out
}

// exhaustive runs listener/exhaustive: every run ends as the delivery
// machine's do, with every handler released, everything delivered, and
// Stop.
func exhaustive(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		cov, err := checkkit.Explore(cfg, checkkit.Space[step]{
			Name: "fan-out steps", Steps: deliveryAlphabet, Depth: exhaustiveDepth,
			Run: func(steps []step) (key string, enabled []int, err error) {
				rec := checkkit.NewRecorder(cfg.Progress)
				err = checkkit.InBubble(t, func() error {
					x := newMachine(s.New(), rec)
					for _, st := range steps {
						if err := x.Apply(st); err != nil {
							_ = x.Close() // release and stop; the violation stands
							return err
						}
					}
					key = x.key()
					for i, st := range deliveryAlphabet {
						if x.enabled(st) {
							enabled = append(enabled, i)
						}
					}
					rec.Step("Stop", "", "")
					return x.Close()
				})
				return key, enabled, rec.Attach(err)
			},
		})
		checkkit.ReportCoverage(t, cov)
		return checkkit.Save(t, cfg, Component, CheckExhaustive, err)
	}
}

// replayExhaustive runs a saved listener/exhaustive trace's steps again,
// exactly: the interleaving the search found, ending with Stop.
func replayExhaustive(s Subject) func(*testing.T, *traces.Trace) error {
	return func(t *testing.T, tr *traces.Trace) error {
		var steps []step
		for _, op := range tr.Ops() {
			if op == "Stop" || strings.HasSuffix(op, " received") || strings.HasSuffix(op, " HasSynced") {
				continue // the closing Stop, and observations
			}
			st, err := parseStep(op)
			if err != nil {
				return err
			}
			steps = append(steps, st)
		}
		return checkkit.InBubble(t, func() error {
			x := newMachine(s.New(), &checkkit.Recorder{})
			for _, st := range steps {
				if err := x.Apply(st); err != nil {
					_ = x.Close()
					return err
				}
			}
			return x.Close()
		})
	}
}

// parseStep is the inverse of step.String for the steps of
// deliveryAlphabet.
func parseStep(s string) (step, error) {
	if k, ok := strings.CutPrefix(s, "EmitDel("); ok {
		return step{Op: opEmit, Key: strings.TrimSuffix(k, ")"), Delete: true}, nil
	}
	if k, ok := strings.CutPrefix(s, "Emit("); ok {
		return step{Op: opEmit, Key: strings.TrimSuffix(k, ")")}, nil
	}
	switch s {
	case "AddHandler":
		return step{Op: opAddHandler}, nil
	case "Start":
		return step{Op: opStart}, nil
	}
	var h int
	var name string
	if n, err := fmt.Sscanf(s, "h%d:%s", &h, &name); err == nil && n == 2 && h >= 0 && h < maxHandlers {
		switch name {
		case "Block":
			return step{Op: opBlock, Handler: h}, nil
		case "Unblock":
			return step{Op: opUnblock, Handler: h}, nil
		case "Remove":
			return step{Op: opRemove, Handler: h}, nil
		}
	}
	return step{}, fmt.Errorf("informer: trace step %q is not a delivery step", s)
}
