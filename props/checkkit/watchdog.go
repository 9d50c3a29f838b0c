package checkkit

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kverify/kverify/internal/kvenv"
	"go.uber.org/goleak"
)

// HangAfter is how long a check may go without progress while none of its
// goroutines can run before the runner fails it as a hang: a subject that
// deadlocks or blocks where it must not is reported within this much wall
// time, with the check's name, its last operations and the goroutine
// stacks, instead of waiting for the test binary's global timeout. The
// time counts only while every goroutine of the check is blocked, which a
// starved subject's are not (they are runnable), so load does not bring a
// hang verdict closer. KVERIFY_HANG_AFTER overrides it.
const HangAfter = 5 * time.Second

// spinAfter is how long, in wall time and in twice as much CPU time given
// to the process, a check may stay without progress while one of its
// synctest bubbles cannot become quiescent (a goroutine waits in
// synctest.Wait while another one of the bubble keeps running) before the
// runner fails it as a spin; and how long in wall time it may stay so with
// every goroutine of that bubble blocked (a deadlock on a lock). Legitimate
// work inside one Wait takes milliseconds of CPU; a subject that polls
// instead of blocking never lets the Wait return and burns CPU all along.
// CPU time, not wall time, is the evidence for a spin: a process that waits
// for a core is given none, so a loaded machine cannot turn a slow step
// into a spin.
const spinAfter = time.Second

// The CPU time, given to the process while a check makes no progress, that
// makes a spin (with an unquiescent bubble) and a busy hang (without one):
// twice the wall-time bounds, so that on two cores neither fires before the
// wall-time bounds did on a quiet machine.
const (
	spinCPU = 2 * spinAfter
	burnCPU = 2 * HangAfter
)

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

// last returns the operations recorded most recently, oldest first.
func (p *Progress) last() []string {
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

// Hung names the first check that hung in this process (its test's name),
// or is "" when none did. The hung check's goroutines were abandoned and
// may still run, so a TestMain that looks for leaked goroutines after the
// tests cannot tell a leak from them: it reports that it did not look
// instead (VerifyTestMain).
func Hung() string {
	if by := tainted.Load(); by != nil {
		return *by
	}
	return ""
}

// VerifyTestMain runs m's tests and then goleak.Find with opts, as
// goleak.VerifyTestMain does, unless a check hung in the process (Hung):
// then it says that it did not look, since that check's goroutines still
// run. The checks that came after the hung one ran in fresh processes of
// their own, where this TestMain looked. For a package whose subject has a
// declared hang.
func VerifyTestMain(m *testing.M, opts ...goleak.Option) {
	code := m.Run()
	if code == 0 {
		if hung := Hung(); hung != "" {
			fmt.Printf("goleak: not checked: %s hung in this process and its goroutines still run (each check after it ran in a fresh process, which was checked)\n", hung)
		} else if err := goleak.Find(opts...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: Errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// NotRunPrefix starts the skip message of a check not run because an
// earlier check in the process hung; the kverify command runs such checks
// again in a fresh process.
const NotRunPrefix = "NOT RUN"

func hangAfter(env kvenv.Config) time.Duration {
	if env.HangAfter > 0 {
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
// violation; so does a check that makes no progress while the evidence
// says it cannot (see watch), which also taints the process.
func guard(t *testing.T, c Check, cfg Config) error {
	labelTracebacks()
	p := &Progress{}
	cfg.Progress = p
	abandoned := &atomic.Bool{}
	cfg.abandoned = abandoned
	label := strconv.FormatUint(checkSerial.Add(1), 10)
	done := make(chan error, 1)
	go pprof.Do(context.Background(), pprof.Labels(checkLabel, label), func(context.Context) {
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
	})
	w := newWatch(p, label, hangAfter(cfg.environ()))
	// The watchdog's thread is its own, so that the CPU time of its stack
	// dumps can be measured and kept out of the check's clocks.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tick := time.NewTicker(w.tick())
	defer tick.Stop()
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
			why, dump := w.sample(now)
			if why == "" {
				continue
			}
			name := t.Name()
			tainted.CompareAndSwap(nil, &name)
			abandoned.Store(true)
			return hangViolation(cfg, c, p, why, dump, label)
		}
	}
}

// stacksMu keeps the watchdog's stack dumps and LiveHeap's measurements
// apart: a dump's buffers were once counted in a retention check's heap
// (ring/chunked/shrink: "the heap still holds 1072128 bytes") on a loaded
// machine, where a check goes long enough without progress to be looked at.
var stacksMu sync.Mutex

// checkSerial numbers the checks of a process for their labels.
var checkSerial atomic.Uint64

// watch is the watchdog's state for one check. Its verdicts rest on
// evidence that load does not fake:
//   - a spin: no progress while the process was given spinCPU of CPU time
//     (and spinAfter of wall time passed), and one of the check's bubbles
//     has a goroutine in synctest.Wait and another running or runnable in
//     two dumps in a row;
//   - a deadlock on a lock: the same kind of bubble, with none of the
//     check's goroutines able to run, for spinAfter of wall time;
//   - a hang: none of the check's goroutines able to run for limit of wall
//     time (a starved goroutine is runnable, so starvation stops this
//     clock);
//   - a busy hang: no progress while the process was given burnCPU of CPU
//     time, whatever the dumps say (a subject that polls outside a bubble).
//
// The stack dumps' own CPU time and wall time are measured and kept out of
// the clocks.
type watch struct {
	p     *Progress
	label string
	limit time.Duration
	spin  time.Duration

	last      uint64    // progress count at the last sample
	since     time.Time // when progress was last seen
	cpu       time.Duration
	haveCPU   bool
	idleCPU   time.Duration // CPU time given to the process since then, less the dumps'
	idle      idleClock     // wall time between dumps that both found nothing of the check able to run
	lastDump  time.Time     // when the last dump ended
	dumpStart time.Time     // when the last dump began
	nextDump  time.Time     // no dump before this (dumps cost at most a fifth of the time)
	spinSeen  string        // the unquiescent bubble of the last dump

	// The clocks and the dump, real ones but in the watchdog's own tests.
	cpuNow    func() (time.Duration, bool)
	threadNow func() (time.Duration, bool)
	stacks    func() string
	wallNow   func() time.Time

	dumps    int           // stack dumps taken for this check
	dumpCPU  time.Duration // their CPU time
	dumpWall time.Duration // their wall time
}

func newWatch(p *Progress, label string, limit time.Duration) *watch {
	w := &watch{p: p, label: label, limit: limit, spin: min(spinAfter, limit), since: time.Now(),
		cpuNow: processCPU, threadNow: threadCPU, stacks: allStacks, wallNow: time.Now}
	w.cpu, w.haveCPU = w.cpuNow()
	return w
}

// tick is the sampling period: at most a twentieth of the hang bound.
func (w *watch) tick() time.Duration { return min(w.limit/20, 100*time.Millisecond) }

// reset starts the clocks again after progress.
func (w *watch) reset(now time.Time) {
	w.since, w.idleCPU, w.idle, w.spinSeen = now, 0, idleClock{}, ""
}

// sample takes one look at the check and returns why it is stuck (with the
// dump that showed it), or "" while it is not.
func (w *watch) sample(now time.Time) (why, dump string) {
	cpu, ok := w.cpuNow()
	if ok && w.haveCPU {
		w.idleCPU += cpu - w.cpu
	}
	w.cpu, w.haveCPU = cpu, ok
	if n := w.p.count(); n != w.last || w.p.analyses.Load() > 0 {
		w.last = n
		w.reset(now)
		return "", ""
	}
	wall := now.Sub(w.since)
	idleCPU := w.idleCPU
	if !w.haveCPU {
		idleCPU = wall // no CPU clock here: wall time stands in for it
	}
	if idleCPU >= burnCPU {
		return fmt.Sprintf("no progress while the process was given %v of CPU time (%v of wall time): the subject spins or polls instead of blocking%s",
			idleCPU.Round(100*time.Millisecond), wall.Round(100*time.Millisecond), w.cost()), ""
	}
	if wall < min(w.limit, w.spin)/4 || now.Before(w.nextDump) {
		return "", ""
	}
	// The dump (a megabyte or more) must not be in a heap a check
	// measures: LiveHeap waits for stacksMu, and no reference to the dump
	// outlives it unless it is a verdict's (the check is over then).
	stacksMu.Lock()
	defer stacksMu.Unlock()
	dump, gs := w.dump()
	mine := owned(gs, w.label)
	idle := !anyActive(mine)
	w.idle.look(w.dumpStart, w.lastDump, idle)
	b, busy, unq := unquiescent(mine)
	seen := w.spinSeen
	w.spinSeen = ""
	if unq {
		w.spinSeen = b
	}
	switch {
	case unq && b == seen && busy && idleCPU >= spinCPU && wall >= w.spin:
		return fmt.Sprintf("no progress while the process was given %v of CPU time (%v of wall time), and synctest bubble %s cannot become quiescent: a goroutine waits in synctest.Wait while another one of the bubble keeps running (the subject spins instead of blocking)%s",
			idleCPU.Round(100*time.Millisecond), wall.Round(100*time.Millisecond), b, w.cost()), dump
	case unq && b == seen && idle && w.idle.blocked >= w.spin:
		return fmt.Sprintf("no progress for %v of wall time with none of the check's goroutines able to run, and synctest bubble %s cannot become quiescent: a goroutine waits in synctest.Wait while another one of the bubble waits for a lock (the subject deadlocks on a lock)%s",
			w.idle.blocked.Round(100*time.Millisecond), b, w.cost()), dump
	case idle && w.idle.blocked >= w.limit:
		return fmt.Sprintf("no progress for %v of wall time with none of the check's goroutines able to run: the subject hangs or deadlocks%s",
			w.idle.blocked.Round(100*time.Millisecond), w.cost()), dump
	}
	return "", ""
}

// dump takes a stack dump of every goroutine and parses it, measuring what
// that costs: its CPU time on this (locked) thread comes off the check's
// CPU clock, its wall time off the blocked clock, and the next dump waits
// four times its wall time, so that the dumps of a process full of
// goroutines do not crowd out the subject.
func (w *watch) dump() (string, []grt) {
	w.dumpStart = w.wallNow()
	c0, ok0 := w.threadNow()
	dump := w.stacks()
	gs := parseDump(dump)
	c1, ok1 := w.threadNow()
	w.lastDump = w.wallNow()
	took := w.lastDump.Sub(w.dumpStart)
	w.dumps++
	w.dumpWall += took
	if ok0 && ok1 {
		w.dumpCPU += c1 - c0
		w.idleCPU -= c1 - c0
	}
	w.nextDump = w.lastDump.Add(4 * took)
	return dump, gs
}

// cost says what the watchdog's own dumps took, which its clocks left out.
func (w *watch) cost() string {
	if w.dumps == 0 {
		return ""
	}
	return fmt.Sprintf(" (the watchdog's %d stack dumps took %v of CPU time and %v of wall time, not counted)",
		w.dumps, w.dumpCPU.Round(time.Millisecond), w.dumpWall.Round(time.Millisecond))
}

func hangViolation(cfg Config, c Check, p *Progress, why, all, label string) error {
	if all == "" {
		all = allStacks()
	}
	var b strings.Builder
	b.WriteString(why)
	if ops := p.last(); len(ops) > 0 {
		fmt.Fprintf(&b, "\n  last operations (oldest first):\n    %s", strings.Join(ops, "\n    "))
	} else {
		b.WriteString("\n  no operation recorded")
	}
	if s := p.context(); s != "" {
		fmt.Fprintf(&b, "\n  state: %s", s)
	}
	// The check's own goroutines, less the harness's frames-only ones.
	rel := subjectStack(joinEntries(owned(parseDump(all), label)))
	fmt.Fprintf(&b, "\n  goroutines of the subject and the check:\n%s", indentLines(truncateLines(rel, 120), "    "))
	if path := saveStacks(cfg, c.Name, all); path != "" {
		fmt.Fprintf(&b, "\n  every goroutine: %s", path)
	}
	return &Violation{Guarantee: GTermination, Detail: b.String()}
}

// idleClock adds up the wall time between consecutive looks (stack dumps)
// that both found none of a check's goroutines able to run: the evidence
// of a hang, which a starved goroutine (runnable) stops instead of
// running out. A look's own time is not counted: it runs from the end of
// one look to the start of the next.
type idleClock struct {
	blocked  time.Duration
	lastIdle bool
	lastEnd  time.Time
}

// look records a look that began at start, ended at end and found idle
// (nothing of the check able to run) or not.
func (c *idleClock) look(start, end time.Time, idle bool) {
	if idle && c.lastIdle {
		c.blocked += start.Sub(c.lastEnd)
	}
	c.lastIdle, c.lastEnd = idle, end
}

// lookAtStacks takes a stack dump of every goroutine and parses it, under
// stacksMu, so that neither is in a heap LiveHeap measures.
func lookAtStacks() []grt {
	stacksMu.Lock()
	defer stacksMu.Unlock()
	return parseDump(allStacks())
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
