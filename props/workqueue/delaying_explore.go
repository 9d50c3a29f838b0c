package workqueue

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
)

// The exhaustive modes of the delaying queue and of the rate-limiting
// queue.
const (
	CheckDelayingExhaustive     = "delaying/exhaustive"
	CheckRateLimitingExhaustive = "ratelimiting/exhaustive"
)

// delayingDepth is delaying/exhaustive's default bound, in steps
// (KVERIFY_DEEPER adds to it): the search closes by it (477 states on ours
// and on client-go v0.37.2, 0.5 s).
const delayingDepth = 16

// delayingAlphabet is what delaying/exhaustive enumerates: AddAfter of two
// keys with two delays (so that a second AddAfter lowers, keeps or ties a
// waiting entry), an Add of a waiting key, Gets and Dones by two workers
// (a Get on an empty queue stays blocked while time passes and items
// become ready), a sleep to the next ready time (stopping 1ns before it
// on the way) and a second's sleep, Len, and ShutDown. Bulk steps and the
// extreme delays are the random machine's.
var delayingAlphabet = []dStep{
	{Kind: dAddAfter, Key: "a", D: time.Second}, {Kind: dAddAfter, Key: "a", D: 2 * time.Second},
	{Kind: dAddAfter, Key: "b", D: time.Second}, {Kind: dAdd, Key: "a"},
	{Kind: dGet, Worker: 0}, {Kind: dGet, Worker: 1}, {Kind: dDone, Worker: 0}, {Kind: dDone, Worker: 1},
	{Kind: dTick}, {Kind: dSleep, D: time.Second}, {Kind: dLen}, {Kind: dShutDown},
}

// rateLimitingAlphabet is what ratelimiting/exhaustive enumerates: the
// delaying alphabet's queue steps with AddRateLimited in place of
// AddAfter (the scripted limiter answers 1s or 0), Forget and NumRequeues.
var rateLimitingAlphabet = []dStep{
	{Kind: dAddRateLimited, Key: "a", D: time.Second}, {Kind: dAddRateLimited, Key: "a"},
	{Kind: dAddRateLimited, Key: "b", D: time.Second}, {Kind: dForget, Key: "a"}, {Kind: dNumRequeues, Key: "a", N: 2},
	{Kind: dGet, Worker: 0}, {Kind: dGet, Worker: 1}, {Kind: dDone, Worker: 0}, {Kind: dDone, Worker: 1},
	{Kind: dTick}, {Kind: dSleep, D: time.Second}, {Kind: dShutDown},
}

// rateLimitingDepth is ratelimiting/exhaustive's default bound (the
// search closes by it).
const rateLimitingDepth = 14

// delayingExhaustive runs an exhaustive check of the delaying machine in
// mode over alphabet: every run ends in the machine's checked ShutDown.
func delayingExhaustive(s Subject, name string, mode dMode, alphabet []dStep, depth int) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		cov, err := checkkit.Explore(cfg, checkkit.Space[dStep]{
			Name: "queue ops", Steps: alphabet, Depth: depth,
			Run: func(steps []dStep) (key string, enabled []int, err error) {
				rec := checkkit.NewRecorder(cfg.Progress)
				err = checkkit.InBubble(t, func() error {
					x := newDelayingMachine(s, mode, rec)
					defer x.Close()
					for _, st := range steps {
						if err := x.Apply(st); err != nil {
							return err
						}
					}
					key = x.key()
					for i, st := range alphabet {
						if x.Enabled(st) && !(st.Kind == dShutDown && x.m.IsShuttingDown()) {
							enabled = append(enabled, i)
						}
					}
					return x.Apply(finalStep)
				})
				return key, enabled, rec.Attach(err)
			},
		})
		checkkit.ReportCoverage(t, cov)
		return checkkit.Save(t, cfg, componentOf(mode), name, err)
	}
}

// key is the delaying machine's abstract state: the queue model's, the
// waiting entries in the order they fire with their ready times relative
// to now (absolute times grow with every sleep and would never meet), the
// workers' states (sorted: workers are interchangeable) and a drain in
// flight.
func (x *delayingMachine) key() string {
	now := time.Now()
	var ws []string
	for _, e := range x.m.Waiting() {
		ws = append(ws, fmt.Sprintf("%s+%v", e.Key, e.ReadyAt.Sub(now)))
	}
	workers := make([]string, len(x.workers))
	for i, w := range x.workers {
		switch {
		case w.getting != nil:
			workers[i] = "get"
		case w.holding:
			workers[i] = "hold:" + w.held
		default:
			workers[i] = "idle"
		}
	}
	slices.Sort(workers)
	return fmt.Sprintf("%s | w=%s | %s | drain=%v", x.m.Queue().Key(), strings.Join(ws, ","), strings.Join(workers, ","), x.drain != nil)
}
