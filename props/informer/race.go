package informer

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/linearizability"
	"github.com/kverify/kverify/props/checkkit"
)

// CheckRace is the fan-out's race probe.
const CheckRace = "processor/race"

// informerRaceRounds is how many rounds the probe runs per pair in the
// default gate: each round builds a fan-out (for client-go, a whole
// informer), so a round costs far more than a queue's.
const informerRaceRounds = checkkit.RaceRounds / 2

// fanRace is one race of the probe, on a started fan-out whose store
// holds a and b and which has handlers h1 and h2 registered before Start.
type fanRace struct {
	name string
	// a runs on the probe's goroutine, b on the racer's; both must
	// return. Either may register h3 (in *h3 with its registration).
	a, b func(x *fanRound)
	// check looks at the handlers once the fan-out is quiescent.
	check func(x *fanRound) string
}

// fanRound is the state of one round.
type fanRound struct {
	f       FanOut
	h1, h2  *probe
	r1, r2  Registration
	h3      *probe
	r3      Registration
	stopped bool
	addErr  error
}

var initAB = expectation{init: []string{"a", "b"}}

var fanRaces = []fanRace{
	{name: "Emit/AddHandler",
		a: func(x *fanRound) { x.f.Emit(Add, "x") },
		b: func(x *fanRound) { x.r3, x.addErr = x.f.AddHandler(x.h3) },
		check: func(x *fanRound) string {
			if x.addErr != nil {
				return fmt.Sprintf("AddHandler: %v", x.addErr)
			}
			for _, h := range []*probe{x.h1, x.h2} {
				if msg := (expectation{init: initAB.init, seq: []string{addEv("x")}}).conforms(h.received(), true); msg != "" {
					return h.name + ": " + msg
				}
			}
			// The new handler sees x once: in its initial list, or as the
			// event after it, never both, never neither.
			got := x.h3.received()
			before := expectation{init: []string{"a", "b", "x"}}
			after := expectation{init: initAB.init, seq: []string{addEv("x")}}
			if before.conforms(got, true) != "" && after.conforms(got, true) != "" {
				return fmt.Sprintf("the handler added as x was emitted received %v: want x once, in its initial list [a b x] or as add:x after [a b]", got)
			}
			return ""
		}},
	{name: "Emit/Emit",
		a: func(x *fanRound) { x.f.Emit(Add, "x") },
		b: func(x *fanRound) { x.f.Emit(Add, "y") },
		check: func(x *fanRound) string {
			g1, g2 := x.h1.received(), x.h2.received()
			xy := expectation{init: initAB.init, seq: []string{addEv("x"), addEv("y")}}
			yx := expectation{init: initAB.init, seq: []string{addEv("y"), addEv("x")}}
			if xy.conforms(g1, true) != "" && yx.conforms(g1, true) != "" {
				return fmt.Sprintf("h1 received %v: want [a b] then add:x and add:y once each", g1)
			}
			if !slices.Equal(g1[2:], g2[min(2, len(g2)):]) {
				return fmt.Sprintf("the handlers saw the two events in different orders: h1 %v, h2 %v", g1, g2)
			}
			return ""
		}},
	{name: "Emit/RemoveHandler",
		a: func(x *fanRound) { x.f.Emit(Update, "a") },
		b: func(x *fanRound) { x.addErr = x.f.RemoveHandler(x.r1) },
		check: func(x *fanRound) string {
			if x.addErr != nil {
				return fmt.Sprintf("RemoveHandler: %v", x.addErr)
			}
			if msg := (expectation{init: initAB.init, seq: []string{updateEv("a")}}).conforms(x.h1.received(), false); msg != "" {
				return "the removed handler: " + msg
			}
			if !isClosed(x.r1.Done()) {
				return "the removed handler's Done is open although no call is in progress"
			}
			if msg := (expectation{init: initAB.init, seq: []string{updateEv("a")}}).conforms(x.h2.received(), true); msg != "" {
				return "h2: " + msg
			}
			return ""
		}},
	{name: "Emit/Stop",
		a: func(x *fanRound) { x.f.Emit(Add, "x") },
		b: func(x *fanRound) { x.f.Stop(); x.stopped = true },
		check: func(x *fanRound) string {
			for _, h := range []*probe{x.h1, x.h2} {
				if msg := (expectation{init: initAB.init, seq: []string{addEv("x")}}).conforms(h.received(), false); msg != "" {
					return h.name + ": " + msg
				}
			}
			if !isClosed(x.r1.Done()) || !isClosed(x.r2.Done()) {
				return "a handler's Done is open after Stop returned"
			}
			return ""
		}},
}

// raceCheck runs every race for informerRaceRounds rounds (more while
// cfg.Budget lasts).
func raceCheck(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		pairs := len(fanRaces)
		if s.Linear != nil {
			pairs += 2 // Distribute/Distribute and Distribute/shutdown
		}
		sched := checkkit.NewRaceSchedule(cfg, pairs, informerRaceRounds)
		defer sched.Stop()
		return checkkit.InBubble(t, func() error {
			return sched.Loop(t, 1, func(r *checkkit.Racer, round int) error {
				for _, fr := range fanRaces {
					if !sched.Runs(fr.name) {
						continue
					}
					if err := fanRaceRound(s, r, fr, sched.At(fr.name, round), cfg); err != nil {
						return err
					}
				}
				if s.Linear != nil {
					return processorRaceRound(s.Linear, r, sched, round, cfg)
				}
				return nil
			})
		})
	}
}

func fanRaceRound(s Subject, r *checkkit.Racer, fr fanRace, at checkkit.RaceAt, cfg checkkit.Config) error {
	cfg.Progress.Op(at.String())
	r.Park()
	x := &fanRound{f: s.New(), h1: newProbe("h1"), h2: newProbe("h2"), h3: newProbe("h3")}
	defer func() {
		r.Park()
		if !x.stopped {
			x.f.Stop()
		}
		synctest.Wait()
	}()
	var err error
	if x.r1, err = x.f.AddHandler(x.h1); err != nil {
		return err
	}
	if x.r2, err = x.f.AddHandler(x.h2); err != nil {
		return err
	}
	x.f.Emit(Add, "a")
	x.f.Emit(Add, "b")
	x.f.Start()
	settle := func() {
		synctest.Wait()
		time.Sleep(time.Second) // an informer's reflector may back off
		synctest.Wait()
	}
	settle()
	if err := raceChecked(r, cfg, at, func() { fr.a(x) }, func() { fr.b(x) }); err != nil {
		return err
	}
	r.Park()
	settle()
	if msg := fr.check(x); msg != "" {
		return at.Broke(GAtomic, "on a started fan-out with a and b stored and h1, h2 added before Start: %s", msg)
	}
	return nil
}

// processorRaceRound races, on the subject's processor (Subject.Linear),
// Distribute with the processor's shutdown (its Run's context cancelled)
// and with another Distribute: both must return, Run too, and each
// handler gets each value at most once (exactly once without the
// shutdown).
func processorRaceRound(newFanOut func() linearizability.FanOut, r *checkkit.Racer, sched *checkkit.RaceSchedule, round int, cfg checkkit.Config) error {
	for _, stop := range []bool{true, false} {
		pair := "Distribute/Distribute"
		if stop {
			pair = "Distribute/shutdown"
		}
		if !sched.Runs(pair) {
			continue
		}
		at := sched.At(pair, round)
		cfg.Progress.Op(at.String())
		r.Park()
		f := newFanOut()
		var mu sync.Mutex
		got := map[int][]string{}
		for h := range 2 {
			f.AddHandler(func(v string) {
				mu.Lock()
				got[h] = append(got[h], v)
				mu.Unlock()
			})
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ran := make(chan struct{})
		go func() {
			defer close(ran)
			f.Run(ctx)
		}()
		f.Distribute("v0")
		synctest.Wait()
		second := func() { f.Distribute("v2") }
		if stop {
			second = func() { cancel(); <-ran }
		}
		if err := raceChecked(r, cfg, at, func() { f.Distribute("v1") }, second); err != nil {
			return err
		}
		r.Park()
		synctest.Wait()
		cancel()
		<-ran
		mu.Lock()
		g0, g1 := got[0], got[1]
		mu.Unlock()
		want := []string{"v0", "v1", "v2"}
		for h, g := range [][]string{g0, g1} {
			if stop {
				if len(g) == 0 || g[0] != "v0" || len(g) > 2 || (len(g) == 2 && g[1] != "v1") {
					return at.Broke(GAtomic, "handler %d received %v: want v0, then v1 at most once", h, g)
				}
				continue
			}
			if len(g) != 3 || g[0] != "v0" || !slices.Equal(slices.Sorted(slices.Values(g)), want) {
				return at.Broke(GAtomic, "handler %d received %v: want v0, then v1 and v2 once each", h, g)
			}
		}
		// Two Distributes at once may reach the listeners in different
		// orders: an informer distributes from one goroutine, and
		// linear/listener holds each listener to one order.
	}
	return nil
}

// raceChecked races a and b; both must return.
func raceChecked(r *checkkit.Racer, cfg checkkit.Config, at checkkit.RaceAt, a, b func()) error {
	blocked, err := r.RaceChecked(cfg.Progress, at, a, b)
	if err == nil && blocked {
		err = at.Broke(GLiveness, "a call is still blocked after the other returned")
		cfg.Progress.Abandon(err) // its lock may be held: no cleanup
	}
	return err
}
