package knative

//lint:file-ignore SA1019 a copy of knative's two-lane queue, which is built on client-go's untyped queues

import (
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	pwq "github.com/kverify/kverify/props/workqueue"
	"k8s.io/client-go/util/workqueue"
)

// The two-lane queue's bug classes are its own: items handed from one
// queue to another by goroutines, and three queues that must shut down,
// count and mark Done as one. Our own queue has none of that, so the main
// module's kill matrix has no mutant of it. seamQueue is a copy of the
// two-lane queue (knative.dev/pkg controller/two_lane_queue.go at the pin,
// Apache-2.0, Copyright 2020 The Knative Authors: the lanes, the movers and
// the consumer, without the slow lane's feeding, which the suite does not
// offer), with one defect each in seamMutants; TestSeamMutantsKilled
// requires the linearizability checks to kill every one, and
// TestSeamCopyPasses that the copy unbroken passes them, as knative does.

// seamMutant is one defect of the copy.
type seamMutant uint8

const (
	seamNone         seamMutant = iota
	seamShutDownLoss            // ShutDown shuts the consumer queue at once: adds still in the fast lane are lost
	seamHandTwice               // the mover hands every item to the consumer twice
	seamDoneFast                // Done marks the fast lane's item Done, not the consumer's
	seamMoverSkips              // the mover drops every third item it takes
)

var seamMutants = map[string]seamMutant{
	"shutdown loses the fast lane": seamShutDownLoss,
	"items handed over twice":      seamHandTwice,
	"Done goes to the fast lane":   seamDoneFast,
	"mover drops items":            seamMoverSkips,
}

type seamQueue struct {
	workqueue.RateLimitingInterface // the fast lane
	slowLane                        workqueue.RateLimitingInterface
	consumerQueue                   workqueue.Interface
	fastChan, slowChan              chan interface{}
	mutant                          seamMutant
}

func newSeamQueue(m seamMutant) *seamQueue {
	rl := workqueue.DefaultControllerRateLimiter()
	q := &seamQueue{
		RateLimitingInterface: workqueue.NewRateLimitingQueue(rl),
		slowLane:              workqueue.NewRateLimitingQueue(rl),
		consumerQueue:         workqueue.New(),
		fastChan:              make(chan interface{}),
		slowChan:              make(chan interface{}),
		mutant:                m,
	}
	go q.runConsumer()
	go q.process(q.RateLimitingInterface, q.fastChan)
	go q.process(q.slowLane, q.slowChan)
	return q
}

func (q *seamQueue) process(lane workqueue.Interface, ch chan interface{}) {
	defer close(ch)
	for n := 1; ; n++ {
		i, d := lane.Get()
		if d {
			break
		}
		lane.Done(i)
		if q.mutant == seamMoverSkips && n%3 == 0 {
			continue
		}
		ch <- i
		if q.mutant == seamHandTwice {
			ch <- i
		}
	}
}

// runConsumer is knative's, with the fast lane's closed channel taken out
// of the second select once it is closed: knative's keeps receiving from
// it and spins (the drain finding), which would end every check that
// reaches a ShutDown here as a spin, before the defect under test shows.
func (q *seamQueue) runConsumer() {
	fast, slow := true, true
	defer q.consumerQueue.ShutDown()
	for fast || slow {
		if fast {
			select {
			case item, ok := <-q.fastChan:
				if !ok {
					fast = false
					continue
				}
				q.consumerQueue.Add(item)
				continue
			default:
			}
		}
		fastChan := q.fastChan
		if !fast {
			fastChan = nil
		}
		select {
		case item, ok := <-fastChan:
			if !ok {
				fast = false
				continue
			}
			q.consumerQueue.Add(item)
		case item, ok := <-q.slowChan:
			if !ok {
				slow = false
				continue
			}
			q.consumerQueue.Add(item)
		}
	}
}

func (q *seamQueue) ShutDown() {
	q.RateLimitingInterface.ShutDown()
	q.slowLane.ShutDown()
	if q.mutant == seamShutDownLoss {
		q.consumerQueue.ShutDown()
	}
}

func (q *seamQueue) Done(i interface{}) {
	if q.mutant == seamDoneFast {
		q.RateLimitingInterface.Done(i)
		return
	}
	q.consumerQueue.Done(i)
}

func (q *seamQueue) Get() (interface{}, bool) { return q.consumerQueue.Get() }

func (q *seamQueue) Len() int {
	return q.RateLimitingInterface.Len() + q.slowLane.Len() + q.consumerQueue.Len()
}

// seamSubject is the copy with mutant m behind the suite's interfaces.
func seamSubject(m seamMutant) pwq.Subject {
	s := Subject()
	s.New = func(pwq.Deps) pwq.Queue { return queue{newSeamQueue(m)} }
	return s
}

// seamChecks are the checks a copy is held to: the two linearizability
// checks, which judge what the lanes hand over.
func seamChecks(s pwq.Subject) []checkkit.Check {
	return slices.DeleteFunc(pwq.QueueChecks(s), func(c checkkit.Check) bool {
		return c.Name != pwq.CheckLinearFIFO && c.Name != pwq.CheckLinearPerKey && c.Name != pwq.CheckRace
	})
}

func TestSeamCopyPasses(t *testing.T) {
	checkkit.Run(t, seamChecks(seamSubject(seamNone)), checkkit.WithSubject("knative-copy"))
}

// TestSeamMutant runs the seam checks on the mutant KVERIFY_SEAM_MUTANT
// names, for TestSeamMutantsKilled, in a process of its own: a mutant
// that hangs is reported by the checks' watchdog, and its goroutines die
// with the process.
func TestSeamMutant(t *testing.T) {
	name := os.Getenv("KVERIFY_SEAM_MUTANT")
	if name == "" {
		t.Skip("run by TestSeamMutantsKilled")
	}
	m, ok := seamMutants[name]
	if !ok {
		t.Fatalf("KVERIFY_SEAM_MUTANT=%q: no such mutant", name)
	}
	checkkit.Run(t, seamChecks(seamSubject(m)), checkkit.WithSubject("knative-copy:"+name))
}

// TestSeamMutantsKilled requires the seam checks to fail on every mutant
// of the copy, with a violation.
func TestSeamMutantsKilled(t *testing.T) {
	bin, err := os.Executable()
	if err != nil {
		t.Skip("cannot run the test binary again:", err)
	}
	for _, name := range slices.Sorted(maps.Keys(seamMutants)) {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(bin, "-test.run", "^TestSeamMutant$", "-test.v")
			cmd.Env = append(os.Environ(), "KVERIFY_SEAM_MUTANT="+name)
			out, err := cmd.CombinedOutput()
			var broke []string
			for _, l := range strings.Split(string(out), "\n") {
				if i := strings.Index(l, ": broke "); i >= 0 && strings.Contains(l, "check ") {
					broke = append(broke, strings.TrimSpace(l[strings.Index(l, "check "):]))
				}
			}
			if err == nil || len(broke) == 0 {
				t.Fatalf("the seam checks did not kill the two-lane copy with %q (exit %v):\n%s", name, err, out)
			}
			for _, b := range broke {
				t.Logf("killed: %.200s", b)
			}
		})
	}
}
