package checkkit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kverify/kverify/internal/kvenv"
)

// HangAfter is how long a check may go without progress before the runner
// fails it as a hang: a subject that deadlocks, blocks where it must not,
// or spins inside a synctest bubble (where synctest.Wait then never
// returns) is reported within this much wall time, with the check's name,
// its last operations and the goroutine stacks, instead of waiting for the
// test binary's global timeout. KVERIFY_HANG_AFTER overrides it.
const HangAfter = 5 * time.Second

// SpinAfter is how long a check may stay without progress while one of its
// synctest bubbles cannot become quiescent — a goroutine waits in
// synctest.Wait and another goroutine of the same bubble keeps running or
// waits for a mutex — before the runner fails it as a spin. Legitimate work
// inside one Wait takes milliseconds; a subject that polls instead of
// blocking never lets the Wait return.
const SpinAfter = time.Second

// Progress is a check's heartbeat and the tail of the operations it drove.
// The runner hands every check one in Config.Progress; the rapid driver's
// Recorder reports every step to it, and checks that drive a subject in
// other ways call Op or Beat as they go. All methods are safe for concurrent
// use and do nothing on a nil *Progress.
type Progress struct {
	n        atomic.Uint64
	analyses atomic.Int32 // Analyse calls running
	verdict  atomic.Pointer[error]
	mu       sync.Mutex
	tail     [progressTail]string
	next     int
	filled   bool
	describe func() string
}

const progressTail = 24

// Beat records progress without an operation.
func (p *Progress) Beat() {
	if p != nil {
		p.n.Add(1)
	}
}

// Op records progress and the operation about to be (or just) performed,
// in the component's trace notation.
func (p *Progress) Op(op string) {
	if p == nil {
		return
	}
	p.n.Add(1)
	p.mu.Lock()
	p.tail[p.next] = op
	p.next = (p.next + 1) % progressTail
	if p.next == 0 {
		p.filled = true
	}
	p.mu.Unlock()
}

// Analyse runs f, the check's own analysis of what the subject did (a
// porcupine search, say), with the watchdog paused: the subject is not
// running, so the time is not its lack of progress. On a loaded machine a
// search of a few seconds would otherwise be reported as a hang with no
// call in flight. f must be bounded (porcupine's searches take a timeout).
func (p *Progress) Analyse(f func()) {
	if p == nil {
		f()
		return
	}
	p.analyses.Add(1)
	defer func() {
		p.analyses.Add(-1)
		p.n.Add(1)
	}()
	f()
}

// Describe sets a function that tells, when the check hangs, what the
// subject was doing (calls in flight, the model's state). It is called from
// the watchdog's goroutine, so it must not block and must be safe to call
// concurrently with the check; nil clears it.
func (p *Progress) Describe(f func() string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.describe = f
	p.mu.Unlock()
}

// Abandon reports err as the check's result at once, for a check that
// cannot finish: a subject that panicked while holding its lock leaves the
// check's cleanup (and its synctest bubble) blocked forever. The runner
// returns err within a tenth of a second and treats the check's goroutines
// as it treats a hang's.
func (p *Progress) Abandon(err error) {
	if p != nil && err != nil {
		p.verdict.CompareAndSwap(nil, &err)
	}
}

func (p *Progress) count() uint64 { return p.n.Load() }

// Last returns the operations recorded most recently, oldest first.
func (p *Progress) Last() []string {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	if p.filled {
		out = append(out, p.tail[p.next:]...)
	}
	return append(out, p.tail[:p.next]...)
}

func (p *Progress) context() string {
	p.mu.Lock()
	f := p.describe
	p.mu.Unlock()
	if f == nil {
		return ""
	}
	done := make(chan string, 1)
	go func() { done <- f() }()
	select {
	case s := <-done:
		return s
	case <-time.After(time.Second):
		return "(the check's description of its state did not return)"
	}
}

// tainted names the first check that hung in this process: its goroutines
// may still run (a spinning subject holds a CPU), so later checks in the
// process are not run but reported as NotRun, for a fresh process to run.
var tainted atomic.Pointer[string]

// NotRunPrefix starts the skip message of a check not run because an
// earlier check in the process hung; the kverify command runs such checks
// again in a fresh process.
const NotRunPrefix = "NOT RUN"

func hangAfter() time.Duration {
	if env, _ := kvenv.Load(); env.HangAfter > 0 { // a malformed one failed Run already
		return env.HangAfter
	}
	return HangAfter
}

// guarded runs c under guard. ended reports that the check body left its
// goroutine itself (t.Skip, t.FailNow): a check that failed t then ends
// t's goroutine too (FailNow); one that skipped returns ended for the
// caller to return.
func guarded(t *testing.T, c Check, cfg Config) (ended bool, err error) {
	err = guard(t, c, cfg)
	if _, ok := err.(errGoexit); ok {
		if t.Failed() {
			t.FailNow()
		}
		return true, nil
	}
	return false, err
}

// errGoexit marks a check body that left its goroutine with
// runtime.Goexit (t.SkipNow, t.FailNow) instead of returning.
type errGoexit struct{}

func (errGoexit) Error() string { return "the check ended with runtime.Goexit" }

// guard runs c in its own goroutine under the hang watchdog. A panic of the
// check (or of a subject call it made on its goroutine) becomes a
// violation; so does a check that makes no progress for hangAfter, which
// also taints the process.
func guard(t *testing.T, c Check, cfg Config) error {
	p := &Progress{}
	cfg.Progress = p
	abandoned := &atomic.Bool{}
	cfg.abandoned = abandoned
	done := make(chan error, 1)
	go func() {
		returned := false
		defer func() {
			if r := recover(); r != nil {
				done <- Broke(GNoPanic, "the subject panicked during the check: %v\n%s", r, subjectStack(debugStack()))
				return
			}
			if !returned {
				done <- errGoexit{}
			}
		}()
		err := c.Run(t, cfg)
		returned = true
		done <- err
	}()
	limit := hangAfter()
	spin := min(SpinAfter, limit)
	tick := time.NewTicker(min(limit/20, 100*time.Millisecond))
	defer tick.Stop()
	last, since := p.count(), time.Now()
	spinSeen := "" // a bubble that could not quiesce at the previous tick
	for {
		select {
		case err := <-done:
			return err
		case now := <-tick.C:
			if v := p.verdict.Load(); v != nil {
				name := t.Name()
				tainted.CompareAndSwap(nil, &name)
				abandoned.Store(true)
				return *v
			}
			if n := p.count(); n != last || p.analyses.Load() > 0 {
				last, since, spinSeen = n, now, ""
				continue
			}
			idle := now.Sub(since)
			var why, dump string
			switch {
			case idle >= limit:
				why = fmt.Sprintf("no progress for %v of wall time: the subject hangs, deadlocks or spins", idle.Round(100*time.Millisecond))
			case idle >= spin:
				dump = allStacks()
				b, ok := unquiescent(dump)
				if !ok || b != spinSeen {
					spinSeen = b
					continue
				}
				why = fmt.Sprintf("no progress for %v of wall time, and synctest bubble %s cannot become quiescent: a goroutine waits in synctest.Wait while another one of the bubble keeps running or waits for a mutex (the subject spins instead of blocking, or deadlocks on a lock)", idle.Round(100*time.Millisecond), b)
			default:
				continue
			}
			name := t.Name()
			tainted.CompareAndSwap(nil, &name)
			abandoned.Store(true)
			return hangViolation(cfg, c, p, why, dump)
		}
	}
}

// unquiescent finds, in a stack dump, a synctest bubble that has a
// goroutine in synctest.Wait and another goroutine that is running,
// runnable or waiting for a mutex (not durably blocked), and returns its
// number.
func unquiescent(dump string) (string, bool) {
	waiting := map[string]bool{}
	busy := map[string]bool{}
	for _, g := range strings.Split(dump, "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		_, state, ok := strings.Cut(header, "[")
		if !ok {
			continue
		}
		state, _, _ = strings.Cut(state, "]")
		_, bubble, ok := strings.Cut(state, "synctest bubble ")
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(state, "synctest.Wait"):
			waiting[bubble] = true
		case strings.HasPrefix(state, "running"), strings.HasPrefix(state, "runnable"),
			strings.HasPrefix(state, "sync.Mutex.Lock"), strings.HasPrefix(state, "sync.RWMutex"), strings.HasPrefix(state, "semacquire"):
			busy[bubble] = true
		}
	}
	for b := range waiting {
		if busy[b] {
			return b, true
		}
	}
	return "", false
}

func hangViolation(cfg Config, c Check, p *Progress, why, all string) error {
	if all == "" {
		all = allStacks()
	}
	var b strings.Builder
	b.WriteString(why)
	if ops := p.Last(); len(ops) > 0 {
		fmt.Fprintf(&b, "\n  last operations (oldest first):\n    %s", strings.Join(ops, "\n    "))
	} else {
		b.WriteString("\n  no operation recorded")
	}
	if s := p.context(); s != "" {
		fmt.Fprintf(&b, "\n  state: %s", s)
	}
	rel := subjectStack(all)
	fmt.Fprintf(&b, "\n  goroutines of the subject and the check:\n%s", indentLines(truncateLines(rel, 120), "    "))
	if path := saveStacks(cfg, c.Name, all); path != "" {
		fmt.Fprintf(&b, "\n  every goroutine: %s", path)
	}
	return &Violation{Guarantee: GTermination, Detail: b.String()}
}

func allStacks() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		if len(buf) >= 64<<20 {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

func debugStack() string {
	buf := make([]byte, 64<<10)
	return string(buf[:runtime.Stack(buf, false)])
}

// harness is the code around a subject, whose goroutines say nothing about
// the subject's hang: the test runner, rapid, goleak, porcupine and this
// package's runner.
var harness = []string{"pgregory.net/rapid", "go.uber.org/goleak", "github.com/anishathalye/porcupine", "github.com/kverify/kverify/props.guard"}

// subjectStack keeps the goroutines of a stack dump that run code outside
// the standard library and the harness: the subject's and the check's.
func subjectStack(dump string) string {
	var keep []string
	for _, g := range strings.Split(strings.TrimSpace(dump), "\n\n") {
		if relevant(g) {
			keep = append(keep, g)
		}
	}
	if len(keep) == 0 {
		return dump
	}
	return strings.Join(keep, "\n\n")
}

func relevant(goroutine string) bool {
	for _, line := range strings.Split(goroutine, "\n") {
		if strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "goroutine ") || strings.HasPrefix(line, "created by") {
			continue
		}
		fn := line
		if i := strings.LastIndexByte(fn, '('); i > 0 {
			fn = fn[:i]
		}
		first, _, _ := strings.Cut(fn, "/")
		if !strings.Contains(first, ".") {
			continue // standard library (no domain in the path)
		}
		harnessFrame := false
		for _, h := range harness {
			harnessFrame = harnessFrame || strings.HasPrefix(fn, h)
		}
		if !harnessFrame {
			return true
		}
	}
	return false
}

func truncateLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n... (%d more lines)", len(lines)-n)
}

func indentLines(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// saveStacks writes the full dump next to the traces and returns its path
// ("" if it could not).
func saveStacks(cfg Config, check, dump string) string {
	dir := cfg.TraceDir
	if dir == "" {
		dir = os.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ""
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(fmt.Sprintf("hang-%s-%s-%d.txt", cfg.Subject, check, time.Now().UnixNano()))
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, bytes.TrimSpace([]byte(dump)), 0o644); err != nil {
		return ""
	}
	return path
}
