package reflector

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/modelserver"
	"github.com/kverify/kverify/spec/apiserver"
)

// hold makes the handler's first call about key wait until the returned
// func is called (which is idempotent).
func (v *viewer) hold(key string) (release func()) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.holdKey, v.gate = key, make(chan struct{})
	var once sync.Once
	gate := v.gate
	return func() { once.Do(func() { close(gate) }) }
}

// wait blocks a call about the held key until the gate opens.
func (v *viewer) wait(obj any) {
	k, _, _ := objKey(obj)
	v.mu.Lock()
	gate, held := v.gate, v.holdKey != "" && k == v.holdKey
	v.mu.Unlock()
	if held {
		<-gate
	}
}

func (v *viewer) inProgress() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.busy
}

// stopHeld cancels Run while a handler call is in progress and holds it
// there: Run must not return before the call does (client-go's Run waits
// for its processor, which waits for its listeners: shared_informer.go
// :596-598, :1287-1300), nothing may start meanwhile (no request, no other
// handler call), and once the call returns Run must return at once, with
// nothing after it. An informer whose Run leaves its processor (or its
// listeners) running is caught here, in every schedule: the held call is
// in progress whenever such a Run returns.
func stopHeld(t *testing.T, cfg checkkit.Config, s InformerSubject) error {
	return checkkit.Scenario(t, cfg, "stop with a handler call held across cancellation", func(rec *checkkit.Recorder) error {
		fail := checkkit.ScenarioFail(rec)
		srv := modelserver.NewServer(apiserver.Config{}, nil)
		seed(srv, 3)
		w := newIWorld(fail, s, srv, false, 0)
		w.add()
		w.add()
		release := w.viewers[0].hold("default/o001")
		defer func() {
			release()
			w.stop(false)
			srv.Close()
		}()
		w.run()
		synctest.Wait()
		if n := w.viewers[0].inProgress(); n != 1 {
			fail(GSyncedAfter, "after the first list, handler 0 has %d calls in progress, want 1: its initial add of default/o001, held", n)
		}
		// Handler 1 takes these; handler 0 has them queued behind the held call.
		_ = srv.Update("default/o002")
		_ = srv.Create("default/o009")
		synctest.Wait()
		rec.Step("cancel Run while handler 0's OnAdd(default/o001) is held", "", "")
		w.cancel()
		w.cancel = nil
		synctest.Wait()
		w.heldAMinute(w.activity(), "a handler call", GNothingAfterStop,
			"Run returned while handler 0's OnAdd(default/o001) was in progress (held across cancellation): Run must wait for every handler call")
		rec.Step("release handler 0's call", "", "")
		release()
		synctest.Wait()
		if !closed(w.done) {
			fail(GCancel, "Run, cancelled, did not return once the handler call it waited for returned")
		}
		srv.Close()
		w.views(nil)
		w.nothingAfter()
		return nil
	})
}

// heldAMinute writes to the server and lets a fake minute pass while what
// is held across cancellation: Run must not return meanwhile (else g,
// returned), and nothing may start after atCancel, the activity at cancel.
func (w *iworld) heldAMinute(atCancel atReturn, what, g, returned string) {
	_ = w.srv.Create("default/after-cancel")
	_ = w.srv.Update("default/o000")
	time.Sleep(time.Minute)
	synctest.Wait()
	if closed(w.done) {
		w.fail(g, "%s", returned)
	}
	if now := w.activity(); now != atCancel {
		w.fail(GNothingAfterStop, "while Run was cancelled and %s held: %d handler calls started (%d at cancel), %d requests (%d at cancel)",
			what, now.started, atCancel.started, now.requests, atCancel.requests)
	}
}
