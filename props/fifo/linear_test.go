package fifo

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
)

// tinyFIFO is a minimal RealFIFO in atomic mode (one delta per event,
// Replace one ReplacedAll, Resync one SyncAll), correct unless a bug is
// switched on. Its bugs are the concurrency slips a linear check is for;
// none is a data race, so they are the same under -race.
type tinyFIFO struct {
	bug       string // "", "lifo", "split-add", "split-pop", "tight-split-add", "tight-split-pop"
	transform func(any) (any, error)

	mu        sync.Mutex
	cond      *sync.Cond
	items     []Delta
	populated bool
	initial   int // initial pops not yet finished
	closed    bool
	done      chan struct{}
}

var errTinyClosed = errors.New("tiny FIFO closed")

func tinySubject(bug string) Subject {
	return Subject{Real: true, New: func(o Options) (FIFO, error) {
		if !o.Atomic || o.Known != nil || o.Unlock || o.Bookmarks {
			return nil, errors.New("tiny FIFO: atomic mode only, without known objects, unlock or bookmarks")
		}
		f := &tinyFIFO{bug: bug, transform: o.Transform, done: make(chan struct{})}
		f.cond = sync.NewCond(&f.mu)
		return f, nil
	}}
}

// window is where a "split" bug lets go of the lock. A "tight-split" bug
// has none: Unlock and Lock back to back.
func (f *tinyFIFO) window() {
	if !strings.HasPrefix(f.bug, "tight-") {
		runtime.Gosched()
	}
}

func (f *tinyFIFO) obj(obj any) (any, error) {
	if _, err := keyOf(obj); err != nil {
		return nil, err
	}
	if f.transform != nil {
		return f.transform(obj)
	}
	return obj, nil
}

// synced reports (and records on done) whether the FIFO has synced.
func (f *tinyFIFO) synced() bool {
	if f.populated && f.initial == 0 {
		select {
		case <-f.done:
		default:
			close(f.done)
		}
		return true
	}
	return false
}

func (f *tinyFIFO) push(t string, obj any) error {
	o, err := f.obj(obj)
	if err != nil {
		return err
	}
	d := Delta{Type: t, Object: o}
	f.mu.Lock()
	f.populated = true
	if strings.HasSuffix(f.bug, "split-add") {
		// Reads the queue, lets go of the lock, writes back its copy:
		// whatever another call did meanwhile is lost.
		items := append([]Delta(nil), f.items...)
		f.mu.Unlock()
		f.window()
		f.mu.Lock()
		f.items = append(items, d)
	} else {
		f.items = append(f.items, d)
	}
	f.synced()
	f.cond.Broadcast()
	f.mu.Unlock()
	return nil
}

func (f *tinyFIFO) Add(obj any) error    { return f.push("Added", obj) }
func (f *tinyFIFO) Update(obj any) error { return f.push("Updated", obj) }
func (f *tinyFIFO) Delete(obj any) error { return f.push("Deleted", obj) }

func (f *tinyFIFO) Replace(list []any, rv string) error {
	objs := make([]any, len(list))
	for i, x := range list {
		o, err := f.obj(x)
		if err != nil {
			return err
		}
		objs[i] = o
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.items = append(f.items, Delta{Type: "ReplacedAll", Object: ReplacedAll{ResourceVersion: rv, Objects: objs}})
	if !f.populated {
		f.populated, f.initial = true, len(f.items)
	}
	f.synced()
	f.cond.Broadcast()
	return nil
}

func (f *tinyFIFO) Resync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.items = append(f.items, Delta{Type: "SyncAll", Object: SyncAll{}})
	f.cond.Broadcast()
	return nil
}

func (f *tinyFIFO) Pop(process func([]Delta, bool) error) ([]Delta, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.items) == 0 {
		if f.closed {
			return nil, errTinyClosed
		}
		f.cond.Wait()
	}
	initial := !f.synced()
	var d Delta
	switch f.bug {
	case "lifo":
		d = f.items[len(f.items)-1]
		f.items = f.items[:len(f.items)-1]
	case "split-pop", "tight-split-pop":
		// Takes the head, lets go of the lock, then drops the head, which
		// may no longer be the delta it took.
		d = f.items[0]
		f.mu.Unlock()
		f.window()
		f.mu.Lock()
		if len(f.items) > 0 {
			f.items = f.items[1:]
		}
	default:
		d = f.items[0]
		f.items = f.items[1:]
	}
	err := process([]Delta{d}, initial)
	if f.initial > 0 {
		f.initial--
		f.synced()
	}
	return []Delta{d}, err
}

func (f *tinyFIFO) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.cond.Broadcast()
}

func (f *tinyFIFO) IsClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

func (f *tinyFIFO) HasSynced() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.synced()
}

func (f *tinyFIFO) Done() <-chan struct{} { return f.done }

func TestLinearTinyFIFOPasses(t *testing.T) {
	cfg := checkkit.Config{TraceDir: t.TempDir()}
	if err := linearCheck(tinySubject(""))(t, cfg); err != nil {
		t.Fatalf("the correct tiny FIFO failed: %v", err)
	}
}

// TestLinearFindsBrokenFIFO: the check reports each broken tiny FIFO as a
// linearizability violation naming its history, and saves porcupine's
// visualisation. LIFO order is wrong in any one history; the split bugs
// (Add or Pop lets go of its lock between reading the queue and writing it
// back) only when another call lands in between: with a yield there in
// almost every workload, and without (the tight ones) in a few in a
// hundred, where two clients run on two CPUs at once.
func TestLinearFindsBrokenFIFO(t *testing.T) {
	for _, bug := range []string{"lifo", "split-add", "split-pop", "tight-split-add", "tight-split-pop"} {
		t.Run(bug, func(t *testing.T) {
			if strings.HasPrefix(bug, "tight-") && runtime.GOMAXPROCS(0) < 2 {
				t.Skip("a lock released for an instant is only taken by a goroutine on another CPU")
			}
			dir := t.TempDir()
			start := time.Now()
			cfg := checkkit.Config{TraceDir: dir}
			if strings.HasPrefix(bug, "tight-") {
				// Found within the check's own minimum on a quiet machine.
				// The window is an instant with the lock released: with
				// both CPUs shared by other processes (the README's test
				// command beside four CPU burners) it took longer than 3
				// s in 2 runs of 5. The check stops at the violation, so
				// the budget only costs time where it is needed.
				cfg.Budget = 30 * time.Second
			}
			// A search that runs out of steps is no verdict either way:
			// the check counts it and goes on to its next workload, so it
			// never ends on one.
			err := linearCheck(tinySubject(bug))(t, cfg)
			var v *checkkit.Violation
			if !errors.As(err, &v) || v.Guarantee != GLinear {
				t.Fatalf("want a %q violation, got %v", GLinear, err)
			}
			for _, want := range []string{"client 3 is the coordinator", "Pop() -> ", "visualisation: " + dir, ".html", "history: " + dir, "KVERIFY_LINEAR_SEED="} {
				if !strings.Contains(v.Detail, want) {
					t.Errorf("violation does not mention %q:\n%s", want, v.Detail)
				}
			}
			t.Logf("found in %v: %s", time.Since(start).Round(time.Millisecond), firstLines(err.Error(), 1))
		})
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// A search that runs out of steps is no verdict: with a budget of one step
// every search is inconclusive, and the check still passes the correct
// tiny FIFO, saying in its summary that it checked nothing.
func TestLinearInconclusiveIsNoFailure(t *testing.T) {
	defer func(n int) { linearSteps = n }(linearSteps)
	linearSteps = 1
	if err := linearCheck(tinySubject(""))(t, checkkit.Config{TraceDir: t.TempDir()}); err != nil {
		t.Fatalf("every search inconclusive: %v", err)
	}
	if got := inconclusiveNote([]uint64{7, 8}, 2); !strings.Contains(got, "every search was inconclusive") {
		t.Errorf("note for 2 inconclusive runs of 2: %q", got)
	}
	if got := inconclusiveNote([]uint64{7, 8}, 3); !strings.Contains(got, "2 inconclusive search(es)") {
		t.Errorf("note for 2 inconclusive runs of 3: %q", got)
	}
	if got := inconclusiveNote(nil, 3); got != "" {
		t.Errorf("note without inconclusive runs: %q", got)
	}
}
