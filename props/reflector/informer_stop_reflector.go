package reflector

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/modelserver"
	"github.com/kverify/kverify/spec/apiserver"
)

// The reflector's side of assembled/stop. stopHeld (informer_stop.go)
// holds a handler call across cancellation, which catches a Run that does
// not wait for its processor; these hold the reflector's calls to the
// server instead, which catches a Run that does not wait for its
// reflector. client-go's Run waits for it: sharedIndexInformer.RunWithContext
// returns only after controller.RunWithContext, which it calls
// (shared_informer.go:904), and that waits for the reflector's goroutine
// (controller.go:207-210, wg.StartWithContext then wg.Wait).

// stopListHeld cancels Run while the reflector's relist LIST is held by
// the server. The held LIST honours its context, as a real HTTP client's
// request does, so the reflector gives it up at once (client-go returns
// from list() on ctx.Done, reflector.go:737-743; ours returns the
// context's error): Run must return with no fake time passing, no request
// may still be held once it has, and nothing may follow, neither when the
// LIST is released nor in the next 10 fake minutes. An informer whose
// reflector does not give its requests Run's context (and so hangs Run
// until the server answers, or leaves the request behind) is caught here.
func stopListHeld(t *testing.T, cfg checkkit.Config, s InformerSubject) error {
	return checkkit.Scenario(t, cfg, "stop with the relist's LIST held across cancellation", func(rec *checkkit.Recorder) error {
		fail := checkkit.ScenarioFail(rec)
		// The list and the watch are served; the watch closes after one
		// event; the re-watch is refused with 410, so the reflector
		// relists, and that LIST is held.
		srv, w, done := heldWorld(fail, s, []modelserver.Fault{{}, {Ends: true, EndAfter: 1}, {Reject: 410}, {Hold: true}}, 1)
		defer done()
		_ = srv.Create("default/o009")
		time.Sleep(time.Minute)
		synctest.Wait()
		if now, _ := srv.Held(); now != 1 {
			fail(GConverge, "a minute after the watch closed and the re-watch was refused with 410, %d requests are held, want 1: the relist's LIST (the 4th request; %d made)", now, srv.Requests())
		}
		rec.Step("cancel Run while the reflector's relist LIST is held", "", "")
		w.cancel()
		w.cancel = nil
		synctest.Wait()
		if !closed(w.done) {
			fail(GCancel, "Run, cancelled while its reflector's relist LIST was held, did not return at once: the LIST honours its context, so the reflector can give it up")
		}
		if now, _ := srv.Held(); now != 0 {
			fail(GRunWaitsReflector, "after Run returned, the reflector's relist LIST is still in flight (held): the reflector's request outlived Run")
		}
		rec.Step("release the server's held answers", "", "")
		srv.Release()
		synctest.Wait()
		w.views(nil)
		w.nothingAfter()
		if msg := stops(srv, false); msg != "" {
			fail(GStops, "%s", msg)
		}
		return nil
	})
}

// stopWatchStopHeld cancels Run while the server holds the reflector's
// Stop of its watch (Fault.HoldStop: the stream ends, the client's Stop
// does not return). Stop takes no context, so the reflector is inside it
// until the test releases it, and Run must not return before: the
// reflector could yet write to the FIFO or make a request. Nothing may
// start meanwhile (no request, no handler call); once Stop is released Run
// must return at once, with nothing after it. An informer whose Run does
// not wait for its reflector returns while Stop is held, in every
// schedule.
func stopWatchStopHeld(t *testing.T, cfg checkkit.Config, s InformerSubject) error {
	return checkkit.Scenario(t, cfg, "stop with the reflector's Stop of its watch held", func(rec *checkkit.Recorder) error {
		fail := checkkit.ScenarioFail(rec)
		// The first watch's Stop is held: the second request's when the
		// informer lists first (a LIST takes no Stop), the first's when it
		// streams its sync anyway (client-go v0.31-v0.34 with
		// WatchListClient on, which a subject cannot opt out of).
		srv, w, done := heldWorld(fail, s, []modelserver.Fault{{HoldStop: true}, {HoldStop: true}}, 2)
		defer done()
		_ = srv.Update("default/o001")
		synctest.Wait()
		rec.Step("cancel Run; the server holds the reflector's Stop of its watch", "", "")
		w.cancel()
		w.cancel = nil
		synctest.Wait()
		atCancel := w.activity()
		if now, ever := srv.Held(); now != 1 {
			if closed(w.done) && ever == 0 {
				fail(GStops, "Run, cancelled, returned without stopping its watch")
			}
			fail(GRunWaitsReflector, "after cancellation, %d calls held (%d ever), want 1: the reflector's Stop of its watch", now, ever)
		}
		if closed(w.done) {
			fail(GRunWaitsReflector, "Run returned while its reflector was still inside the Stop of its watch (held by the server): Run must wait for its reflector")
		}
		w.heldAMinute(atCancel, "its reflector's Stop", GRunWaitsReflector,
			"Run returned while its reflector was still inside the Stop of its watch (held by the server): Run must wait for its reflector")
		rec.Step("release the reflector's Stop", "", "")
		srv.Release()
		synctest.Wait()
		if !closed(w.done) {
			fail(GCancel, "Run, cancelled, did not return once its reflector's Stop of its watch, which it waited for, returned")
		}
		if now, _ := srv.Held(); now != 0 {
			fail(GModelServer, "%d calls still held after Release", now)
		}
		w.views(nil)
		w.nothingAfter()
		if msg := stops(srv, false); msg != "" {
			fail(GStops, "%s", msg)
		}
		return nil
	})
}

// heldWorld runs an informer with the given number of handlers over a
// server of three objects with faults (one of them holding a call), and
// waits for its first sync; done releases what is held and stops it all.
func heldWorld(fail func(string, string, ...any), s InformerSubject, faults []modelserver.Fault, handlers int) (*modelserver.Server, *iworld, func()) {
	srv := modelserver.NewServer(apiserver.Config{}, faults)
	seed(srv, 3)
	w := newIWorld(fail, s, srv, false, 0)
	for range handlers {
		w.add()
	}
	done := func() {
		srv.Release()
		w.stop(false)
		srv.Close()
	}
	w.run()
	synctest.Wait()
	if un := w.synced(); un != "" {
		done()
		fail(GSyncedAfter, "after the first list, not synced: %s", un)
	}
	return srv, w, done
}
