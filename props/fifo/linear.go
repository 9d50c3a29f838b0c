package fifo

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	lin "github.com/kverify/kverify/linearizability"
	"github.com/kverify/kverify/props/checkkit"
	spec "github.com/kverify/kverify/spec/fifo"
)

// Sizes of the linear check: many short workloads, each small enough for
// porcupine's unpartitioned search (FIFO order ties the keys together) to
// take well under a millisecond. The search is bounded by
// lin.DefaultSteps, a count of model steps, not by time: its verdict does
// not depend on the machine's load.
const (
	linearClients = 3
	linearMinOps  = 6 // calls per client in the random part, at least
	linearMaxOps  = 10
	// linearCap bounds, as a multiple of linearTargets' workloads, how
	// many the check runs to reach its count of parallel ones on a machine
	// too busy to give the clients two CPUs. A count, not a time: the
	// same seed runs the same workloads at any load, short of the
	// parallel ones that load denies.
	linearCap = 4
)

// linearSteps is the step budget of each porcupine search
// (lin.DefaultSteps); a variable so that a test can make every
// search run out.
var linearSteps = lin.DefaultSteps

// linearTargets are the least number of workloads the check runs, and the
// least number of them in which two clients ran at once (the spans from
// their first to their last call other than Pop overlap in real time);
// Config.Budget adds more. Under the race detector, whose instrumentation
// widens every window and slows every call, fewer.
//
// Measured on 2 busy vCPUs (load 4.5: two other test binaries running),
// against a FIFO whose Add or Pop lets go of its lock for an instant
// (Unlock and Lock back to back; the tight split bugs of linear_test.go):
// in 60 runs every one found it, after at most 441 parallel workloads
// (2779 in all); under -race, in 30 runs after at most 93 (632 in all).
func linearTargets() (workloads, parallel int) {
	if raceEnabled() {
		return 500, 200
	}
	return 1500, 800
}

// raceEnabled reports whether the binary was built with -race.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, st := range bi.Settings {
		if st.Key == "-race" {
			return st.Value == "true"
		}
	}
	return false
}

// linearCheck checks that concurrent histories are linearizable against
// lin.FIFOModel. Each workload drives a fresh FIFO without known objects
// (a DeltaFIFO, or a RealFIFO in atomic mode; not with
// UnlockWhileProcessing, under which concurrent pops process at once, so
// that a pop is not one step) from linearClients goroutines, then closes
// it and drains it, and its history is checked on its own.
func linearCheck(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		seed := cfg.LinearSeed()
		wantWorkloads, wantParallel := linearTargets()
		pool := newLinearPool()
		defer pool.close()
		budget := checkkit.NewWallTimer(cfg.Budget)
		defer budget.Stop()
		start := time.Now()
		calls, parallel := 0, 0
		var unknown []uint64 // seeds of the inconclusive searches
		for i := 0; ; i++ {
			p := newLinearPlan(s, seed+uint64(i), i)
			n, par, err := pool.run(t, s, cfg, p)
			switch {
			case errors.Is(err, errInconclusive):
				// No verdict on this workload: count it and go on. It does
				// not count as a parallel workload checked.
				unknown = append(unknown, p.seed)
				if len(unknown) <= 3 {
					t.Logf("%v (%d calls); going on", err, n)
				}
			case err != nil:
				return err
			case par:
				parallel++
			}
			calls += n
			if i+1 >= wantWorkloads && parallel >= wantParallel && budget.Expired() || i+1 >= linearCap*wantWorkloads && budget.Expired() {
				short := ""
				if parallel < wantParallel {
					why := "the machine is busy"
					if len(unknown) > 0 {
						why = "workloads whose search was inconclusive do not count, or the machine is busy"
					}
					short = fmt.Sprintf(", short of the %d wanted: %s", wantParallel, why)
				}
				t.Logf("%d workloads (%d with two clients running at once%s), %d calls, first seed %d, in %v%s",
					i+1, parallel, short, calls, seed, time.Since(start).Round(time.Millisecond), inconclusiveNote(unknown, i+1))
				return nil
			}
		}
	}
}

// errInconclusive is pool.run's error for a workload whose search ran out
// of its step budget (porcupine.Unknown): no verdict, not a failure.
var errInconclusive = errors.New("inconclusive: the search found neither a linearization nor a violation within its step budget")

// inconclusiveNote is the end of the check's summary line: how many of
// its runs workloads had an inconclusive search (seeds lists them all).
func inconclusiveNote(seeds []uint64, runs int) string {
	switch {
	case len(seeds) == 0:
		return ""
	case len(seeds) == runs:
		return fmt.Sprintf("; every search was inconclusive (out of %d steps; first seed %d), so this run checked nothing: no verdict", linearSteps, seeds[0])
	}
	return fmt.Sprintf("; %d inconclusive search(es) (out of %d steps; first seed %d), no verdict on the subject", len(seeds), linearSteps, seeds[0])
}

// linearPlan is one workload, drawn from its seed: the FIFO's mode, an
// optional Replace made before the clients start (an initial population),
// each client's calls with the spin before each, and whether the
// coordinator closes the FIFO while the clients run (else once each is
// done or blocked in Pop). Every object is fresh: its version is the
// number of objects made before it, plus one.
type linearPlan struct {
	seed    uint64
	mode    Mode
	setup   []lin.FIFOInput
	clients [][]linearCall
	start   []int // spin iterations before each client's first call
	early   int   // spin iterations before the coordinator's Close; -1: at the end
}

type linearCall struct {
	in  lin.FIFOInput
	gap int // spin iterations before the call
}

func newLinearPlan(s Subject, seed uint64, round int) *linearPlan {
	rng := rand.New(rand.NewPCG(seed, 0x11ea4))
	p := &linearPlan{seed: seed, early: -1}
	if s.Real {
		p.mode = Mode{Atomic: true, Transform: rng.IntN(3) == 0}
	} else {
		p.mode = Mode{EmitReplaced: rng.IntN(2) == 0, Transform: rng.IntN(3) == 0}
	}
	keys := []string{"a", "b", "c"}[:2+rng.IntN(2)]
	made := 0
	obj := func(key string) spec.Obj { made++; return spec.Obj{Key: key, Version: made} }
	replace := func() lin.FIFOInput {
		var list []spec.Obj
		for _, k := range keys {
			if rng.IntN(3) > 0 {
				list = append(list, obj(k))
			}
		}
		rng.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
		return lin.FIFOInput{Op: lin.FIFOReplace, List: list, RV: strconv.Itoa(made)}
	}
	if rng.IntN(3) == 0 {
		p.setup = append(p.setup, replace())
	}
	//                 Add Upd Del Rep Rsy Pop Syn
	weights := [...]int{3, 2, 2, 1, 1, 4, 1}
	total := 0
	for _, w := range weights {
		total += w
	}
	for range linearClients {
		var calls []linearCall
		for range linearMinOps + rng.IntN(linearMaxOps-linearMinOps+1) {
			r := rng.IntN(total)
			op := 0
			for ; r >= weights[op]; op++ {
				r -= weights[op]
			}
			var in lin.FIFOInput
			switch op {
			case 0:
				in = lin.FIFOInput{Op: lin.FIFOAdd, Obj: obj(keys[rng.IntN(len(keys))])}
			case 1:
				in = lin.FIFOInput{Op: lin.FIFOUpdate, Obj: obj(keys[rng.IntN(len(keys))])}
			case 2:
				in = lin.FIFOInput{Op: lin.FIFODelete, Obj: obj(keys[rng.IntN(len(keys))])}
			case 3:
				in = replace()
			case 4:
				in = lin.FIFOInput{Op: lin.FIFOResync}
			case 5:
				in = lin.FIFOInput{Op: lin.FIFOPop}
			default:
				in = lin.FIFOInput{Op: lin.FIFOHasSynced}
			}
			gap := 0
			if rng.IntN(4) == 0 {
				gap = rng.IntN(200)
			}
			calls = append(calls, linearCall{in: in, gap: gap})
		}
		p.clients = append(p.clients, calls)
	}
	// Start offsets: clients 1 and 2 start off client 0 by a quarter of
	// checkkit.RaceOffset of a round drawn from the seed, and by half
	// that, so that workloads walk its sweeps, scaled to calls that come in runs: the same instant, a few
	// hundred nanoseconds apart, a microsecond apart.
	off := checkkit.RaceOffset(rng.IntN(1<<20)) / 4
	p.start = []int{0, off, -off / 2}
	low := slices.Min(p.start)
	for c := range p.start {
		p.start[c] -= low
	}
	if rng.IntN(4) == 0 {
		p.early = rng.IntN(20000)
	}
	return p
}

// linearPool is the check's client goroutines. They live for the whole
// check, and once handed a workload spin until the coordinator releases
// it, so that they start it on CPUs: goroutines made for each workload
// rarely run at once (the second CPU's thread is asleep when they start),
// and calls that never overlap find no missing lock.
type linearPool struct {
	work       [linearClients]chan *linearRun
	wg         sync.WaitGroup
	yieldEvery int // spin iterations between yields while waiting to start
}

func newLinearPool() *linearPool {
	p := &linearPool{yieldEvery: 64}
	if runtime.GOMAXPROCS(0) > 1 {
		p.yieldEvery = 256
	}
	for c := range p.work {
		p.work[c] = make(chan *linearRun, 1)
		p.wg.Go(func() {
			for r := range p.work[c] {
				r.client(c, p.yieldEvery)
			}
		})
	}
	return p
}

// close stops the pool's goroutines; the last workload must have ended.
func (p *linearPool) close() {
	for _, w := range p.work {
		close(w)
	}
	p.wg.Wait()
}

// linearRun is one workload in progress.
type linearRun struct {
	plan     *linearPlan
	do       func(client int, in lin.FIFOInput) lin.FIFOOutput
	ready    atomic.Int64 // clients spinning, waiting for the release
	released atomic.Bool
	idle     atomic.Int64 // clients done with their calls or in Pop
	poke     chan struct{}
	drain    chan struct{}
	done     sync.WaitGroup
	base     time.Time
	// span[c] is when client c began its first call other than Pop and
	// ended its last, since base; written by client c before done.
	span [linearClients][2]time.Duration
}

func (r *linearRun) notify() {
	select {
	case r.poke <- struct{}{}:
	default:
	}
}

// client runs client c's calls, then, once the coordinator has closed the
// FIFO, pops until it reports closed.
func (r *linearRun) client(c, yieldEvery int) {
	defer r.done.Done()
	r.ready.Add(1)
	for i := 1; !r.released.Load(); i++ {
		burn(32)
		if i%yieldEvery == 0 {
			runtime.Gosched()
		}
	}
	burn(r.plan.start[c])
	for _, call := range r.plan.clients[c] {
		burn(call.gap)
		if call.in.Op == lin.FIFOPop {
			r.idle.Add(1)
			r.notify()
			r.do(c, call.in)
			r.idle.Add(-1)
			continue
		}
		begin := time.Since(r.base)
		r.do(c, call.in)
		if r.span[c][1] == 0 {
			r.span[c][0] = begin
		}
		r.span[c][1] = time.Since(r.base)
	}
	r.idle.Add(1)
	r.notify()
	<-r.drain
	// Bounded: a FIFO that never reports closed leaves its pops in the
	// history, where the model rejects them; the check's loop ends.
	for range checkkit.DrainLimit {
		if out := r.do(c, lin.FIFOInput{Op: lin.FIFOPop}); out.Closed || out.Err != "" {
			return
		}
	}
}

// parallel reports whether two clients ran their calls at once.
func (r *linearRun) parallel() bool {
	for a := range r.span {
		for b := a + 1; b < len(r.span); b++ {
			x, y := r.span[a], r.span[b]
			if x[1] != 0 && y[1] != 0 && x[0] < y[1] && y[0] < x[1] {
				return true
			}
		}
	}
	return false
}

// run runs workload p on a fresh FIFO and checks its history. It returns
// the number of calls and whether two clients ran at once, or the
// violation, or errInconclusive when the search ran out of steps.
func (pool *linearPool) run(t *testing.T, s Subject, cfg checkkit.Config, p *linearPlan) (int, bool, error) {
	f, _, err := newFIFO(s, p.mode)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	name := fmt.Sprintf("linear workload, seed %d, %s", p.seed, p.mode)
	cfg.Progress.Op(name)
	rec := &lin.FIFORecorder{Observe: func(porcupine.Operation) { cfg.Progress.Beat() }}
	cfg.Progress.Describe(func() string { return fmt.Sprintf("%s; calls in flight: %v", name, rec.InFlight()) })
	defer cfg.Progress.Describe(nil)

	coord := linearClients
	r := &linearRun{plan: p, poke: make(chan struct{}, 1), drain: make(chan struct{}),
		do: func(client int, in lin.FIFOInput) lin.FIFOOutput {
			out := rec.Record(client, in, func() lin.FIFOOutput { return linearDo(f, in) })
			if strings.HasPrefix(out.Err, "panic") {
				// A subject that panicked holding its lock blocks the
				// other clients, and this workload, for ever.
				cfg.Progress.Abandon(checkkit.Broke(GNoPanic, "%s: client %d: %s", name, client, lin.DescribeFIFO(in, out)))
			}
			return out
		}}
	for _, in := range p.setup {
		r.do(coord, in)
	}
	r.done.Add(linearClients)
	for _, w := range pool.work {
		w <- r
	}
	for i := 1; r.ready.Load() < linearClients; i++ {
		burn(32)
		if i%64 == 0 {
			runtime.Gosched()
		}
	}
	r.base = time.Now()
	r.released.Store(true)
	if p.early >= 0 {
		burn(p.early)
		r.do(coord, lin.FIFOInput{Op: lin.FIFOClose})
	}
	// Once every client is done or blocked in Pop (or about to be),
	// nothing but Close can release a blocked Pop.
	timer := time.NewTimer(time.Millisecond)
	for r.idle.Load() < linearClients {
		timer.Reset(time.Millisecond)
		select {
		case <-r.poke:
		case <-timer.C:
		}
	}
	timer.Stop()
	if p.early < 0 {
		r.do(coord, lin.FIFOInput{Op: lin.FIFOClose})
	}
	close(r.drain)
	r.done.Wait()

	h := rec.History()
	for _, op := range h {
		if out := op.Output.(lin.FIFOOutput); out.Err != "" {
			g := GErrors
			if strings.HasPrefix(out.Err, "panic") {
				g = GNoPanic
			}
			return len(h), false, checkkit.Broke(g, "%s: %s\n  history:\n%s", name,
				lin.DescribeFIFO(op.Input.(lin.FIFOInput), out), indent(lin.DescribeFIFOHistory(h)))
		}
	}
	c := lin.FIFOConfig{Real: s.Real, EmitReplaced: p.mode.EmitReplaced, Transform: p.mode.Transform}
	var res porcupine.CheckResult
	var info porcupine.LinearizationInfo
	cfg.Progress.Analyse(func() { res, info = lin.CheckSteps(lin.FIFOModel(c), h, linearSteps) })
	switch res {
	case porcupine.Ok:
		return len(h), r.parallel(), nil
	case porcupine.Illegal:
		return len(h), false, checkkit.Broke(GLinear, "%s: no sequential order of these %d calls (each placed inside its [call, return] interval of a logical clock; client %d is the coordinator) is a run of the %s model:\n%s%s",
			name, len(h), coord, c, indent(lin.DescribeFIFOHistory(h)), p.save(t, cfg, s, c, h, info))
	}
	return len(h), false, fmt.Errorf("%s: %w", name, errInconclusive)
}

// save writes the history (and porcupine's visualisation, if any) to
// cfg.TraceDir or the test's artifact directory, and returns the lines to
// add to the violation.
func (p *linearPlan) save(t *testing.T, cfg checkkit.Config, s Subject, c lin.FIFOConfig, h []porcupine.Operation, info porcupine.LinearizationInfo) string {
	dir := cfg.Dir(t)
	subject := cfg.Subject
	if subject == "" {
		subject = "subject"
	}
	name := fmt.Sprintf("%s-linear-%s-seed%d", component(s), subject, p.seed)
	html, js, err := lin.SaveFIFOFailure(dir, name, c, h, info)
	return lin.FailureNote(html, js, err, "linearizability.LoadFIFOHistory, then linearizability.CheckSteps with FIFOModel",
		checkkit.LinearSeedHint(p.seed))
}

// linearDo makes one call on f and returns what it observed. A Pop's
// process func only records its arguments.
func linearDo(f FIFO, in lin.FIFOInput) (out lin.FIFOOutput) {
	defer func() {
		if p := recover(); p != nil {
			out = lin.FIFOOutput{Err: fmt.Sprintf("panic: %v", p)}
		}
	}()
	var err error
	switch in.Op {
	case lin.FIFOAdd:
		err = f.Add(object(in.Obj))
	case lin.FIFOUpdate:
		err = f.Update(object(in.Obj))
	case lin.FIFODelete:
		err = f.Delete(object(in.Obj))
	case lin.FIFOReplace:
		list := make([]any, len(in.List))
		for i, o := range in.List {
			list[i] = object(o)
		}
		err = f.Replace(list, in.RV)
	case lin.FIFOResync:
		err = f.Resync()
	case lin.FIFOClose:
		f.Close()
	case lin.FIFOHasSynced:
		return lin.FIFOOutput{Synced: f.HasSynced()}
	case lin.FIFOPop:
		var (
			got             []Delta
			initial, called bool
		)
		_, err := f.Pop(func(ds []Delta, isInInitialList bool) error {
			got, initial, called = ds, isInInitialList, true
			return nil
		})
		switch {
		case !called && err != nil:
			return lin.FIFOOutput{Closed: true}
		case !called:
			return lin.FIFOOutput{Err: "Pop returned no error without calling its process func"}
		case err != nil:
			return lin.FIFOOutput{Err: fmt.Sprintf("Pop returned %v, though its process func returned nil", err)}
		}
		ds, cerr := deltasOf(got)
		if cerr != nil {
			return lin.FIFOOutput{Err: fmt.Sprintf("popped deltas: %v", cerr)}
		}
		return lin.FIFOOutput{Deltas: spec.Deltas(ds), Initial: initial}
	}
	if err != nil {
		return lin.FIFOOutput{Err: err.Error()}
	}
	return lin.FIFOOutput{}
}

var burnSink atomic.Int64

// burn spins about n loop iterations on registers only (no memory the
// race detector watches), like the race probes' offsets.
func burn(n int) {
	x := 0
	for i := range n {
		x += i ^ x>>3
	}
	burnSink.Store(int64(x))
}

func indent(s string) string { return "    " + strings.ReplaceAll(s, "\n", "\n    ") }
