package linearizability

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
)

// ListenerError is a listener history that breaks the contract, or whose
// search was inconclusive.
type ListenerError struct {
	Listener int
	// Result is Illegal; or Unknown when the search ran out of its step
	// budget before finding a linearization or showing there is none
	// (Inconclusive: not a verdict on the subject); or Ok when the history
	// was required to be drained and is not (whatever its search found).
	Result porcupine.CheckResult
	// Info is porcupine's search for an Illegal result (for
	// SaveListenerFailure); empty otherwise.
	Info porcupine.LinearizationInfo
	// Ops is the listener's part of the history.
	Ops    []porcupine.Operation
	Detail string
}

func (e *ListenerError) Error() string {
	return fmt.Sprintf("listener %d: %s (%d ops): %s", e.Listener, e.Result, len(e.Ops), e.Detail)
}

// Inconclusive reports whether e says only that a search ran out of steps:
// no verdict either way.
func (e *ListenerError) Inconclusive() bool { return e.Result == porcupine.Unknown }

// Inconclusive reports whether err is a *ListenerError that says only that
// a search ran out of steps (see ListenerError.Inconclusive). A check moves
// on to its next workload on such an error, and counts it; it fails only
// on the others.
func Inconclusive(err error) bool {
	var le *ListenerError
	return errors.As(err, &le) && le.Inconclusive()
}

// CheckListener is CheckListenerSteps with DefaultSteps. Its last
// argument, once a wall-clock timeout, is ignored (see Check).
func CheckListener(history []porcupine.Operation, _ time.Duration) error {
	return CheckListenerSteps(history, DefaultSteps)
}

// CheckListenerSteps checks each listener's part of history on its own
// against the delivery contract: every Deliver is the oldest value added
// and not yet delivered, for some order of the calls inside their
// intervals, so no value is delivered twice, out of add order, or without
// being added. Each listener's search takes at most steps model steps
// (<= 0: DefaultSteps). It returns nil; or a *ListenerError with Result
// Illegal for the first listener, in listener order, that fails; or, when
// none fails but some search ran out of steps, a *ListenerError with
// Result Unknown for the first such listener (Inconclusive). A history cut
// short (values added and never delivered) can pass: see
// CheckListenerDrainedSteps.
func CheckListenerSteps(history []porcupine.Operation, steps int) error {
	if steps <= 0 {
		steps = DefaultSteps
	}
	m := ListenerModel()
	m.Partition = nil // one listener at a time, to name the one that fails
	var unknown error
	for _, ops := range partitionByListener(StampListener(history)) {
		l := ops[0].Input.(ListenerInput).Listener
		res, info := CheckSteps(m, ops, steps)
		switch res {
		case porcupine.Ok:
		case porcupine.Illegal:
			// A genuine violation decides, whatever an earlier listener's
			// inconclusive search would have found.
			return &ListenerError{Listener: l, Result: res, Info: info, Ops: ops, Detail: diagnoseListener(ops)}
		default:
			if unknown == nil {
				unknown = &ListenerError{Listener: l, Result: res, Ops: ops,
					Detail: fmt.Sprintf("inconclusive: the search found neither a linearization nor a violation within %d steps", steps)}
			}
		}
	}
	return unknown
}

// CheckListenerDrained is CheckListenerDrainedSteps with DefaultSteps. Its
// last argument, once a wall-clock timeout, is ignored (see Check).
func CheckListenerDrained(history []porcupine.Operation, _ time.Duration) error {
	return CheckListenerDrainedSteps(history, DefaultSteps)
}

// CheckListenerDrainedSteps is CheckListenerSteps for a history recorded
// until every handler had caught up: besides, every value added to a
// listener must have been delivered to it (exactly once, with
// CheckListenerSteps' at most once). A value never delivered is a
// violation even when a search was inconclusive; an inconclusive search
// is returned (Inconclusive) only when nothing else is wrong.
func CheckListenerDrainedSteps(history []porcupine.Operation, steps int) error {
	err := CheckListenerSteps(history, steps)
	if err != nil && !Inconclusive(err) {
		return err
	}
	for _, ops := range partitionByListener(history) {
		added := map[string]bool{}
		for _, op := range ops {
			if in := op.Input.(ListenerInput); in.Op == ListenerAdd {
				added[in.Value] = true
			}
		}
		for _, op := range ops {
			if op.Input.(ListenerInput).Op == ListenerDeliver {
				delete(added, op.Output.(ListenerOutput).Value)
			}
		}
		if len(added) > 0 {
			l := ops[0].Input.(ListenerInput).Listener
			lost := make([]string, 0, len(added))
			for v := range added {
				lost = append(lost, v)
			}
			sort.Strings(lost)
			if len(lost) > 5 {
				lost = append(lost[:5], "...")
			}
			return &ListenerError{Listener: l, Result: porcupine.Ok, Ops: ops,
				Detail: fmt.Sprintf("%d added values never delivered: %v", len(added), lost)}
		}
	}
	return err
}

// diagnoseListener says in words what is wrong with an Illegal listener
// history, where a simple scan can tell.
func diagnoseListener(ops []porcupine.Operation) string {
	added := map[string]porcupine.Operation{}
	seen := map[string]bool{}
	var dels []porcupine.Operation
	for _, op := range ops {
		if in := op.Input.(ListenerInput); in.Op == ListenerAdd {
			added[in.Value] = op
		} else {
			dels = append(dels, op)
		}
	}
	sort.Slice(dels, func(i, j int) bool { return dels[i].Return < dels[j].Return })
	for i, d := range dels {
		v := d.Output.(ListenerOutput).Value
		a, ok := added[v]
		switch {
		case !ok:
			return fmt.Sprintf("delivery %d: %q was never added", i, v)
		case seen[v]:
			return fmt.Sprintf("delivery %d: %q delivered twice", i, v)
		case a.Call > d.Return:
			return fmt.Sprintf("delivery %d: %q delivered before it was added", i, v)
		}
		seen[v] = true
		// An earlier Add that returned before v's Add was called and that
		// is not delivered yet: v overtook it.
		for w, b := range added {
			if !seen[w] && b.Return < a.Call {
				return fmt.Sprintf("delivery %d: %q overtook %q, added strictly before it", i, v, w)
			}
		}
	}
	return "no linearization (see the visualisation)"
}

// listenerRecord is one operation of a saved listener history.
type listenerRecord struct {
	Client   int    `json:"client"`
	Call     int64  `json:"call"`
	Return   int64  `json:"return"`
	Listener int    `json:"listener"`
	Op       string `json:"op"` // Add or Deliver
	Value    string `json:"value"`
}

// SaveListenerFailure writes dir/name.json, the listener history as JSON
// (one operation a line), and, when info holds a search (a ListenerError's
// Info), dir/name.html, porcupine's visualisation. It returns the paths
// written.
func SaveListenerFailure(dir, name string, history []porcupine.Operation, info porcupine.LinearizationInfo) (htmlPath, jsonPath string, err error) {
	rs := make([]listenerRecord, len(history))
	for i, op := range history {
		in, out := op.Input.(ListenerInput), op.Output.(ListenerOutput)
		v := in.Value
		if in.Op == ListenerDeliver {
			v = out.Value
		}
		rs[i] = listenerRecord{Client: op.ClientId, Call: op.Call, Return: op.Return,
			Listener: in.Listener, Op: in.Op.String(), Value: v}
	}
	write := func(path string) error {
		return writeJSONLines(path, `{"model": "listener", "ops": [`, "\n  ", "\n]}\n", rs)
	}
	m := ListenerModel()
	m.Partition = nil // info comes from CheckListener's unpartitioned search
	return saveFailure(dir, name, write, m, info)
}
