package controllerruntime

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	pctrl "github.com/kverify/kverify/props/controller"
	pwq "github.com/kverify/kverify/props/workqueue"
	"github.com/kverify/kverify/subjects"
	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/subjects/upstream"
	"github.com/kverify/kverify/traces"
	"go.uber.org/goleak"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSuite runs the plain queue's checks on the priority queue under its
// profile, as TestSuite/workqueue/controller-runtime/<check>: it passes when
// the queue behaves as its profile and its declared defects say.
func TestSuite(t *testing.T) { suite.RunSuite(t, Entries()) }

// TestReplay replays the trace named by KVERIFY_REPLAY on the priority
// queue (kverify replay FILE --subject controller-runtime).
func TestReplay(t *testing.T) { suite.RunReplay(t, Entries()) }

// TestFindings pins the committed findings to the declarations
// (subjects.CheckFindings): every trace under
// traces/findings/controller-runtime names a declared divergence, and every
// declared divergence has a trace (kverify replay FILE reproduces each).
// So for each earlier release whose traces are committed
// (traces/findings/controller-runtime@VERSION, from make
// matrix-controller-runtime): held to that release's declarations, as the
// module generated for it has them (suite.CheckMatrixFindings: one run's
// traces, so an intermittent declaration it did not meet needs none).
func TestFindings(t *testing.T) {
	const dir = "../../traces/findings"
	suite.CheckFindings(t, dir, map[string]map[string][]checkkit.Divergence{Name: divergences()})
	olds, err := filepath.Glob(filepath.Join(dir, Name+"@*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(olds) == 0 {
		t.Fatalf("no release's traces under %s (make matrix-controller-runtime keeps them)", dir)
	}
	divs := map[string]map[string][]checkkit.Divergence{}
	for _, d := range olds {
		name := filepath.Base(d)
		divs[name] = divergencesAt(t, strings.TrimPrefix(name, Name+"@"))
	}
	suite.CheckMatrixFindings(t, dir, divs)
}

// divergencesAt is every declaration at release, by component, for the
// components the release takes part in (the controller from v0.15, the
// priority queue from v0.20: absent.go and controller_absent.go).
func divergencesAt(t *testing.T, release string) map[string][]checkkit.Divergence {
	t.Helper()
	has := func(rng string) bool {
		in, err := upstream.InRange(rng, release)
		if err != nil {
			t.Fatalf("%s: %v", release, err)
		}
		return in
	}
	out := map[string][]checkkit.Divergence{}
	if has(">=v0.15.0") {
		out[pctrl.Component] = atRelease(release, ControllerDivergences, historyController)
	}
	if has(">=v0.20.0") {
		out[pwq.Component] = atRelease(release, QueueDivergences, historyQueue)
		out[pwq.ComponentDelaying] = atRelease(release, DelayingDivergences, historyDelaying)
		out[pwq.ComponentRateLimit] = atRelease(release, RateLimitDivergences, historyRateLimit)
	}
	return out
}

// brokenPriorities are priority queues with one defect each: the
// priority queue/priority must catch (the main module's kill matrix has no
// mutant for it, as our queue has no priorities).
var brokenPriorities = map[string]func(priorityqueue.PriorityQueue[string], string, int){
	"priority ignored": func(q priorityqueue.PriorityQueue[string], k string, _ int) { q.Add(k) },
	"priority inverted": func(q priorityqueue.PriorityQueue[string], k string, p int) {
		p = -p
		q.AddWithOpts(priorityqueue.AddOpts{Priority: &p}, k)
	},
	"raise collapses": func(q priorityqueue.PriorityQueue[string], k string, p int) {
		// A re-add never changes a queued item's priority.
		if q.Len() == 0 || p <= 0 {
			q.AddWithOpts(priorityqueue.AddOpts{Priority: &p}, k)
			return
		}
		zero := 0
		q.AddWithOpts(priorityqueue.AddOpts{Priority: &zero}, k)
	},
}

type brokenPrioritized struct {
	priorityqueue.PriorityQueue[string]
	add      func(priorityqueue.PriorityQueue[string], string, int)
	ignoreAt bool // AddAfterWithPriority drops the priority
}

func (b brokenPrioritized) AddWithPriority(k string, p int) { b.add(b.PriorityQueue, k, p) }

func (b brokenPrioritized) AddAfterWithPriority(k string, p int, d time.Duration) {
	if b.ignoreAt {
		b.AddAfter(k, d)
		return
	}
	b.AddWithOpts(priorityqueue.AddOpts{Priority: &p, After: d}, k)
}

// brokenComposed makes its composed adds with opts' RateLimited alone and
// opts' After only when opts asks for no rate limit: one half of the
// composition dropped.
type brokenComposed struct {
	prioritized
	opts priorityqueue.AddOpts
}

func (b brokenComposed) AddRateLimitedAfter(k string, p int, after time.Duration) {
	o := b.opts
	o.Priority = &p
	if !o.RateLimited {
		o.After = after
	}
	b.AddWithOpts(o, k)
}

// correctAdd adds with the priority, as the queue should.
func correctAdd(q priorityqueue.PriorityQueue[string], k string, p int) {
	q.AddWithOpts(priorityqueue.AddOpts{Priority: &p}, k)
}

// TestPriorityCheckKills runs queue/priority on each broken queue: it
// must fail, naming the guarantee.
func TestPriorityCheckKills(t *testing.T) {
	cases := map[string]func(pwq.Deps) pwq.Prioritized{
		"delayed priority ignored": func(d pwq.Deps) pwq.Prioritized {
			return brokenPrioritized{newQueue(d, nil), correctAdd, true}
		},
		"composed add not rate-limited": func(d pwq.Deps) pwq.Prioritized {
			return brokenComposed{prioritized{newQueue(d, d.Limiter)}, priorityqueue.AddOpts{}}
		},
		"composed add not delayed": func(d pwq.Deps) pwq.Prioritized {
			return brokenComposed{prioritized{newQueue(d, d.Limiter)}, priorityqueue.AddOpts{RateLimited: true}}
		},
	}
	for name, add := range brokenPriorities {
		cases[name] = func(d pwq.Deps) pwq.Prioritized { return brokenPrioritized{newQueue(d, nil), add, false} }
	}
	for name, broken := range cases {
		t.Run(name, func(t *testing.T) {
			s := Subject()
			s.NewPrioritized = broken
			i := slices.IndexFunc(pwq.QueueChecks(s), func(c checkkit.Check) bool { return c.Name == pwq.CheckPriority })
			err := pwq.QueueChecks(s)[i].Run(t, checkkit.Config{})
			var v *checkkit.Violation
			if !errors.As(err, &v) || v.Guarantee != pwq.GPriority && v.Guarantee != pwq.GWhenOnce {
				t.Fatalf("queue/priority on a queue with %s: %v, want a violation of %q or %q", name, err, pwq.GPriority, pwq.GWhenOnce)
			}
			t.Logf("killed: %s", strings.SplitN(err.Error(), "\n", 2)[0])
		})
	}
}

// TestGoldenTraces replays the work queue family's committed traces (the
// counterexamples that killed mutants of our queue) on the priority queue.
// Replay judges each step by the model under the subject's profile, so the
// same vectors hold client-go's queue and this one to what each declares:
// every one must pass here too.
func TestGoldenTraces(t *testing.T) {
	var files []string
	for _, c := range []string{pwq.Component, pwq.ComponentDelaying, pwq.ComponentRateLimit} {
		fs, err := filepath.Glob("../../traces/testdata/*/" + c + "-*.json")
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	if len(files) == 0 {
		t.Fatal("no committed traces of the work queue family")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			tr, err := traces.Read(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := pwq.Replay(t, Subject(), tr); err != nil {
				t.Fatalf("trace %s (%s, recorded on %s) fails on %s: %v", f, tr.Check, tr.Subject, Name, err)
			}
		})
	}
}

// TestDivergencesShaped: every declaration names its guarantees and the
// shape of its violation (issue 27, class 4).
func TestDivergencesShaped(t *testing.T) {
	for comp, ds := range divergences() {
		if bad := subjects.Unshaped(ds); len(bad) > 0 {
			t.Errorf("component %s: declarations without Guarantees or Shape: %v", comp, bad)
		}
	}
}
