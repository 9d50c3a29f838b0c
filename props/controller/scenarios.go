package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/modelserver"
	spec "github.com/kverify/kverify/spec/controller"
)

// started runs a fixed scenario's controller: built over srv with workers
// and lim, scripted, run, and its first list processed.
func started(s Subject, fail func(string, string, ...any), srv *modelserver.Server, workers int, lim spec.Limiter, script map[string][]behaviour) *world {
	w := newWorld(fail, srv, lim)
	w.script = script
	w.build(s, false, workers, lim)
	w.run()
	time.Sleep(time.Second)
	synctest.Wait()
	w.check()
	return w
}

// gaps are the times between the starts of key's reconciles from the
// from-th on.
func (w *world) gaps(key string, from int) []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.starts[key]
	var out []time.Duration
	for i := from + 1; i < len(st); i++ {
		out = append(out, st[i].Sub(st[i-1]))
	}
	return out
}

func (w *world) count(key string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.starts[key])
}

// setScript replaces key's script.
func (w *world) setScript(key string, bs ...behaviour) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.script[key] = bs
}

// rearm makes later holds wait for the next release.
func (w *world) rearm() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.released = make(chan struct{})
}

func (w *world) write(fail func(string, string, ...any), op, key string) {
	var err error
	switch op {
	case "create":
		err = w.srv.Create(key)
	case "update":
		err = w.srv.Update(key)
	case "delete":
		err = w.srv.Delete(key)
	}
	if err != nil {
		fail(GModelServer, "%s %s: %v", op, key, err)
	}
}

func durs(ds []time.Duration) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.String())
	}
	return "[" + strings.Join(out, " ") + "]"
}

func retry(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		return scenario(t, cfg, s, "retry", func(rec *checkkit.Recorder, fail func(string, string, ...any)) {
			lim := spec.Limiter{Base: time.Second, Max: time.Hour}
			srv := newServer(fail, 1)
			const k = "default/o000"
			w := started(s, fail, srv, 1, lim, map[string][]behaviour{k: {{Fail: true}, {Fail: true}, {}}})
			defer w.stop(false)
			expect := func(g, what string, from int, want ...time.Duration) {
				time.Sleep(10 * time.Minute)
				synctest.Wait()
				w.check()
				if got := w.gaps(k, from); durs(got) != durs(want) {
					fail(g, "%s: the reconciles came %s apart, want %s", what, durs(got), durs(want))
				}
			}
			rec.Step("reconcile fails, fails, succeeds", "", "")
			expect(GRetryDelay, "two failures then a success (the limiter's base 1s, doubled)", 0, time.Second, 2*time.Second)

			rec.Step("update; reconcile fails, succeeds", "", "")
			n := w.count(k)
			w.setScript(k, behaviour{Fail: true}, behaviour{})
			w.write(fail, "update", k)
			expect(GRetryDelay, "after a success, a failure then a success (failures forgotten: base again)", n, time.Second)

			rec.Step("update; reconcile requeues after 7s, succeeds", "", "")
			n = w.count(k)
			w.setScript(k, behaviour{RequeueAfter: 7 * time.Second}, behaviour{})
			w.write(fail, "update", k)
			expect(GRequeue, "a requeue after 7s", n, 7*time.Second)

			rec.Step("update; reconcile fails, requeues after 5s, fails, succeeds", "", "")
			n = w.count(k)
			w.setScript(k, behaviour{Fail: true}, behaviour{RequeueAfter: 5 * time.Second}, behaviour{Fail: true}, behaviour{})
			w.write(fail, "update", k)
			expect(GRetryDelay, "a failure, a requeue after 5s, a failure (a requeue forgets the failures: base again)", n, time.Second, 5*time.Second, time.Second)

			rec.Step("update; reconcile fails and asks for a requeue after 1h, succeeds", "", "")
			n = w.count(k)
			w.setScript(k, behaviour{Fail: true, RequeueAfter: time.Hour}, behaviour{})
			w.write(fail, "update", k)
			expect(GRetryDelay, "an error with a RequeueAfter of 1h (the error wins: the limiter's base)", n, time.Second)
			w.stop(true)
		})
	}
}

func wakeup(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		return scenario(t, cfg, s, "wakeup", func(rec *checkkit.Recorder, fail func(string, string, ...any)) {
			lim := spec.Limiter{Base: time.Second, Max: time.Minute}
			srv := newServer(fail, 2)
			w := started(s, fail, srv, 2, lim, map[string][]behaviour{})
			defer w.stop(false)
			for _, op := range []string{"update", "delete"} {
				const k = "default/o000"
				rec.Step(fmt.Sprintf("%s %s while its reconcile is held", op, k), "", "")
				w.rearm()
				w.setScript(k, behaviour{Hold: true})
				n := w.count(k)
				w.write(fail, "update", k)
				synctest.Wait()
				if w.count(k) != n+1 {
					fail(GWakeup, "an update of %s was not reconciled", k)
				}
				w.write(fail, op, k)
				time.Sleep(time.Minute)
				synctest.Wait()
				w.check()
				if got := w.count(k); got != n+1 {
					fail(GOneAtATime, "%s's reconcile is held, yet %d more started after a %s", k, got-n-1, op)
				}
				w.release()
				time.Sleep(time.Second)
				synctest.Wait()
				w.check()
				want := w.serverState()
				w.mu.Lock()
				reads := w.reads[k]
				w.mu.Unlock()
				got := reads[len(reads)-1]
				rv, present := want[k]
				if len(reads) != n+2 || got.Present != present || (present && got.RV != rv) {
					fail(GWakeup, "after a %s during its held reconcile, %s was reconciled %d more times, last reading %s; want once more, reading the server's state", op, k, len(reads)-n-1, got)
				}
				if op == "delete" {
					w.write(fail, "create", k)
				}
			}
			w.stop(true)
		})
	}
}

func isolation(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		return scenario(t, cfg, s, "isolation", func(rec *checkkit.Recorder, fail func(string, string, ...any)) {
			lim := spec.Limiter{Base: time.Second, Max: time.Minute}
			srv := newServer(fail, 6)
			script := map[string][]behaviour{
				"default/o000": {{Hold: true}},
				"default/o001": {{Panic: true}},
				"default/o002": {{Sleep: 5 * time.Minute}},
			}
			rec.Step("o000 held, o001 panics, o002 takes 5m; 2 workers", "", "")
			w := started(s, fail, srv, 2, lim, script)
			defer w.stop(false)
			for _, k := range keyPool(6)[3:] {
				w.write(fail, "update", k)
			}
			rec.Step("update o003..o005; wait 10m", "", "")
			time.Sleep(10 * time.Minute)
			synctest.Wait()
			w.check()
			want := w.serverState()
			w.mu.Lock()
			var bad []string
			for _, k := range keyPool(6)[1:] {
				reads := w.reads[k]
				if len(reads) == 0 || !reads[len(reads)-1].Present || reads[len(reads)-1].RV != want[k] {
					bad = append(bad, fmt.Sprintf("%s@%d read %v", k, want[k], reads))
				}
			}
			if n := len(w.starts["default/o001"]); n != 2 {
				bad = append(bad, fmt.Sprintf("default/o001 reconciled %d times after its panic, want once more", n-1))
			}
			w.mu.Unlock()
			if len(bad) > 0 {
				fail(GIsolation, "with o000's reconcile held: %s", strings.Join(bad, "; "))
			}
			rec.Step("release o000", "", "")
			w.release()
			w.settle()
			w.stop(true)
		})
	}
}

func stop(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		lim := spec.Limiter{Base: time.Second, Max: time.Minute}
		if err := scenario(t, cfg, s, "stop before the first list", func(rec *checkkit.Recorder, fail func(string, string, ...any)) {
			srv := newServer(fail, 2, modelserver.Fault{Hold: true})
			w := newWorld(fail, srv, lim)
			w.build(s, false, 2, lim)
			w.run()
			defer w.stop(false)
			time.Sleep(time.Minute)
			synctest.Wait()
			w.check()
			if n := w.count("default/o000") + w.count("default/o001"); n > 0 {
				fail(GSyncFirst, "%d reconciles with the first list held by the server", n)
			}
			rec.Step("cancel with the first list held", "", "")
			w.stop(true)
		}); err != nil {
			return err
		}
		if err := scenario(t, cfg, s, "reconciles in flight", func(rec *checkkit.Recorder, fail func(string, string, ...any)) {
			srv := newServer(fail, 3)
			rec.Step("o000, o001, o002 take 1m, 2m, 3m; 2 workers", "", "")
			w := started(s, fail, srv, 2, lim, map[string][]behaviour{
				"default/o000": {{Sleep: time.Minute}}, "default/o001": {{Sleep: 2 * time.Minute}}, "default/o002": {{Sleep: 3 * time.Minute}}})
			defer w.stop(false)
			w.mu.Lock()
			w.cancelled = true
			inflight := w.inflight
			w.mu.Unlock()
			if inflight == 0 {
				fail(GSyncFirst, "a second after Run, with three objects listed, no reconcile runs")
			}
			rec.Step(fmt.Sprintf("cancel with %d reconciles in flight", inflight), "", "")
			w.cancel()
			w.cancel = nil
			w.awaitReturn()
			w.nothingAfter()
			again := make(chan struct{})
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				defer close(again)
				w.c.Run(ctx)
			}()
			synctest.Wait()
			returned := closed(again)
			cancel()
			<-again
			srv.Close()
			if !returned {
				fail(GNothingAfter, "a second Run, after the first returned, does not return")
			}
		}); err != nil {
			return err
		}
		return nil
	}
}

func syncFirst(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		lim := spec.Limiter{Base: time.Second, Max: time.Minute}
		return scenario(t, cfg, s, "a slow handler on the first list", func(rec *checkkit.Recorder, fail func(string, string, ...any)) {
			// The handler takes 30s over each of the first list's later
			// adds: a worker that starts before the handler has been
			// given the whole first list (client-go: the registration's
			// HasSynced, not the informer's) reconciles o000 meanwhile.
			srv := newServer(fail, 3)
			w := newWorld(fail, srv, lim)
			w.initial = keyPool(3)
			w.delays = map[string][]time.Duration{"default/o001": {30 * time.Second}, "default/o002": {30 * time.Second}}
			w.build(s, false, 2, lim)
			w.run()
			defer w.stop(false)
			rec.Step("first list of 3; the handler takes 30s over o001 and o002", "", "")
			time.Sleep(5 * time.Minute)
			synctest.Wait()
			w.check()
			if n := w.count("default/o000") + w.count("default/o001") + w.count("default/o002"); n == 0 {
				fail(GSyncFirst, "five minutes after a first list of 3 objects, nothing was reconciled")
			}
			w.stop(true)
		})
	}
}
