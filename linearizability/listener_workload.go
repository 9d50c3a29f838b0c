package linearizability

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"
)

// FanOut is what the listener workload drives: a processor with handlers
// registered before it runs. Values are strings; an adapter maps them to
// its implementation's notifications (of any kind) and back.
type FanOut interface {
	// AddHandler registers a handler that receives each value through
	// deliver; only before Run.
	AddHandler(deliver func(v string))
	// Distribute hands v to every handler's listener, without waiting for
	// any handler. It is called from several goroutines at once, while
	// Run runs.
	Distribute(v string)
	// Run runs the fan-out until ctx is done, then stops it and returns
	// once every goroutine it started has exited.
	Run(ctx context.Context)
}

// ListenerWorkload describes a listener scenario. Zero fields take
// defaults.
type ListenerWorkload struct {
	// Seed makes every goroutine's choices (not the scheduling)
	// repeatable; print it with a failure.
	Seed uint64
	// Listeners is the number of handlers; default 1 + Seed%3.
	Listeners int
	// Distributors is the number of goroutines calling Distribute;
	// default 4.
	Distributors int
	// Adds is the number of Distribute calls each makes; default 50.
	Adds int
	// Drain is ignored. It bounded, in wall time, the wait for the
	// handlers to catch up, which on a loaded machine cut a correct
	// fan-out's history short, and CheckListenerDrained then failed it;
	// IdlePolls bounds the wait now. It is kept so that callers compile.
	Drain time.Duration
	// IdlePolls bounds the wait for the handlers to catch up once the
	// distributors are done: the workload polls every 100 µs and gives up
	// after this many polls in a row in which no handler was called;
	// default 2000 (a fifth of a second at the least; about 2 s, like the
	// wall-time bound it replaces, where a 100 µs sleep takes a
	// millisecond, as on the 2-core machine it was measured on). A count,
	// not a deadline, and restarted by every delivery: a correct fan-out
	// keeps calling its handlers until they have caught up, however slowly
	// the machine runs it, so only one that has stopped delivering (it
	// lost values) ends the wait short; and a starved process starves the
	// poller too, so load lengthens the wait instead of cutting it.
	IdlePolls int
	// CatchUp, if set, replaces the IdlePolls wait: the workload calls it
	// with caughtUp (every handler has been called once per Add), and it
	// returns once that holds or it gives up. checkkit.Eventually is one
	// that counts only the time in which none of the check's goroutines
	// could run, so that a starved handler is waited for and a fan-out
	// that stopped delivering is not.
	CatchUp func(caughtUp func() bool)
	// Beat, if set, is called after every recorded call and on every poll
	// of the wait: a heartbeat for a watchdog (checkkit's Progress.Beat),
	// which then reports a Distribute call that never returns. It must be
	// safe for concurrent use.
	Beat func()
	// AwaitStop, if set, waits for the fan-out's Run to return once the
	// workload has cancelled its context: the workload calls it with wait,
	// which returns when Run has, and if it returns false (Run did not
	// stop), returns the history at once, leaving Run's goroutine behind
	// for the caller to report. Unset, the workload waits for Run.
	AwaitStop func(wait func()) bool
}

// pollEvery is the workload's pause between polls of the handlers' calls.
const pollEvery = 100 * time.Microsecond

func (w ListenerWorkload) withDefaults() ListenerWorkload {
	if w.Listeners <= 0 {
		w.Listeners = 1 + int(w.Seed%3)
	}
	if w.Distributors <= 0 {
		w.Distributors = 4
	}
	if w.Adds <= 0 {
		w.Adds = 50
	}
	if w.IdlePolls <= 0 {
		w.IdlePolls = 2000
	}
	if w.Beat == nil {
		w.Beat = func() {}
	}
	if w.AwaitStop == nil {
		w.AwaitStop = func(wait func()) bool { wait(); return true }
	}
	return w
}

// recordingHandler records each call as a Deliver of the listener's
// history, then dawdles for a while of its seeded choosing, so backlogs
// build up and drain.
type recordingHandler struct {
	rec      *Recorder
	beat     func()
	listener int
	client   int
	lastEnd  atomic.Int64 // when the previous call returned
	calls    atomic.Int64
	rngMu    sync.Mutex // a correct fan-out calls serially; a broken one may not
	rng      *rand.Rand
}

func (h *recordingHandler) deliver(v string) {
	call := h.lastEnd.Load() // before ret: Call < Return even if calls overlap
	ret := h.rec.clk.Add(1)
	h.rec.appendOp(porcupine.Operation{ClientId: h.client, Call: call, Return: ret,
		Input: ListenerInput{Listener: h.listener, Op: ListenerDeliver}, Output: ListenerOutput{Value: v}})
	h.calls.Add(1)
	h.beat()
	h.rngMu.Lock()
	r := h.rng.IntN(100)
	h.rngMu.Unlock()
	switch {
	case r < 5:
		time.Sleep(200 * time.Microsecond) // a stall: a backlog builds
	case r < 40:
		runtime.Gosched()
	}
	h.lastEnd.Store(h.rec.clk.Add(1))
}

// appendOp records an operation whose timestamps the caller took.
func (r *Recorder) appendOp(op porcupine.Operation) {
	r.mu.Lock()
	r.ops = append(r.ops, op)
	r.mu.Unlock()
}

// RunListenerWorkload registers cfg.Listeners recording handlers with f,
// runs it, and has cfg.Distributors goroutines each call Distribute
// cfg.Adds times at once (values "d<distributor>.<n>"), each
// call recorded as an Add on every listener (client id = distributor). The
// handlers record every call as a Deliver (client id = Distributors +
// listener) and now and then stall, so the listeners buffer. Once the
// distributors are done it waits for every handler to have been called
// once per Add, for as long as some handler is still being called (see
// ListenerWorkload.IdlePolls), then stops f and returns the history, ready
// for CheckListenerDrained. It joins every goroutine it started, unless
// cfg.AwaitStop gives up on Run.
func RunListenerWorkload(f FanOut, cfg ListenerWorkload) []porcupine.Operation {
	cfg = cfg.withDefaults()
	rec := &Recorder{}
	hs := make([]*recordingHandler, cfg.Listeners)
	for i := range hs {
		hs[i] = &recordingHandler{rec: rec, beat: cfg.Beat, listener: i, client: cfg.Distributors + i,
			rng: rand.New(rand.NewPCG(cfg.Seed, uint64(cfg.Distributors+i)))}
		hs[i].lastEnd.Store(rec.clk.Add(1)) // before Run: the first delivery is later
		f.AddHandler(hs[i].deliver)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		f.Run(ctx)
	}()

	var wg sync.WaitGroup
	for d := range cfg.Distributors {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(cfg.Seed, uint64(d)))
			for n := range cfg.Adds {
				v := fmt.Sprintf("d%d.%d", d, n)
				start := rec.clk.Add(1)
				f.Distribute(v)
				end := rec.clk.Add(1)
				for l := range cfg.Listeners {
					rec.appendOp(porcupine.Operation{ClientId: d, Call: start, Return: end,
						Input: ListenerInput{Listener: l, Op: ListenerAdd, Value: v}, Output: ListenerOutput{}})
				}
				cfg.Beat()
				if rng.IntN(8) == 0 {
					runtime.Gosched()
				}
			}
		})
	}
	wg.Wait()

	// Wait while the handlers catch up. Not against a deadline: a
	// loaded machine would cut a correct fan-out short, and the drained
	// check would fail it for values it was still delivering. The bound
	// is a count of polls without a single delivery, restarted by each.
	want := int64(cfg.Distributors * cfg.Adds)
	if cfg.CatchUp != nil {
		cfg.CatchUp(func() bool {
			for _, h := range hs {
				if h.calls.Load() < want {
					return false
				}
			}
			return true
		})
	}
	var last int64 = -1
	for idle := 0; cfg.CatchUp == nil && idle < cfg.IdlePolls; idle++ {
		caught, total := true, int64(0)
		for _, h := range hs {
			n := h.calls.Load()
			total += n
			caught = caught && n >= want
		}
		if caught {
			break
		}
		if total != last {
			last, idle = total, 0
		}
		cfg.Beat()
		time.Sleep(pollEvery)
	}
	cancel()
	cfg.AwaitStop(func() { <-runDone }) // if it gives up, Run's goroutine stays behind
	return rec.History()
}
