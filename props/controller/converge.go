package controller

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/modelserver"
	"github.com/kverify/kverify/spec/apiserver"
	spec "github.com/kverify/kverify/spec/controller"
	"pgregory.net/rapid"
)

// poolSize is the number of keys a random run writes.
const poolSize = 10

func behaviourGen() *rapid.Generator[behaviour] {
	return rapid.Custom(func(t *rapid.T) behaviour {
		b := behaviour{Sleep: rapid.SampledFrom([]time.Duration{0, 0, 10 * time.Millisecond, time.Second, 30 * time.Second, 5 * time.Minute}).Draw(t, "sleep")}
		switch checkkit.Choice(3, 3, 1, 1).Draw(t, "outcome") {
		case 1:
			b.Fail = true
		case 3:
			// An error and a RequeueAfter: the error wins.
			b.Fail = true
			b.RequeueAfter = time.Hour
		case 2:
			b.RequeueAfter = rapid.SampledFrom([]time.Duration{time.Millisecond, time.Second, time.Minute}).Draw(t, "requeue-after")
		}
		return b
	})
}

func converge(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		cfg.Checks = max(cfg.Checks, Schedules)
		return checkkit.Rapid(t, cfg, func(rt *rapid.T, rec *checkkit.Recorder) {
			checkkit.Bubble(t, func() {
				rec.Timed()
				fail := func(g, f string, a ...any) { rec.Fail(rt, g, f, a...) }
				noWL := rapid.Bool().Draw(rt, "server-without-watch-list")
				watchList := !s.NoWatchList && rapid.Bool().Draw(rt, "watch-list")
				n := rapid.IntRange(0, poolSize).Draw(rt, "objects")
				faults := rapid.SliceOfN(modelserver.FaultGen(), 0, 6).Draw(rt, "faults")
				workers := rapid.IntRange(1, 4).Draw(rt, "workers")
				base := rapid.SampledFrom([]time.Duration{time.Millisecond, 5 * time.Millisecond, time.Second, 10 * time.Second}).Draw(rt, "base-delay")
				lim := spec.Limiter{Base: base, Max: base << rapid.IntRange(0, 6).Draw(rt, "max-doublings")}
				keys := keyPool(poolSize)
				script, delays := map[string][]behaviour{}, map[string][]time.Duration{}
				for _, k := range keys {
					if bs := rapid.SliceOfN(behaviourGen(), 0, 3).Draw(rt, "script "+k); len(bs) > 0 {
						script[k] = bs
					}
					if ds := rapid.SliceOfN(rapid.SampledFrom([]time.Duration{0, 0, time.Millisecond, time.Second, 30 * time.Second}), 0, 3).Draw(rt, "handler-delays "+k); len(ds) > 0 {
						delays[k] = ds
					}
				}
				rec.Step(fmt.Sprintf("server watch-list=%v, informer watch-list=%v, %d objects, %d workers, limiter %v..%v, faults %v, scripts %v, handler delays %v",
					!noWL, watchList, n, workers, lim.Base, lim.Max, faults, script, delays), "", "")
				srv := modelserver.NewServer(apiserver.Config{NoWatchList: noWL}, faults)
				for _, k := range keys[:n] {
					if err := srv.Create(k); err != nil {
						fail(GModelServer, "create %s: %v", k, err)
					}
				}
				w := newWorld(fail, srv, lim)
				w.script, w.delays = script, delays
				w.build(s, watchList, workers, lim)
				w.run()
				defer w.stop(false)
				// The first requests before the first write, so that a
				// counterexample replays the same way.
				synctest.Wait()
				live := map[string]bool{}
				for _, k := range keys[:n] {
					live[k] = true
				}
				steps := rapid.IntRange(0, 24).Draw(rt, "steps")
				for i := 0; i < steps; i++ {
					var op string
					switch rapid.IntRange(0, 5).Draw(rt, "op") {
					case 0:
						d := rapid.SampledFrom([]time.Duration{time.Millisecond, time.Second, 10 * time.Second, 65 * time.Second, 400 * time.Second}).Draw(rt, "advance")
						op = "advance " + d.String()
						time.Sleep(d)
					case 1:
						op = "bookmark"
						srv.Bookmark()
					default:
						k := rapid.SampledFrom(keys).Draw(rt, "key")
						switch {
						case !live[k]:
							op = "create " + k
						case rapid.IntRange(0, 3).Draw(rt, "delete?") == 0:
							op = "delete " + k
						default:
							op = "update " + k
						}
						verb := op[:6]
						w.write(fail, verb, k)
						live[k] = verb != "delete"
					}
					rec.Step(op, "", "")
					synctest.Wait()
					w.check()
				}
				w.settle()
				w.stop(true)
			})
		})
	}
}
