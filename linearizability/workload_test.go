package linearizability

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	ours "github.com/kverify/kverify/impl/workqueue"
	wq "github.com/kverify/kverify/spec/workqueue"
	upstream "k8s.io/client-go/util/workqueue"
)

var subjects = []struct {
	name string
	new  func() Queue
}{
	{"toy", func() Queue { return newToy(defects{}) }},
	{"ours", func() Queue { return ours.New[string](ours.Config[string]{}) }},
	{"upstream", func() Queue { return upstream.NewTyped[string]() }},
}

// A correct queue passes both models, in short scenarios (full FIFO model)
// and in one long run (per-key model).
func TestCorrectQueuesAreLinearizable(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	for _, s := range subjects {
		t.Run(s.name, func(t *testing.T) {
			start := time.Now()
			ops := 0
			for i := range uint64(20) {
				h := RunWorkload(s.new(), Workload{Seed: seed + i})
				ops += len(h)
				if res, info := CheckSteps(QueueModel(), h, DefaultSteps); res != porcupine.Ok {
					fail(t, "fifo", seed+i, QueueModel(), h, res, info)
				}
			}
			t.Logf("fifo: 20 scenarios, %d ops in %v", ops, time.Since(start))
			start = time.Now()
			h := RunWorkload(s.new(), Workload{Seed: seed, Ops: 2000})
			run := time.Since(start)
			if res, info := CheckSteps(PerKeyModel(), h, DefaultSteps); res != porcupine.Ok {
				fail(t, "per-key", seed, PerKeyModel(), h, res, info)
			}
			t.Logf("per-key: %d ops, run %v, check %v", len(h), run, time.Since(start)-run)
		})
	}
}

func fail(t *testing.T, model string, seed uint64, m porcupine.Model, h []porcupine.Operation, res porcupine.CheckResult, info porcupine.LinearizationInfo) {
	t.Helper()
	html, js, err := SaveFailure(t.ArtifactDir(), model, m, h, info)
	t.Fatalf("%s model: %s for seed %d, %d ops; saved %s %s (%v)", model, res, seed, len(h), html, js, err)
}

// The checks can fail: each broken queue is caught within a few scenarios.
func TestBrokenQueuesAreCaught(t *testing.T) {
	cases := []struct {
		name  string
		d     defects
		model string
		m     porcupine.Model
		ops   int
	}{
		{"lifo", defects{lifo: true}, "fifo", QueueModel(), 0},
		{"two gets of one item", defects{dupFirst: true}, "fifo", QueueModel(), 0},
		{"two gets of one item", defects{dupFirst: true}, "per-key", PerKeyModel(), 500},
		{"not stingy", defects{notStingy: true}, "fifo", QueueModel(), 0},
		{"not stingy", defects{notStingy: true}, "per-key", PerKeyModel(), 500},
	}
	seed := uint64(time.Now().UnixNano())
	for _, c := range cases {
		t.Run(c.name+"/"+c.model, func(t *testing.T) {
			for i := range uint64(20) {
				h := RunWorkload(newToy(c.d), Workload{Seed: seed + i, Ops: c.ops})
				res, info := CheckSteps(c.m, h, DefaultSteps)
				if res == porcupine.Ok {
					continue
				}
				if res != porcupine.Illegal {
					t.Fatalf("seed %d: %s", seed+i, res)
				}
				t.Logf("caught after %d scenarios (seed %d, %d ops)", i+1, seed+i, len(h))
				// What a failure leaves behind: a visualisation and a
				// replayable history.
				dir := t.TempDir()
				html, js, err := SaveFailure(dir, "linear/"+c.model, c.m, h, info)
				if err != nil {
					t.Fatal(err)
				}
				if filepath.Dir(html) != dir || filepath.Base(html) != "linear_"+c.model+".html" {
					t.Errorf("html at %s", html)
				}
				if fi, err := os.Stat(html); err != nil || fi.Size() < 1000 {
					t.Errorf("visualisation: %v", err)
				}
				again, err := LoadHistory(js)
				if err != nil {
					t.Fatal(err)
				}
				if res, _ := CheckSteps(c.m, again, DefaultSteps); res != porcupine.Illegal || len(again) != len(h) {
					t.Errorf("replayed %d of %d ops: %s, want Illegal", len(again), len(h), res)
				}
				return
			}
			t.Fatalf("not caught in 20 scenarios from seed %d", seed)
		})
	}
}

// The workload keeps its promises: every worker only marks Done what it
// holds, every Get returns, and the coordinator's ShutDown is recorded.
func TestWorkloadShape(t *testing.T) {
	cfg := Workload{Seed: 7}.withDefaults()
	h := RunWorkload(newToy(defects{}), cfg)
	held := map[int]map[string]int{}
	shutdowns, clients := 0, map[int]bool{}
	for _, op := range h {
		in, out := op.Input.(Input), op.Output.(Output)
		c := op.ClientId
		clients[c] = true
		if held[c] == nil {
			held[c] = map[string]int{}
		}
		switch in.Op {
		case wq.Get:
			if !out.Shutdown {
				held[c][out.Key]++
			}
		case wq.Done:
			if held[c][in.Key] == 0 {
				t.Errorf("client %d: Done(%s) of an item it does not hold", c, in.Key)
			}
			held[c][in.Key]--
		case wq.ShutDown:
			shutdowns++
			if c != cfg.Clients {
				t.Errorf("ShutDown by client %d, want the coordinator %d", c, cfg.Clients)
			}
		}
	}
	if shutdowns != 1 {
		t.Errorf("%d ShutDowns, want 1", shutdowns)
	}
	for c := range cfg.Clients {
		if !clients[c] {
			t.Errorf("client %d recorded nothing", c)
		}
		for k, n := range held[c] {
			if n != 0 {
				t.Errorf("client %d still holds %s", c, k)
			}
		}
	}
	if res, _ := CheckSteps(QueueModel(), h, DefaultSteps); res != porcupine.Ok {
		t.Errorf("toy queue: %s", res)
	}
}

// A queue whose Add never wakes a blocked Get cannot hang the workload:
// the coordinator stops adding and shuts the queue down. That it gave up
// is told by a count, not by how long the run took (which depends on the
// machine's load): at most 20 of its wake-up Adds in a row with nothing
// else happening in between, then ShutDown (a hang would meet the test's
// own timeout).
func TestWorkloadEndsWhenAddDoesNotWake(t *testing.T) {
	start := time.Now()
	cfg := Workload{Seed: 3, Ops: 2000}.withDefaults()
	h := RunWorkload(newToy(defects{addNoWake: true}), cfg)
	shutdowns := 0
	for _, op := range h {
		if op.Input.(Input).Op == wq.ShutDown {
			shutdowns++
		}
	}
	if shutdowns != 1 {
		t.Errorf("%d ShutDowns recorded, want 1", shutdowns)
	}
	// The clock ticks once at each call and once at each return, so the
	// events in clock order are the history's, each tick one event.
	type event struct {
		at       int64
		coordAdd bool // a call or return of the coordinator's Add
		ret      bool
		shutDown bool // ShutDown's call
	}
	var evs []event
	for _, op := range h {
		in := op.Input.(Input)
		coordAdd := op.ClientId == cfg.Clients && in.Op == wq.Add
		evs = append(evs, event{op.Call, coordAdd, false, in.Op == wq.ShutDown}, event{op.Return, coordAdd, true, false})
	}
	slices.SortFunc(evs, func(a, b event) int { return cmp.Compare(a.at, b.at) })
	run, longest := 0, 0
	for _, e := range evs {
		if e.shutDown {
			break
		}
		switch {
		case !e.coordAdd:
			run = 0
		case e.ret:
			run++
			longest = max(longest, run)
		}
	}
	if longest > 20 {
		t.Errorf("the longest run of wake-up Adds that woke nobody is %d, want at most 20", longest)
	}
	t.Logf("%d ops in %v; longest run of fruitless wake-up Adds %d", len(h), time.Since(start), longest)
}
