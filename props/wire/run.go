package wire

import (
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
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
	// SingleShot is the subject's (Subject.SingleShot).
	SingleShot bool
	model      *modelserver.Server
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
	// Shot is, for a SingleShot subject, where its one shot stood then.
	Shot Shot
}

// Shot is where a single-shot client's one list and watch stand, read
// from the server's records (Subject.SingleShot). Ended: the server ended
// the client's last request (a failure, a watch stream closed, cut or
// ended by an ERROR event) or sent it a malformed event it may not have
// got past. RVs are then the versions whose state the client may owe:
// the last version the shot was sent before its end (a complete list's,
// or an event's of its watch; of a watch-list stream, the end
// bookmark's: its initial events are no state until then), 0 for none;
// after a malformed event, also the state of a client that went past it
// (ShotNow, if the stream lasts). Unknown: the shot ended amid a watch-list
// stream's initial events, which a client may have applied in part: no
// state is owed.
type Shot struct {
	Ended, Unknown bool
	RVs            []int64
}

// ShotNow, among Shot.RVs, is the server's state at the sample.
const ShotNow = -1

// shotOf reads a single-shot client's shot from the requests so far.
func shotOf(qs []Request) Shot {
	var base int64 // the last version sent before the last request
	var last *Request
	for i := range qs {
		q := &qs[i]
		if q.Verb != "list" && q.Verb != "watch" && q.Verb != "held" {
			continue
		}
		if last != nil {
			base = max(base, shotVersions(*last).before)
		}
		last = q
	}
	if last == nil || last.Verb == "held" {
		return Shot{}
	}
	v := shotVersions(*last)
	before := max(base, v.before)
	switch {
	case last.Code != 200:
		return Shot{Ended: true, RVs: []int64{before}}
	case last.Verb == "list":
		return Shot{}
	case v.unknown:
		return Shot{Ended: true, Unknown: true}
	case v.malformed:
		past := int64(ShotNow)
		if v.ended {
			past = max(base, v.past)
		}
		return Shot{Ended: true, RVs: []int64{before, past}}
	case v.ended:
		return Shot{Ended: true, RVs: []int64{before}}
	}
	return Shot{}
}

// shotRequest is what one list or watch sent a single-shot client.
type shotRequest struct {
	// before: the last version sent before any malformed event or ERROR
	// (a complete list's, a watch event's); past: the last of a client
	// that went past malformed events.
	before, past int64
	// ended: a watch stream the server ended (closed, cut, ERROR);
	// malformed: it carried a malformed event; unknown: it ended, or
	// turned malformed, amid a watch-list's initial events.
	ended, malformed, unknown bool
}

func shotVersions(q Request) shotRequest {
	var r shotRequest
	if q.Verb == "list" && q.Code == 200 && q.Continue == "" {
		if n, ok := exactVersion(q.RV); ok {
			r.before, r.past = n, n
		}
	}
	if q.Verb != "watch" || q.Code != 200 {
		return r
	}
	bad := map[string]int{}
	for _, e := range q.Malformed {
		bad[e]++
	}
	initial := q.Options.SendInitialEvents != nil && *q.Options.SendInitialEvents
	for _, e := range q.Events {
		if strings.HasPrefix(e, "ERROR") {
			r.ended = true
			break
		}
		if bad[e] > 0 {
			bad[e]--
			r.malformed = true
			r.unknown = r.unknown || initial
			continue
		}
		typ, rest, _ := strings.Cut(e, " ")
		v, end := strings.CutSuffix(rest, " end")
		if initial && !end {
			continue
		}
		initial = false
		if n, ok := exactVersion(v); ok && (typ != "BOOKMARK" || end) {
			r.past = max(r.past, n)
			if !r.malformed {
				r.before = r.past
			}
		}
	}
	r.ended = r.ended || q.Cut || q.Ended
	r.unknown = r.unknown || r.ended && initial
	return r
}

// owed are the states the client may owe at sample s, any one of which
// converges it (none: nothing is owed): the server's state then, or, for
// a single-shot client whose shot has ended, the states its Shot names.
func (r *Run) owed(s Sample) []map[string]string {
	if !r.SingleShot || !s.Shot.Ended {
		now, _ := r.snapshot(s.RV)
		return []map[string]string{now}
	}
	var out []map[string]string
	for _, rv := range s.Shot.RVs {
		switch rv {
		case ShotNow:
			rv = s.RV
		case 0:
			out = append(out, map[string]string{})
			continue
		}
		snap, _ := r.snapshot(rv)
		out = append(out, snap)
	}
	return out
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
			hs := httptest.NewUnstartedServer(srv)
			if s.TLS {
				hs.StartTLS()
			} else {
				hs.Start()
			}
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
	run := &Run{Schedule: sc, model: model, SingleShot: s.SingleShot}
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
		smp := Sample{Step: step, Order: srv.orderNow(), Lines: len(c.Lines()), RV: rvNow(model), State: st, Err: err}
		if s.SingleShot {
			smp.Shot = shotOf(srv.Requests())
		}
		return smp
	}
	// ended: a single-shot client's shot has ended (it will not sync if
	// it has not).
	ended := func() bool { return s.SingleShot && shotOf(srv.Requests()).Ended }
	if s.Realtime {
		// a process needs a moment to start: wait for its first sync
		// (bounded) so that the schedule's steps meet a running client.
		for deadline := time.Now().Add(bound); time.Now().Before(deadline) && !hasSynced(c.Lines()) && !ended(); {
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
	// A single-shot client's shot that failed may be retried inside the
	// client (client-go retries a 429 or 504 after its Retry-After, a
	// GET whose connection broke): its end counts once the server has
	// had no request from it for shotQuiet (in fake time in process).
	quiet := shotQuietReal
	if inBubble {
		quiet = shotQuietFake
	}
	requests, changed := srv.count(), time.Now()
	for {
		smp := sample(len(sc.Ops))
		run.Samples = append(run.Samples, smp)
		if n := srv.count(); n != requests {
			requests, changed = n, time.Now()
		}
		if run.converged(smp, c.Lines()) && (!smp.Shot.Ended || time.Since(changed) >= quiet) {
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
