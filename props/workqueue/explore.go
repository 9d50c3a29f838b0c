package workqueue

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	wq "github.com/kverify/kverify/spec/workqueue"
)

// CheckExhaustive is the plain queue's exhaustive mode: every sequence of
// queue operations up to a depth bound, breadth first, one state per model
// state (see checkkit.Explore).
const CheckExhaustive = "queue/exhaustive"

// exhaustiveMode is the machine mode of queue/exhaustive: drains may start
// with items queued, so that a drain in flight meets every other call.
var exhaustiveMode = Mode{FullDrain: true}

// exhaustiveDepth is queue/exhaustive's default bound, in operations: on
// 2 cores, under a second, and past the depth where the space closes (13
// with three keys: every reachable state is then explored; KVERIFY_DEEPER
// adds to it).
const exhaustiveDepth = 14

// queueAlphabet is the operations queue/exhaustive enumerates: two keys,
// so that adds collide and the FIFO has an order; three workers, so that
// Gets block side by side and several items are held at once; every
// lifecycle call. A Get is started and left blocked if nothing is
// queued, so a later step races it: a ShutDown, an Add, a Done that
// re-queues or a drain reaches it in every order and at every point where
// calls can block. (Where two calls are both running, not blocked, the
// runtime decides; the race probes sweep those.) Bulk steps are the
// random machines': sizes are not a choice to enumerate.
var queueAlphabet = []Step{
	{Kind: wq.Add, Key: "a"}, {Kind: wq.Add, Key: "b"}, {Kind: wq.Add, Key: "c"},
	{Kind: wq.Get, Worker: 0}, {Kind: wq.Get, Worker: 1}, {Kind: wq.Get, Worker: 2},
	{Kind: wq.Done, Worker: 0}, {Kind: wq.Done, Worker: 1}, {Kind: wq.Done, Worker: 2},
	{Kind: wq.Len}, {Kind: wq.ShuttingDown},
	{Kind: wq.ShutDownWithDrain}, {Kind: wq.ShutDown},
}

// exhaustiveCheck runs queue/exhaustive: every run ends with a checked
// ShutDown, which must release every Get still blocked and the drain.
func exhaustiveCheck(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		cov, err := checkkit.Explore(cfg, checkkit.Space[Step]{
			Name: "queue ops", Steps: queueAlphabet, Depth: exhaustiveDepth,
			Run: func(steps []Step) (key string, enabled []int, err error) {
				rec := checkkit.NewRecorder(cfg.Progress)
				err = checkkit.InBubble(t, func() error {
					x := newMachine(s, exhaustiveMode, rec)
					defer x.Close()
					for _, st := range steps {
						if err := x.Apply(st); err != nil {
							return err
						}
					}
					key = x.key()
					for i, st := range queueAlphabet {
						if x.Enabled(st) {
							enabled = append(enabled, i)
						}
					}
					return x.Apply(Step{Kind: wq.ShutDown})
				})
				return key, enabled, rec.Attach(err)
			},
		})
		checkkit.ReportCoverage(t, cov)
		return checkkit.Save(t, cfg, Component, CheckExhaustive, err)
	}
}

// key is the machine's abstract state: the model's, each worker's (a Get
// in flight, the item held) and a drain in flight. Workers are
// interchangeable to a queue, so their states are sorted: a state where
// w0 holds a and w1 b is the one where w0 holds b and w1 a.
func (x *machine) key() string {
	ws := make([]string, len(x.workers))
	for i, w := range x.workers {
		switch {
		case w.getting != nil:
			ws[i] = "get"
		case w.holding:
			ws[i] = "hold:" + w.held
		default:
			ws[i] = "idle"
		}
	}
	slices.Sort(ws)
	return fmt.Sprintf("%s | %s | drain=%v", x.m.Key(), strings.Join(ws, ","), x.drain != nil)
}
