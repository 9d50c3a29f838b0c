package wire

import (
	"fmt"
	"net/http/httptest"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/modelserver"
	"github.com/kverify/kverify/spec/apiserver"
)

// Run is what one schedule left for the judge: the server's records and
// the client's lines and states.
type Run struct {
	Schedule Schedule
	Requests []Request
	Sent     []Sent
	// Lines are the client's lines (Client.Lines) at the end.
	Lines []Line
	// Samples are the client's states after each step, and the last one
	// after the recovery.
	Samples []Sample
	// Recovered is how long after the last step the client took to
	// converge; Converged is false if it did not within the bound.
	Recovered time.Duration
	Converged bool
	// StartErr, StopErr are the client's start and stop errors.
	StartErr, StopErr error
	model             *modelserver.Server
	// snapshots memoizes the model's states by version: a state at a
	// version never changes.
	snapshots map[int64]map[string]string
}

// Sample is the client's state at a quiescent point.
type Sample struct {
	Step int // the step after which it was taken; len(Ops) for the last
	// Order is the server's order at the sample (Server.Sent, Request.Order).
	Order int
	// Lines is how many lines the client had written then.
	Lines int
	// RV is the server's version then.
	RV    int64
	State Line
	Err   error
}

// snapshot is the server's state at rv (nil, false if rv is not a
// version it had).
func (r *Run) snapshot(rv int64) (map[string]string, bool) {
	if snap, ok := r.snapshots[rv]; ok {
		return snap, true
	}
	snap, ok := r.read(rv)
	if ok { // not a failure: a version ahead of the server may come
		if r.snapshots == nil {
			r.snapshots = map[int64]map[string]string{}
		}
		r.snapshots[rv] = snap
	}
	return snap, ok
}

// read reads the state at rv from the model.
func (r *Run) read(rv int64) (map[string]string, bool) {
	var objs []apiserver.Object
	var err error
	r.model.Model(func(m *apiserver.Server) { objs, err = m.Snapshot(rv) })
	if err != nil {
		return nil, false
	}
	out := make(map[string]string, len(objs))
	for _, o := range objs {
		out[o.Key] = strconv.FormatInt(o.RV, 10)
	}
	return out, true
}

// order is the server's current order.
func (s *Server) orderNow() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.order
}

// Play runs sc on a client of s and returns what the judge needs: in a
// synctest bubble over the in-memory transport, or for a Realtime subject
// over a loopback listener in real time.
func Play(t *testing.T, rec *checkkit.Recorder, s Subject, sc Schedule) *Run {
	if s.Realtime {
		bound := recoverReal + time.Duration(len(sc.Faults))*recoverRealPerFault
		return play(rec, s, sc.Realtime(), bound, 100*time.Millisecond, func(srv *Server) (string, func()) {
			hs := httptest.NewServer(srv)
			return hs.URL, func() { hs.CloseClientConnections(); hs.Close() }
		})
	}
	bound := recoverFake
	for _, f := range sc.Faults {
		if f.DropEndBookmark || f.Slow > 0 || f.NoTimeout {
			bound += stallCost
		}
	}
	var run *Run
	checkkit.Bubble(t, func() {
		run = play(rec, s, sc, bound, time.Second, func(srv *Server) (string, func()) {
			return "http://kverify.invalid", func() {}
		})
	})
	return run
}

// play runs sc: the server with its objects and faults, the client, each
// step then a quiescent point (synctest.Wait in a bubble, a sample either
// way), then the recovery: a sample every poll until the client converges
// or bound passes.
func play(rec *checkkit.Recorder, s Subject, sc Schedule, bound, poll time.Duration, listen func(*Server) (string, func())) *Run {
	inBubble := !s.Realtime
	settle := func() {
		if inBubble {
			synctest.Wait()
		}
	}
	model := modelserver.NewServer(apiserver.Config{}, sc.Faults)
	srv := NewServer(model)
	srv.Limit = maxPerSchedule + 1
	run := &Run{Schedule: sc, model: model}
	defer func() {
		run.Requests, run.Sent = srv.Requests(), srv.sentVersions()
	}()
	if err := srv.Populate(sc.Objects); err != nil {
		run.StartErr = fmt.Errorf("model server: %w", err)
		return run
	}
	url, closeListener := listen(srv)
	defer closeListener()
	defer model.Close()
	var rt = Transport(srv)
	if s.Realtime {
		rt = nil
	}
	rec.Step(fmt.Sprintf("start %s (%s)", s.Name, sc), "", "")
	c, err := s.Start(url, rt)
	if err != nil {
		run.StartErr = err
		return run
	}
	sample := func(step int) Sample {
		settle()
		st, err := c.State()
		return Sample{Step: step, Order: srv.orderNow(), Lines: len(c.Lines()), RV: rvNow(model), State: st, Err: err}
	}
	if s.Realtime {
		// a process needs a moment to start: wait for its first sync
		// (bounded) so that the schedule's steps meet a running client.
		for deadline := time.Now().Add(bound); time.Now().Before(deadline) && !hasSynced(c.Lines()); {
			time.Sleep(poll)
			rec.Progress().Beat() // waiting in real time is progress
		}
	}
	settle()
	for i, op := range sc.Ops {
		rec.Step(op.String(), "", "")
		if op.Kind == OpWait {
			time.Sleep(op.Wait)
			rec.Progress().Beat()
		} else if err := srv.Apply(op); err != nil {
			run.StartErr = fmt.Errorf("model server refused %s: %w", op, err)
			break
		}
		run.Samples = append(run.Samples, sample(i))
	}
	start := time.Now()
	for {
		smp := sample(len(sc.Ops))
		run.Samples = append(run.Samples, smp)
		if run.converged(smp, c.Lines()) {
			run.Converged, run.Recovered = true, time.Since(start)
			break
		}
		if smp.Err != nil || time.Since(start) >= bound {
			// A client that cannot say its state is judged on that (a
			// dead process need not be waited for).
			break
		}
		time.Sleep(poll)
		rec.Progress().Beat()
	}
	rec.Step("stop", "", "")
	run.Lines = c.Lines()
	run.StopErr = c.Stop()
	settle()
	return run
}

func rvNow(m *modelserver.Server) int64 {
	rv, _ := m.Current()
	return rv
}

func hasSynced(lines []Line) bool {
	for _, l := range lines {
		if l.Type == LineSynced {
			return true
		}
	}
	return false
}
