package apiserver

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// A script is a sequence of steps that any server can be driven by: this
// model, or a real kube-apiserver storage stack (the realapi module), so
// that the answers of the two can be compared step by step. The steps are
// written in a small notation, kept in traces as the step's Op:
//
//	Create(ns/a)  Update(ns/a)  Delete(ns/a)   a write of one object
//	Compact                                    history before now is gone
//	List(rv=0 limit=2)                         a LIST with these options
//	List(rv= limit=2 continue)                 continue the previous List
//	Watch(rv= sie=true bookmarks)              a WATCH, read until it is quiet
//	WatchListGate(false)                       first step only: the gate is off
//
// Options are space-separated: rv=<version> (empty: ""), match=Exact or
// NotOlderThan, limit=<n>, sie=true or false (sendInitialEvents), and the
// flags bookmarks (allowWatchBookmarks) and continue (the token of the
// previous List step's answer, each server its own). A real server's
// Compact is a restart of its watch cache after an etcd compaction: the
// model's compaction point at its current version.
//
// Answers are normalised (Outcome, ListOutcome, WatchOutcome) so that
// equal behaviour gives equal strings whatever the object type, message
// wording or continue-token encoding.

// StepKind is what a script step does.
type StepKind uint8

// The step kinds.
const (
	CreateStep StepKind = iota
	UpdateStep
	DeleteStep
	CompactStep
	ListStep
	WatchStep
	GateStep
)

var stepNames = [...]string{"Create", "Update", "Delete", "Compact", "List", "Watch", "WatchListGate"}

// Step is one parsed script step.
type Step struct {
	Kind StepKind
	Key  string // writes
	// Opts are a List's or Watch's options; Continue is set by the runner
	// from the previous List's answer when ContinuePrev is.
	Opts         metav1.ListOptions
	ContinuePrev bool
	// Gate is a WatchListGate step's setting of the server's WatchList
	// feature gate.
	Gate bool
}

// ParseStep parses one step of the notation.
func ParseStep(op string) (Step, error) {
	name, args, hasArgs := strings.Cut(op, "(")
	if hasArgs {
		if !strings.HasSuffix(args, ")") {
			return Step{}, fmt.Errorf("script step %q: no closing parenthesis", op)
		}
		args = strings.TrimSuffix(args, ")")
	}
	kind := -1
	for i, n := range stepNames {
		if n == name {
			kind = i
		}
	}
	s := Step{Kind: StepKind(kind)}
	switch {
	case kind < 0:
		return Step{}, fmt.Errorf("script step %q: unknown operation %q", op, name)
	case s.Kind <= DeleteStep:
		if err := checkKey(args); err != nil {
			return Step{}, fmt.Errorf("script step %q: %w", op, err)
		}
		s.Key = args
		return s, nil
	case s.Kind == CompactStep:
		if hasArgs {
			return Step{}, fmt.Errorf("script step %q: Compact takes no arguments", op)
		}
		return s, nil
	case s.Kind == GateStep:
		b, err := strconv.ParseBool(args)
		if err != nil {
			return Step{}, fmt.Errorf("script step %q: the gate is true or false", op)
		}
		s.Gate = b
		return s, nil
	}
	for _, f := range strings.Fields(args) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "rv":
			s.Opts.ResourceVersion = v
		case "match":
			s.Opts.ResourceVersionMatch = metav1.ResourceVersionMatch(v)
		case "limit":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return Step{}, fmt.Errorf("script step %q: limit %q is not a count", op, v)
			}
			s.Opts.Limit = n
		case "sie":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return Step{}, fmt.Errorf("script step %q: sie %q is not true or false", op, v)
			}
			s.Opts.SendInitialEvents = &b
		case "bookmarks":
			s.Opts.AllowWatchBookmarks = true
		case "continue":
			s.ContinuePrev = true
		default:
			return Step{}, fmt.Errorf("script step %q: unknown option %q", op, f)
		}
	}
	return s, nil
}

// Outcome is an error's normalised form: "error <code> <reason>", with the
// cause types in brackets if it has any.
func Outcome(err error) string {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return "error " + err.Error()
	}
	return statusOutcome(st.Status())
}

func statusOutcome(s metav1.Status) string {
	out := fmt.Sprintf("error %d %s", s.Code, s.Reason)
	if s.Details != nil && len(s.Details.Causes) > 0 {
		var causes []string
		for _, c := range s.Details.Causes {
			causes = append(causes, string(c.Type))
		}
		out += " [" + strings.Join(causes, ",") + "]"
	}
	return out
}

// ListOutcome is a list's normalised form: its version, its items as
// key@version in order, and whether it has a continue token.
func ListOutcome(list runtime.Object) string {
	l, err := meta.ListAccessor(list)
	if err != nil {
		return "error " + err.Error()
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return "error " + err.Error()
	}
	keys := make([]string, len(items))
	for i, o := range items {
		keys[i] = objectOutcome(o)
	}
	more := "last"
	if l.GetContinue() != "" {
		more = "continue"
	}
	return fmt.Sprintf("rv=%s items=[%s] %s", l.GetResourceVersion(), strings.Join(keys, " "), more)
}

func objectOutcome(o runtime.Object) string {
	m, err := meta.Accessor(o)
	if err != nil {
		return fmt.Sprintf("%T", o)
	}
	key := m.GetName()
	if m.GetNamespace() != "" {
		key = m.GetNamespace() + "/" + key
	}
	return key + "@" + m.GetResourceVersion()
}

// WatchOutcome is a watch stream's normalised form: its events in order,
// "ADDED ns/a@2", "BOOKMARK 5" (with " end" for the initial-events-end
// bookmark), "ERROR <code> <reason>", or "(no events)".
func WatchOutcome(events []watch.Event) string {
	if len(events) == 0 {
		return "(no events)"
	}
	out := make([]string, len(events))
	for i, e := range events {
		switch e.Type {
		case watch.Error:
			if st, ok := e.Object.(*metav1.Status); ok {
				out[i] = "ERROR " + strings.TrimPrefix(statusOutcome(*st), "error ")
			} else {
				out[i] = fmt.Sprintf("ERROR %T", e.Object)
			}
		case watch.Bookmark:
			m, err := meta.Accessor(e.Object)
			if err != nil {
				out[i] = fmt.Sprintf("BOOKMARK %T", e.Object)
				continue
			}
			out[i] = "BOOKMARK " + m.GetResourceVersion()
			if m.GetAnnotations()[InitialEventsAnnotationKey] == "true" {
				out[i] += " end"
			}
		default:
			out[i] = string(e.Type) + " " + objectOutcome(e.Object)
		}
	}
	return strings.Join(out, ", ")
}

// ParseScript parses steps; a WatchListGate step may only come first.
func ParseScript(ops []string) ([]Step, error) {
	steps := make([]Step, len(ops))
	for i, op := range ops {
		s, err := ParseStep(op)
		if err != nil {
			return nil, err
		}
		if s.Kind == GateStep && i > 0 {
			return nil, fmt.Errorf("script step %d %q: the gate is set by the first step only", i, op)
		}
		steps[i] = s
	}
	return steps, nil
}

// Run drives a new model server with cfg through steps and returns each
// step's normalised answer: the new version of a write, "compacted at N",
// a List's or a Watch's outcome, or the error. The model makes the choices
// the real watch cache was observed to make: a LIST at version "0" is
// served whole (the cacher ignores its limit), and every request sees the
// current state (a watch cache that has caught up). A watch's events are
// those the stream has produced when the step ends, as a reader that
// waits until the stream is quiet sees them.
func Run(cfg Config, steps []Step) []string {
	if len(steps) > 0 && steps[0].Kind == GateStep {
		cfg.NoWatchList = !steps[0].Gate
	}
	s := New(cfg)
	out := make([]string, len(steps))
	prev := ""
	for i, st := range steps {
		var rv int64
		var err error
		switch st.Kind {
		case GateStep:
			out[i] = fmt.Sprintf("WatchList=%t", !cfg.NoWatchList)
			continue
		case CreateStep:
			rv, err = s.Create(st.Key)
		case UpdateStep:
			rv, err = s.Update(st.Key)
		case DeleteStep:
			rv, err = s.Delete(st.Key)
		case CompactStep:
			rv = s.RV()
			err = s.Compact(rv)
			if err == nil {
				out[i] = fmt.Sprintf("compacted at %d", rv)
				continue
			}
		case ListStep:
			opts := st.Opts
			if st.ContinuePrev {
				opts.Continue = prev
			}
			list, lerr := s.List(opts, ListChoice{IgnoreLimit: opts.ResourceVersion == "0"})
			if lerr != nil {
				out[i] = Outcome(lerr)
				continue
			}
			prev = list.Continue
			out[i] = ListOutcome(list)
			continue
		case WatchStep:
			w, werr := s.Watch(st.Opts, WatchChoice{})
			if werr != nil {
				out[i] = Outcome(werr)
				continue
			}
			events, _ := w.Events()
			w.Stop()
			out[i] = WatchOutcome(events)
			continue
		}
		if err != nil {
			out[i] = Outcome(err)
			continue
		}
		out[i] = fmt.Sprintf("rv=%d", rv)
	}
	return out
}

// String renders the step in the notation.
func (s Step) String() string {
	name := stepNames[s.Kind]
	switch s.Kind {
	case CompactStep:
		return name
	case GateStep:
		return fmt.Sprintf("%s(%t)", name, s.Gate)
	case CreateStep, UpdateStep, DeleteStep:
		return name + "(" + s.Key + ")"
	}
	args := []string{"rv=" + s.Opts.ResourceVersion}
	if s.Opts.ResourceVersionMatch != "" {
		args = append(args, "match="+string(s.Opts.ResourceVersionMatch))
	}
	if s.Opts.Limit != 0 {
		args = append(args, fmt.Sprintf("limit=%d", s.Opts.Limit))
	}
	if s.Opts.SendInitialEvents != nil {
		args = append(args, fmt.Sprintf("sie=%t", *s.Opts.SendInitialEvents))
	}
	if s.Opts.AllowWatchBookmarks {
		args = append(args, "bookmarks")
	}
	if s.ContinuePrev {
		args = append(args, "continue")
	}
	return name + "(" + strings.Join(args, " ") + ")"
}
