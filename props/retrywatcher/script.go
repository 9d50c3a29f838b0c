package retrywatcher

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	spec "github.com/kverify/kverify/spec/retrywatcher"
	"github.com/kverify/kverify/traces"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// Script is one run of a check: the version the watcher starts from, and
// what the server (and the consumer, Stop) does, in order. A step that
// needs a watch call (any but Stop, while no stream is open) waits for the
// subject's next call first; a Refused step with a stream open is skipped
// (there is no call to refuse), and so is every step after the end.
//
// In a trace each step is one operation, and the trace's steps are the
// script again (ParseScript):
//
//	New(rv="5")                     the watcher, from version 5
//	Event(ADDED, rv="6")            an event in the open stream (any type,
//	                                an unknown one too; rv="" for none)
//	Error(410, retry-after=2s)      an Error event carrying a Status
//	Error(not a Status)             an Error event whose object is not one
//	Close                           the server ends the open stream
//	Refuse(403) | Refuse(EOF)       the watch call fails
//	Stop                            the consumer calls Stop (twice)
//	Stop(unread ADDED rv="8")       an event the consumer does not read
//	                                (with a stream open), then Stop
//	Watch                           (observed: the subject's watch call)
type Script struct {
	Initial string
	Steps   []spec.Step
}

// Op is step s in the trace notation.
func Op(s spec.Step) string {
	switch s.Kind {
	case spec.Event:
		switch {
		case s.Type == spec.Error && s.NotStatus:
			return "Error(not a Status)"
		case s.Type == spec.Error:
			return fmt.Sprintf("Error(%d, retry-after=%v)", s.Code, s.RetryAfter)
		}
		return fmt.Sprintf("Event(%s, rv=%q)", s.Type, s.RV)
	case spec.Closed:
		return "Close"
	case spec.Refused:
		if s.Code == 0 {
			return "Refuse(EOF)"
		}
		return fmt.Sprintf("Refuse(%d)", s.Code)
	case spec.StopCalled:
		if s.RV != "" {
			return fmt.Sprintf("Stop(unread ADDED rv=%q)", s.RV)
		}
		return "Stop"
	}
	return fmt.Sprintf("Kind(%d)", s.Kind)
}

// opWatch is the observed watch call's operation: not a script step.
const opWatch = "Watch"

var (
	reNew        = regexp.MustCompile(`^New\(rv=("(?:[^"\\]|\\.)*")\)$`)
	reEvent      = regexp.MustCompile(`^Event\(([A-Za-z]+), rv=("(?:[^"\\]|\\.)*")\)$`)
	reError      = regexp.MustCompile(`^Error\((\d+), retry-after=([0-9a-zµ.]+)\)$`)
	reRefused    = regexp.MustCompile(`^Refuse\((EOF|\d+)\)$`)
	reStopUnread = regexp.MustCompile(`^Stop\(unread ADDED rv=("(?:[^"\\]|\\.)*")\)$`)
)

// ParseScript turns a trace's operations back into the script that made
// them; observed operations (Watch) are skipped.
func ParseScript(steps []traces.Step) (Script, error) {
	var sc Script
	for i, st := range steps {
		bad := func(err error) (Script, error) { return Script{}, fmt.Errorf("trace step %d %q: %v", i, st.Op, err) }
		if i == 0 {
			m := reNew.FindStringSubmatch(st.Op)
			if m == nil {
				return bad(errors.New(`a script starts with New(rv="...")`))
			}
			rv, err := strconv.Unquote(m[1])
			if err != nil {
				return bad(err)
			}
			sc.Initial = rv
			continue
		}
		s, err := parseStep(st.Op)
		if err != nil {
			return bad(err)
		}
		if s != nil {
			sc.Steps = append(sc.Steps, *s)
		}
	}
	if len(steps) == 0 {
		return Script{}, errors.New("an empty trace: a script starts with New")
	}
	return sc, nil
}

func parseStep(op string) (*spec.Step, error) {
	switch op {
	case opWatch:
		return nil, nil
	case "Close":
		return &spec.Step{Kind: spec.Closed}, nil
	case "Stop":
		return &spec.Step{Kind: spec.StopCalled}, nil
	case "Error(not a Status)":
		return &spec.Step{Kind: spec.Event, Type: spec.Error, NotStatus: true}, nil
	}
	if m := reEvent.FindStringSubmatch(op); m != nil {
		rv, err := strconv.Unquote(m[2])
		if err != nil {
			return nil, err
		}
		return &spec.Step{Kind: spec.Event, Type: spec.EventType(m[1]), RV: rv}, nil
	}
	if m := reError.FindStringSubmatch(op); m != nil {
		code, _ := strconv.Atoi(m[1])
		d, err := time.ParseDuration(m[2])
		if err != nil {
			return nil, err
		}
		return &spec.Step{Kind: spec.Event, Type: spec.Error, Code: code, RetryAfter: d}, nil
	}
	if m := reStopUnread.FindStringSubmatch(op); m != nil {
		rv, err := strconv.Unquote(m[1])
		if err != nil {
			return nil, err
		}
		return &spec.Step{Kind: spec.StopCalled, RV: rv}, nil
	}
	if m := reRefused.FindStringSubmatch(op); m != nil {
		code := 0
		if m[1] != "EOF" {
			code, _ = strconv.Atoi(m[1])
		}
		return &spec.Step{Kind: spec.Refused, Code: code}, nil
	}
	return nil, errors.New("not an operation of a RetryWatcher script")
}

// maxRestartWait is how long after the earliest allowed moment a restart
// may come: the model says when a restart may come, not how late; a
// subject that waits longer (or never restarts) breaks GRestart.
const maxRestartWait = time.Minute

// call is one watch call the subject made.
type call struct {
	opts  metav1.ListOptions
	reply chan reply
}

type reply struct {
	w   watch.Interface
	err error
}

func object(rv string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", ResourceVersion: rv}}
}

// refusal is the error a watch call fails with for code.
func refusal(code int) error {
	gr := schema.GroupResource{Resource: "things"}
	switch code {
	case 0:
		return errors.New("unexpected EOF")
	case 401:
		return apierrors.NewUnauthorized("no credentials")
	case 403:
		return apierrors.NewForbidden(gr, "", errors.New("not allowed"))
	case 410:
		return apierrors.NewResourceExpired("too old resource version")
	}
	return apierrors.NewInternalError(errors.New("etcd is unwell"))
}

// status is the Status object of an Error event.
func status(s spec.Step) *metav1.Status {
	st := apierrors.NewInternalError(errors.New("server error")).ErrStatus
	switch s.Code {
	case 410:
		st = apierrors.NewResourceExpired("too old resource version").ErrStatus
	case 504:
		st = apierrors.NewTimeoutError("timeout", 0).ErrStatus
	case 429:
		st = apierrors.NewTooManyRequests("slow down", 0).ErrStatus
	}
	st.Details = nil
	if s.RetryAfter > 0 {
		st.Details = &metav1.StatusDetails{RetryAfterSeconds: int32(s.RetryAfter / time.Second)}
	}
	return &st
}

// play runs sc on s and returns the first violation. It must run inside a
// synctest bubble: the subject's goroutines and the check's share it, and
// after each step the check waits until every goroutine is blocked
// (synctest.Wait), so what the subject has done is settled.
func play(s Subject, sc Script, rec *checkkit.Recorder) (key string, err error) {
	rec.Timed()
	t0 := time.Now()
	now := func() time.Duration { return time.Since(t0) }
	m, merr := spec.New(sc.Initial)
	if merr != nil {
		return "", fmt.Errorf("retrywatcher script: %v", merr) // the script's fault, not the subject's
	}
	calls := make(chan call, 1)
	var streams []*watch.FakeWatcher
	// A call still pending when the run ends fails then: a subject whose
	// watch calls take no context (client-go before v0.33 calls Watch
	// without one) is not left blocked in the check's server.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	server := func(callCtx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		c := call{opts: opts, reply: make(chan reply, 1)}
		select {
		case calls <- c:
		case <-callCtx.Done():
			return nil, callCtx.Err()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		select {
		case r := <-c.reply:
			return r.w, r.err
		case <-callCtx.Done():
			return nil, callCtx.Err()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	newOp := fmt.Sprintf("New(rv=%q)", sc.Initial)
	var w Watch
	if p := checkkit.Protect(func() { w, err = s.New(ctx, sc.Initial, server) }); p != nil {
		rec.Step(newOp, "ok", p.Error())
		return "", checkkit.Broke(GNoPanic, "New(rv=%q): %v", sc.Initial, p)
	}
	rec.Step(newOp, "ok", errString(err))
	if err != nil || w == nil {
		return "", checkkit.Broke(GResume, "New(rv=%q) failed: %v", sc.Initial, err)
	}
	stopped := false
	defer func() {
		if !stopped {
			if p := checkkit.Protect(w.Stop); p != nil && err == nil {
				err = checkkit.Broke(GNoPanic, "Stop: %v", p)
			}
		}
		synctest.Wait()
	}()
	// afterStop answers the watch call pending when Stop was called, if
	// any, as a server would, in time: with a failure. A subject whose
	// calls take a context has returned from it already; one whose calls
	// take none (client-go before v0.33) ends once it returns.
	afterStop := func() {
		synctest.Wait()
		select {
		case c := <-calls:
			c.reply <- reply{err: refusal(0)}
			synctest.Wait()
		default:
		}
	}
	var stream *watch.FakeWatcher
	delivered := 0 // events passed on from the open stream
	// awaitCall waits for the subject's next watch call, which must come
	// no sooner than the model allows and no later than maxRestartWait
	// after, and answers it with step (a refusal) or a stream.
	awaitCall := func(step spec.Step) error {
		earliest := m.Next
		if m.Phase == spec.Watching {
			earliest = now()
		}
		if d := earliest - now(); d > 0 {
			time.Sleep(d - time.Nanosecond) // to just before it
			synctest.Wait()
			select {
			case c := <-calls:
				rec.Step(opWatch, fmt.Sprintf("no call before %v", earliest), fmt.Sprintf("rv=%q at %v", c.opts.ResourceVersion, now()))
				return checkkit.Broke(GRestart, "a watch (rv=%q) at %v, before %v: the restart period after the last start (%v) or the server's retry-after", c.opts.ResourceVersion, now(), earliest, m.Started)
			default:
			}
			time.Sleep(time.Nanosecond) // to the earliest allowed instant
		}
		var c call
		for waited := time.Duration(0); ; waited += time.Second {
			synctest.Wait()
			select {
			case c = <-calls:
			default:
				if waited >= maxRestartWait {
					rec.Step(opWatch, fmt.Sprintf("a call by %v", earliest+maxRestartWait), "none")
					return checkkit.Broke(GRestart, "no watch by %v, %v after it was allowed (at %v)", now(), maxRestartWait, earliest)
				}
				time.Sleep(time.Second)
				continue
			}
			break
		}
		var req spec.Request
		var werr error
		m, req, werr = m.Watch(now())
		rec.Step(opWatch, fmt.Sprintf("rv=%q bookmarks=%v", req.RV, req.Bookmarks), fmt.Sprintf("rv=%q bookmarks=%v", c.opts.ResourceVersion, c.opts.AllowWatchBookmarks))
		if werr != nil {
			return checkkit.Broke(GResume, "a watch the model does not allow: %v", werr)
		}
		if c.opts.ResourceVersion != req.RV || c.opts.AllowWatchBookmarks != req.Bookmarks {
			return checkkit.Broke(GResume, "watch %d asked for rv=%q bookmarks=%v, want rv=%q bookmarks=%v (the last version taken in, bookmarks asked for)",
				len(streams)+1, c.opts.ResourceVersion, c.opts.AllowWatchBookmarks, req.RV, req.Bookmarks)
		}
		if step.Kind == spec.Refused {
			c.reply <- reply{err: refusal(step.Code)}
			stream = nil
			return nil
		}
		stream, delivered = watch.NewFakeWithChanSize(1, false), 0
		streams = append(streams, stream)
		c.reply <- reply{w: stream}
		return nil
	}
	for _, step := range sc.Steps {
		if m.Phase == spec.Ended {
			break
		}
		unread := false
		if step.Kind != spec.StopCalled && (m.Phase == spec.Waiting || !m.Opened) {
			if err := awaitCall(step); err != nil {
				// The step that waited for the call, so that the trace
				// replays to it.
				rec.Step(Op(step), "not run: the watch call before it broke a guarantee", "")
				return "", err
			}
		} else if step.Kind == spec.Refused {
			continue // a stream is open: no watch call to refuse
		}
		if (step.Kind == spec.Event || step.Kind == spec.Closed) && stream.IsStopped() {
			rec.Step(Op(step), "the stream open", "the stream stopped")
			return "", checkkit.Broke(GStreams, "before %s: the subject stopped its open watch (rv=%q) and opened no other", Op(step), m.RV)
		}
		switch step.Kind {
		case spec.Event:
			switch {
			case step.Type == spec.Error && step.NotStatus:
				stream.Error(object("1"))
			case step.Type == spec.Error:
				stream.Error(status(step))
			default:
				stream.Action(watch.EventType(step.Type), object(step.RV))
			}
		case spec.Closed:
			stream.Stop()
		case spec.StopCalled:
			if unread = step.RV != "" && m.Phase == spec.Watching && m.Opened && !stream.IsStopped(); unread {
				// An event the consumer does not read: Stop must not wait
				// for the consumer to take it.
				stream.Action(watch.Added, object(step.RV))
				m, _, _ = m.Apply(spec.Step{Kind: spec.Event, Type: spec.Added, RV: step.RV}, now())
				synctest.Wait()
			}
			if p := checkkit.Protect(func() { w.Stop(); w.Stop() }); p != nil { // twice: the second does nothing
				rec.Step(Op(step), "", p.Error())
				return "", checkkit.Broke(GNoPanic, "Stop: %v", p)
			}
			stopped = true
			afterStop()
			if unread {
				select {
				case <-w.Done():
				default:
					rec.Step(Op(step), "done without the consumer reading", "not done")
					return "", checkkit.Broke(GStop, "after %s the watcher is not done until the consumer reads the event: Stop waits for the consumer", Op(step))
				}
			}
		}
		var want *spec.Out
		var aerr error
		m, want, aerr = m.Apply(step, now())
		if aerr != nil {
			return "", fmt.Errorf("retrywatcher script: the script broke the model's rules: %v", aerr)
		}
		synctest.Wait()
		g := receive(w)
		if unread && g.some && g.ev.Type == watch.Added {
			// The unread event may still be delivered, before the close.
			if o, ok := g.ev.Object.(interface{ GetResourceVersion() string }); ok && o.GetResourceVersion() == step.RV {
				g = receive(w)
			}
		}
		rec.Step(Op(step), fmtOut(want), g.String())
		if want != nil && want.Passed {
			delivered++
		}
		if gr, ok := judge(want, g, m.Phase == spec.Ended); !ok {
			return "", checkkit.Broke(gr, "after %s: the consumer got %s, want %s", Op(step), g, fmtOut(want))
		}
		if m.Phase == spec.Ended {
			synctest.Wait()
			if after := receive(w); !after.closed {
				return "", checkkit.Broke(GEnd, "after %s (%s) the result channel is still open: %s", Op(step), m.Why, after)
			}
			select {
			case <-w.Done():
			default:
				return "", checkkit.Broke(GStop, "the result channel is closed but Done is not (%s)", m.Why)
			}
		}
	}
	key = ended
	if m.Phase != spec.Ended {
		key = stateKey(m, sc.Initial, now(), delivered)
		if p := checkkit.Protect(w.Stop); p != nil {
			return "", checkkit.Broke(GNoPanic, "Stop: %v", p)
		}
		stopped = true
		afterStop()
		if after := receive(w); !after.closed {
			return "", checkkit.Broke(GStop, "after Stop the result channel is still open: %s", after)
		}
		select {
		case <-w.Done():
		default:
			return "", checkkit.Broke(GStop, "after Stop the result channel is closed but Done is not")
		}
	}
	synctest.Wait()
	for i, st := range streams {
		if !st.IsStopped() {
			return "", checkkit.Broke(GStreams, "stream %d of %d was left open (its watch was not stopped) after the watcher moved on or ended", i+1, len(streams))
		}
	}
	return key, nil
}

// ended is the state key of a watcher that has ended.
const ended = "ended"

// stateKey is the abstract state a script leaves a running watcher in,
// for retrywatcher/exhaustive's reduction: the model's phase, whether the
// version moved from the initial one, how many events the open stream
// passed on (0, 1, more), how long until the next watch may start, and
// how long since the last one started (up to the restart period, after
// which the time no longer matters).
func stateKey(m spec.Model, initial string, now time.Duration, delivered int) string {
	wait := time.Duration(0)
	if m.Phase == spec.Waiting {
		wait = max(0, m.Next-now)
	}
	return fmt.Sprintf("phase=%d opened=%v moved=%v delivered=%d wait=%v since=%v",
		m.Phase, m.Opened, m.RV != initial, min(delivered, 2), wait, min(now-m.Started, spec.RestartPeriod))
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// got is what the consumer found on the result channel after a step.
type got struct {
	ev     watch.Event
	some   bool
	closed bool
}

func (g got) String() string {
	switch {
	case g.closed:
		return "the channel closed"
	case !g.some:
		return "nothing"
	}
	if st, ok := g.ev.Object.(*metav1.Status); ok {
		return fmt.Sprintf("%s %d", g.ev.Type, st.Code)
	}
	if o, ok := g.ev.Object.(interface{ GetResourceVersion() string }); ok {
		return fmt.Sprintf("%s rv=%q", g.ev.Type, o.GetResourceVersion())
	}
	return fmt.Sprintf("%s %T", g.ev.Type, g.ev.Object)
}

// receive takes what is ready on the result channel, without waiting.
func receive(w Watch) got {
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			return got{closed: true}
		}
		return got{ev: ev, some: true}
	default:
		return got{}
	}
}

func fmtOut(o *spec.Out) string {
	switch {
	case o == nil:
		return "nothing"
	case o.Type == spec.Error:
		return fmt.Sprintf("ERROR %d", o.Code)
	}
	return fmt.Sprintf("%s rv=%q", o.Type, o.RV)
}

// judge compares what the consumer got with the model's and names the
// guarantee a difference breaks; ended says the model has ended (after
// Stop, nothing and a closed channel are both right).
func judge(want *spec.Out, g got, ended bool) (string, bool) {
	if want == nil {
		if g.closed {
			if ended {
				return "", true
			}
			return GEnd, false // ended on something it recovers from
		}
		if g.some && g.ev.Type == watch.Error {
			return GEnd, false // complained of something it recovers from
		}
		if g.some {
			return GDelivery, false
		}
		return "", true
	}
	if !g.some {
		if want.Type == spec.Error {
			return GEnd, false
		}
		return GDelivery, false
	}
	if want.Type == spec.Error {
		st, ok := g.ev.Object.(*metav1.Status)
		if g.ev.Type != watch.Error || !ok || int(st.Code) != want.Code {
			return GEnd, false
		}
		return "", true
	}
	o, ok := g.ev.Object.(interface{ GetResourceVersion() string })
	if string(g.ev.Type) != string(want.Type) || !ok || o.GetResourceVersion() != want.RV {
		return GDelivery, false
	}
	return "", true
}
