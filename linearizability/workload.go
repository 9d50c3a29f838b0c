package linearizability

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"
)

// Workload describes a concurrent scenario. Zero fields take defaults.
type Workload struct {
	// Seed makes every goroutine's choices (not the scheduling) repeatable;
	// print it with a failure.
	Seed uint64
	// Clients is the number of worker goroutines; default 8.
	Clients int
	// Ops is the number of random operations each worker makes; default 30.
	Ops int
	// Keys are the items; default a, b, c, d, e, f.
	Keys []string
	// Recorder records the history; a fresh one by default. Set one to
	// watch the run as it goes (Recorder.Observe, Recorder.InFlight).
	Recorder *Recorder
}

func (w Workload) withDefaults() Workload {
	if w.Clients <= 0 {
		w.Clients = 8
	}
	if w.Ops <= 0 {
		w.Ops = 30
	}
	if len(w.Keys) == 0 {
		w.Keys = []string{"a", "b", "c", "d", "e", "f"}
	}
	return w
}

// Counters of workers in the random phase, packed in one word so that the
// coordinator reads both at once: the low half counts workers running, the
// high half workers blocked in Get.
const (
	running = int64(1)
	waiting = int64(1) << 32
)

// RunWorkload drives q from cfg.Clients goroutines and returns the recorded
// history. It has three parts:
//
//  1. Each worker makes cfg.Ops random calls from its own seeded source:
//     Add of a key, Get, Done of the item it holds (never of another one:
//     Done of an item not being processed is a documented no-op, and
//     client-go diverges there) and Len. A worker holds at most one item
//     and calls Get only with none, like a controller's worker; so when
//     every worker still in this part is blocked in Get, nothing is being
//     processed, and the coordinator (client id cfg.Clients) Adds a random
//     key to wake one: the workload cannot deadlock. (If 20 such Adds in a
//     row wake nobody, the coordinator moves on to ShutDown.)
//  2. Each worker marks Done what it holds, waits for the others, then
//     drains: Get and Done until Get reports shutdown, with a few more Adds
//     (at most 3 per worker) that race with ShutDown.
//  3. Meanwhile the coordinator calls ShutDown, recorded like any call, so
//     every Get blocked on the empty queue returns; RunWorkload then joins
//     every goroutine it started.
//
// A queue whose Get never returns after ShutDown hangs RunWorkload; run it
// under a watchdog (props.Run's, fed through Workload.Recorder).
func RunWorkload(q Queue, cfg Workload) []porcupine.Operation {
	cfg = cfg.withDefaults()
	rec := cfg.Recorder
	if rec == nil {
		rec = &Recorder{}
	}
	var (
		state  atomic.Int64 // running + waiting*2^32 workers in part 1
		notify = make(chan struct{}, 1)
		drain  = make(chan struct{})
		wg     sync.WaitGroup
	)
	poke := func() {
		select {
		case notify <- struct{}{}:
		default:
		}
	}
	state.Store(int64(cfg.Clients) * running)
	for id := range cfg.Clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(cfg.Seed, uint64(id)))
			c := rec.Client(q, id)
			var held string // the item this worker got and has not marked Done
			holding := false
			get := func() (string, bool) {
				state.Add(waiting - running)
				poke()
				k, shut := c.Get()
				state.Add(running - waiting)
				return k, shut
			}
		random:
			for range cfg.Ops {
				switch r := rng.IntN(100); {
				case r < 40:
					c.Add(cfg.Keys[rng.IntN(len(cfg.Keys))])
				case r < 90 && !holding:
					k, shut := get()
					if shut {
						break random
					}
					held, holding = k, true
				case r < 90:
					c.Done(held)
					holding = false
				default:
					c.Len()
				}
			}
			if holding {
				c.Done(held)
			}
			state.Add(-running)
			poke()
			<-drain
			for adds := 0; ; {
				if adds < 3 && rng.IntN(4) == 0 {
					c.Add(cfg.Keys[rng.IntN(len(cfg.Keys))]) // once shut down, ignored
					adds++
				}
				k, shut := c.Get()
				if shut {
					return
				}
				c.Done(k)
			}
		})
	}

	coord := rec.Client(q, cfg.Clients)
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(cfg.Clients)))
	timer := time.NewTimer(time.Millisecond)
	defer timer.Stop()
	// Give up waking workers after many wake-up Adds in a row that woke
	// nobody (a queue whose Add does not wake Get): ShutDown then releases
	// them. With a correct queue one Add wakes a worker; the rest only
	// cover a slow wake-up.
	// The logical clock tells whether anything happened since the last one.
	var fruitless int
	var afterKick int64
	for fruitless < 20 {
		s := state.Load()
		if s == 0 {
			break // every worker finished part 1
		}
		if s&(waiting-1) == 0 { // nobody running: every worker left in part 1 is blocked in Get
			runtime.Gosched() // unless a Get is just returning
			if s = state.Load(); s != 0 && s&(waiting-1) == 0 {
				if rec.clk.Load() != afterKick {
					fruitless = 0
				}
				coord.Add(cfg.Keys[rng.IntN(len(cfg.Keys))])
				afterKick = rec.clk.Load()
				fruitless++
			}
		}
		timer.Reset(time.Millisecond)
		select {
		case <-notify:
		case <-timer.C:
		}
	}
	close(drain)
	for range rng.IntN(4) {
		runtime.Gosched() // let some drains block, or not
	}
	coord.ShutDown()
	wg.Wait()
	return rec.History()
}
