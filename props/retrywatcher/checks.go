// Package retrywatcher holds a watch that resumes across failures
// (client-go's tools/watch.RetryWatcher, impl/retrywatcher) to the
// reference model in spec/retrywatcher: the check plays the server, a
// random script of events, closed streams, error statuses and refused
// watches, in fake time, and compares every watch request, every event
// the consumer receives, every restart's time and the end with the
// model's.
package retrywatcher

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	spec "github.com/kverify/kverify/spec/retrywatcher"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"pgregory.net/rapid"
)

// Component is the kverify component these checks run in.
const Component = "retrywatcher"

// CheckModel is the model check's name.
const CheckModel = "retrywatcher/model"

// The guarantees, as violations name them.
const (
	GResume   = "Resume from the last version"
	GDelivery = "Every event once, in order"
	GEnd      = "Ends on what it cannot recover from"
	GRestart  = "Restart timing"
	GStop     = "Stop ends it"
	GStreams  = "Streams left are stopped"
)

// maxRestartWait is how long after the earliest allowed moment a restart
// may come: the model says when a restart may come, not how late; a
// subject that waits longer (or never restarts) breaks GRestart.
const maxRestartWait = time.Minute

// Watch is what a RetryWatcher gives its consumer.
type Watch interface {
	ResultChan() <-chan watch.Event
	Stop()
	Done() <-chan struct{}
}

// Watcher opens a watch: the server side, which the check plays.
type Watcher func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)

// Subject makes the RetryWatcher under test.
type Subject struct {
	// New starts a watcher from version rv over w, with a restart period
	// of spec.RestartPeriod, in the caller's fake time.
	New func(ctx context.Context, rv string, w Watcher) (Watch, error)
}

// Checks returns the checks for s.
func Checks(s Subject) []checkkit.Check {
	if s.New == nil {
		return nil
	}
	return []checkkit.Check{
		{Name: CheckModel, Family: checkkit.FamilyModel,
			Guarantee: "in fake time, under a random script of events (bookmarks, versions missing, unknown types), closed streams, error statuses (410, 500, 504 and 429 with and without retry-after, not a Status) and refused watches (EOF, 410, 500, 401, 403), and Stop: every watch resumes from the version of the last event or bookmark (with bookmarks asked for); the consumer receives every Added, Modified and Deleted event once, in order, and no bookmark; a 410 in the stream, a 401 or 403 refusal, an event without a version or of an unknown type end it after one Error event, and nothing else does; a restart comes no sooner than the server's retry-after after the failure and the restart period after the last watch began, and within a minute of that; Stop (twice) closes the result channel and Done; every stream it leaves is stopped",
			Run:       modelCheck(s)},
	}
}

// call is one watch call the subject made.
type call struct {
	opts  metav1.ListOptions
	reply chan reply
}

type reply struct {
	w   watch.Interface
	err error
}

func modelCheck(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		err := checkkit.Rapid(t, cfg, func(rt *rapid.T, rec *checkkit.Recorder) {
			checkkit.Bubble(t, func() { run(rt, rec, s) })
		})
		return checkkit.Save(t, cfg, Component, CheckModel, err)
	}
}

// stepGen draws what the server (or the consumer) does next; nextRV
// numbers the events.
func stepGen(rt *rapid.T, nextRV *int) spec.Step {
	rv := func() string { *nextRV++; return strconv.Itoa(*nextRV) }
	switch k := rapid.IntRange(0, 99).Draw(rt, "step"); {
	case k < 45:
		typ := rapid.SampledFrom([]spec.EventType{spec.Added, spec.Modified, spec.Deleted}).Draw(rt, "type")
		return spec.Step{Kind: spec.Event, Type: typ, RV: rv()}
	case k < 58:
		return spec.Step{Kind: spec.Event, Type: spec.Bookmark, RV: rv()}
	case k < 70:
		return spec.Step{Kind: spec.Closed}
	case k < 80:
		code := rapid.SampledFrom([]int{410, 500, 504, 429}).Draw(rt, "status")
		after := time.Duration(rapid.IntRange(0, 3).Draw(rt, "retry-after")) * time.Second
		return spec.Step{Kind: spec.Event, Type: spec.Error, Code: code, RetryAfter: after}
	case k < 90:
		return spec.Step{Kind: spec.Refused, Code: rapid.SampledFrom([]int{0, 410, 500, 401, 403}).Draw(rt, "refused")}
	case k < 93:
		return spec.Step{Kind: spec.Event, Type: spec.Error, NotStatus: true}
	case k < 95:
		return spec.Step{Kind: spec.Event, Type: rapid.SampledFrom([]spec.EventType{spec.Added, spec.Bookmark}).Draw(rt, "type"), RV: ""}
	case k < 97:
		return spec.Step{Kind: spec.Event, Type: "SURPRISE", RV: rv()}
	}
	return spec.Step{Kind: spec.StopCalled}
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

func describe(s spec.Step) string {
	switch s.Kind {
	case spec.Event:
		switch {
		case s.Type == spec.Error && s.NotStatus:
			return "event ERROR (not a Status)"
		case s.Type == spec.Error:
			return fmt.Sprintf("event ERROR %d (retry after %v)", s.Code, s.RetryAfter)
		}
		return fmt.Sprintf("event %s rv=%q", s.Type, s.RV)
	case spec.Refused:
		if s.Code == 0 {
			return "watch refused (EOF)"
		}
		return fmt.Sprintf("watch refused (%d)", s.Code)
	}
	return s.Kind.String()
}

// run plays one script. The subject's goroutines and the check's share
// the bubble: after each step the check waits until every goroutine is
// blocked (synctest.Wait), so what the subject has done is settled.
func run(rt *rapid.T, rec *checkkit.Recorder, s Subject) {
	rec.Timed()
	t0 := time.Now()
	now := func() time.Duration { return time.Since(t0) }
	fail := func(g, f string, a ...any) { rec.Fail(rt, g, f, a...) }
	calls := make(chan call, 1)
	var streams []*watch.FakeWatcher
	server := func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		c := call{opts: opts, reply: make(chan reply, 1)}
		select {
		case calls <- c:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		select {
		case r := <-c.reply:
			return r.w, r.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	initial := strconv.Itoa(rapid.IntRange(1, 1000).Draw(rt, "initial rv"))
	nextRV, _ := strconv.Atoi(initial)
	m, err := spec.New(initial)
	if err != nil {
		panic(err) // the generator draws resumable versions only
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := s.New(ctx, initial, server)
	if err != nil {
		fail(GResume, "New(rv=%q) failed: %v", initial, err)
	}
	stopped := false
	defer func() {
		if !stopped {
			w.Stop()
		}
		synctest.Wait()
	}()
	var stream *watch.FakeWatcher
	// awaitCall waits for the subject's next watch call, which must come
	// no sooner than the model allows and no later than maxRestartWait
	// after, and answers it with step (a refusal) or a stream.
	awaitCall := func(step spec.Step) {
		earliest := m.Next
		if m.Phase == spec.Watching {
			earliest = now()
		}
		if d := earliest - now(); d > 0 {
			time.Sleep(d - time.Nanosecond) // to just before it
			synctest.Wait()
			select {
			case c := <-calls:
				fail(GRestart, "a watch (rv=%q) at %v, before %v: the restart period after the last start (%v) or the server's retry-after", c.opts.ResourceVersion, now(), earliest, m.Started)
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
					fail(GRestart, "no watch by %v, %v after it was allowed (at %v)", now(), maxRestartWait, earliest)
				}
				time.Sleep(time.Second)
				continue
			}
			break
		}
		var req spec.Request
		m, req, err = m.Watch(now())
		if err != nil {
			fail(GResume, "a watch the model does not allow: %v", err)
		}
		rec.Step("watch", fmt.Sprintf("rv=%q bookmarks=%v", req.RV, req.Bookmarks), fmt.Sprintf("rv=%q bookmarks=%v", c.opts.ResourceVersion, c.opts.AllowWatchBookmarks))
		if c.opts.ResourceVersion != req.RV || c.opts.AllowWatchBookmarks != req.Bookmarks {
			fail(GResume, "watch %d asked for rv=%q bookmarks=%v, want rv=%q bookmarks=%v (the last version taken in, bookmarks asked for)",
				len(streams)+1, c.opts.ResourceVersion, c.opts.AllowWatchBookmarks, req.RV, req.Bookmarks)
		}
		if step.Kind == spec.Refused {
			c.reply <- reply{err: refusal(step.Code)}
			stream = nil
			return
		}
		stream = watch.NewFakeWithChanSize(1, false)
		streams = append(streams, stream)
		c.reply <- reply{w: stream}
	}
	steps := rapid.IntRange(1, 30).Draw(rt, "steps")
	for range steps {
		step := stepGen(rt, &nextRV)
		if step.Kind != spec.StopCalled && (m.Phase == spec.Waiting || !m.Opened) {
			awaitCall(step)
		} else if step.Kind == spec.Refused {
			continue // a stream is open: no watch call to refuse
		}
		if (step.Kind == spec.Event || step.Kind == spec.Closed) && stream.IsStopped() {
			fail(GResume, "before %s: the subject stopped its open watch (rv=%q) and opened no other", describe(step), m.RV)
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
			w.Stop()
			w.Stop() // twice: the second does nothing
			stopped = true
		}
		var want *spec.Out
		m, want, err = m.Apply(step, now())
		if err != nil {
			panic(fmt.Sprintf("retrywatcher check: the script broke the model's rules: %v", err))
		}
		synctest.Wait()
		got := receive(w)
		rec.Step(describe(step), fmtOut(want), got.String())
		if g, ok := judge(want, got, m.Phase == spec.Ended); !ok {
			fail(g, "after %s: the consumer got %s, want %s", describe(step), got, fmtOut(want))
		}
		if m.Phase == spec.Ended {
			synctest.Wait()
			if after := receive(w); !after.closed {
				fail(GEnd, "after %s (%s) the result channel is still open: %s", describe(step), m.Why, after)
			}
			select {
			case <-w.Done():
			default:
				fail(GStop, "the result channel is closed but Done is not (%s)", m.Why)
			}
			break
		}
	}
	if m.Phase != spec.Ended {
		w.Stop()
		stopped = true
		synctest.Wait()
		if after := receive(w); !after.closed {
			fail(GStop, "after Stop the result channel is still open: %s", after)
		}
	}
	synctest.Wait()
	for i, st := range streams {
		if !st.IsStopped() {
			fail(GStreams, "stream %d of %d was left open (its watch was not stopped) after the watcher moved on or ended", i+1, len(streams))
		}
	}
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
