package subjects

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	prw "github.com/kverify/kverify/props/retrywatcher"
	"github.com/kverify/kverify/subjects/ours"
	"github.com/kverify/kverify/subjects/upstream"
	"github.com/kverify/kverify/traces"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// replayRetryWatcherVector runs one RetryWatcher vector on s in a synctest
// bubble: the replayer is the server (traces/vectors/retrywatcher.go says
// what each step does); the error names the first step whose outcome
// differs.
func replayRetryWatcherVector(t *testing.T, s prw.Subject, v traces.Vector) (err error) {
	synctest.Test(t, func(t *testing.T) { err = retryWatcherVector(s, v) })
	return err
}

// rwCall is a watch call the replayer has yet to answer.
type rwCall struct {
	opts  metav1.ListOptions
	at    time.Duration
	reply chan rwReply
}

type rwReply struct {
	w   watch.Interface
	err error
}

func retryWatcherVector(s prw.Subject, v traces.Vector) error {
	t0 := time.Now()
	calls := make(chan rwCall)
	// done ends a call still pending when the replay ends: client-go's
	// NewRetryWatcher calls Watch without a context, so Stop alone does
	// not end its call.
	done := make(chan struct{})
	server := func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		c := rwCall{opts: opts, at: time.Since(t0), reply: make(chan rwReply, 1)}
		select {
		case calls <- c:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-done:
			return nil, errors.New("the replay ended")
		}
		select {
		case r := <-c.reply:
			return r.w, r.err
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-done:
			return nil, errors.New("the replay ended")
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := s.New(ctx, strconv.Itoa(int(v.Header.Params["initial_rv"])), server)
	if err != nil {
		return fmt.Errorf("New: %v", err)
	}
	defer func() { w.Stop(); close(done); synctest.Wait() }()
	var pending *rwCall
	var stream *watch.FakeWatcher
	return replaySteps(v.Steps, func(st traces.VStep) (got traces.Want, err error) {
		switch st.Op {
		case "Watch":
			// The call comes when the subject's timers say: wait up to a
			// minute past the earliest allowed instant for it.
			limit := time.Minute + time.Duration(*st.Want.NS) - time.Since(t0)
			select {
			case c := <-calls:
				pending = &c
			case <-time.After(limit):
				return got, errors.New("no watch call")
			}
			at := pending.at
			if at >= time.Duration(*st.Want.NS) && at <= time.Duration(*st.Want.NS)+time.Minute {
				at = time.Duration(*st.Want.NS) // within the allowed window
			}
			rv, bm := pending.opts.ResourceVersion, pending.opts.AllowWatchBookmarks
			return traces.Want{Value: &rv, Flag: &bm, NS: ptr.To(int64(at))}, nil
		case "Open", "Refuse":
			if pending == nil {
				return got, errors.New("no watch call to answer")
			}
			if st.Op == "Open" {
				stream = watch.NewFakeWithChanSize(1, false)
				pending.reply <- rwReply{w: stream}
				pending = nil
				return got, nil
			}
			code, _ := strconv.Atoi(*st.Value)
			pending.reply <- rwReply{err: rwRefusal(code)}
			pending = nil
		case "Event":
			e := st.Events[0]
			rv := ""
			if e.Value != nil {
				rv = *e.Value
			} else if e.RV != nil {
				rv = *e.RV
			}
			stream.Action(watch.EventType(e.Type), &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: rv}})
		case "Error":
			code, _ := strconv.Atoi(*st.Value)
			status := apierrors.NewInternalError(errors.New("server error")).ErrStatus
			if code == 410 {
				status = apierrors.NewResourceExpired("too old resource version").ErrStatus
			} else if code == 429 {
				status = apierrors.NewTooManyRequests("slow down", 0).ErrStatus
			}
			status.Details = nil
			if d := time.Duration(*st.NS); d > 0 {
				status.Details = &metav1.StatusDetails{RetryAfterSeconds: int32(d / time.Second)}
			}
			stream.Error(&status)
		case "ErrorNotStatus":
			stream.Error(&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "not-a-status", ResourceVersion: "1"}})
		case "Close":
			stream.Stop()
		case "Stop":
			w.Stop()
			w.Stop()
			// A watch call pending at Stop is answered with a failure, as
			// a server would in time: a subject whose calls take no
			// context (client-go's NewRetryWatcher) ends once it returns.
			synctest.Wait()
			select {
			case c := <-calls:
				c.reply <- rwReply{err: rwRefusal(0)}
			default:
			}
		default:
			return got, fmt.Errorf("unknown operation %q", st.Op)
		}
		return rwReceived(w), nil
	})
}

// rwRefusal is the error a refused watch call fails with.
func rwRefusal(code int) error {
	switch code {
	case 0:
		return errors.New("unexpected EOF")
	case 401:
		return apierrors.NewUnauthorized("no credentials")
	case 403:
		return apierrors.NewForbidden(metav1.SchemeGroupVersion.WithResource("things").GroupResource(), "", errors.New("not allowed"))
	case 410:
		return apierrors.NewResourceExpired("too old resource version")
	}
	return apierrors.NewInternalError(errors.New("etcd is unwell"))
}

// rwReceived is what the consumer receives once the subject settles: every
// event ready, and whether the channel is then closed.
func rwReceived(w prw.Watch) traces.Want {
	var ds []traces.VDelta
	closed := false
	for !closed {
		synctest.Wait()
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				closed = true
				continue
			}
			d := traces.VDelta{Type: string(ev.Type)}
			if st, isStatus := ev.Object.(*metav1.Status); isStatus {
				d.Value = ptr.To(strconv.Itoa(int(st.Code)))
			} else if o, isObj := ev.Object.(metav1.Object); isObj {
				d.Key, d.Value = ptr.To(o.GetNamespace()+"/"+o.GetName()), ptr.To(o.GetResourceVersion())
			}
			ds = append(ds, d)
			continue
		default:
		}
		break
	}
	return traces.Want{N: ptr.To(int64(len(ds))), Deltas: ds, Flag: &closed}
}

func TestVectorsRetryWatcher(t *testing.T) {
	vs := readVectors(t, prw.Component)
	counts := vectorChecks(t, prw.Component, vs, prw.Checks(ours.RetryWatcher()))
	replayOn := func(s prw.Subject) func(traces.Vector) error {
		return func(v traces.Vector) error { return replayRetryWatcherVector(t, s, v) }
	}
	checkVectorReplays(t, prw.Component, vs, pinned(upstream.RetryWatcherDivergences), covered(pinned(upstream.RetryWatcherDivergences), counts), []vectorSubject{
		{name: Ours, replay: replayOn(ours.RetryWatcher())}, {name: Upstream, replay: replayOn(upstream.RetryWatcher())},
	})
}

// TestVectorsRetryWatcherCompares: a vector with one outcome changed (the
// version a watch asks for, an event the consumer gets, the channel's end)
// fails on ours, so the replay compares what the watcher did.
func TestVectorsRetryWatcherCompares(t *testing.T) {
	vs := readVectors(t, prw.Component)
	changes := map[string]func(s *traces.VStep) bool{
		"the version asked for": func(s *traces.VStep) bool {
			if s.Op != "Watch" {
				return false
			}
			s.Want.Value = ptr.To(*s.Want.Value + "0")
			return true
		},
		"an event received": func(s *traces.VStep) bool {
			if len(s.Want.Deltas) == 0 || s.Want.Deltas[0].Type == "ERROR" {
				return false
			}
			s.Want.Deltas[0].Value = ptr.To(*s.Want.Deltas[0].Value + "0")
			return true
		},
		"the channel's end": func(s *traces.VStep) bool {
			if s.Op == "Watch" || s.Op == "Open" {
				return false
			}
			s.Want.Flag = ptr.To(!*s.Want.Flag)
			return true
		},
	}
	for name, change := range changes {
		changed := false
		for _, v := range vs {
			v.Steps = append([]traces.VStep(nil), v.Steps...)
			for i := range v.Steps {
				s := v.Steps[i]
				if s.Want == nil {
					continue
				}
				w := *s.Want
				w.Deltas = append([]traces.VDelta(nil), w.Deltas...)
				s.Want = &w
				if change(&s) {
					v.Steps[i] = s
					if replayRetryWatcherVector(t, ours.RetryWatcher(), v) == nil {
						t.Errorf("%s changed in vector %d step %d: ours still passes", name, v.Header.Seed, i)
					}
					changed = true
					break
				}
			}
			if changed {
				break
			}
		}
		if !changed {
			t.Errorf("no vector has a step whose %s can change", name)
		}
	}
}
