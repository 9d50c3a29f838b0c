package fifo

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
)

// CheckExhaustive is the FIFO's exhaustive mode (full name: the component,
// "/exhaustive").
const CheckExhaustive = "exhaustive"

// exhaustiveDepth is the default bound, in steps (KVERIFY_DEEPER adds to
// it). A FIFO keeps every event until it is popped, so almost every
// sequence leaves a state of its own and the search is nearly unreduced:
// depth 4 is about 10^4 runs per mode, a second or two; depth 6 took 6.5 s
// on the DeltaFIFO and 88 s on the three RealFIFO modes.
const exhaustiveDepth = 4

// exhaustiveModes are the FIFO configurations the search runs: with known
// objects (the informer's store), and for a RealFIFO also atomic with
// bookmarks and UnlockWhileProcessing (client-go v0.37.2's informer
// queue, whose gates default to both), and through the
// processing path into the store when the subject offers it.
func exhaustiveModes(s Subject) []Mode {
	if !s.Real {
		return []Mode{{Known: true}}
	}
	ms := []Mode{{Known: true}, {Atomic: true, Bookmarks: true, Unlock: true, SyncDuring: true}}
	if s.Process != nil {
		ms = append(ms, Mode{Atomic: true, Bookmarks: true, Unlock: true, Pipeline: true})
	}
	return ms
}

// fifoAlphabet is what the search enumerates in mode: events on two keys
// (an add, an update and a delete of one, an add of the other), relists of both, of the second alone and of nothing, a resync,
// a pop, and for a RealFIFO a batch pop (and a bookmark, when enabled,
// and a pop whose process func relists the second key, when unlocked).
// Every object a step makes has a fresh version; the state forgets the
// versions' values and keeps their order.
func fifoAlphabet(s Subject, mode Mode) []Step {
	steps := []Step{
		{Kind: Add, Key: 0}, {Kind: Update, Key: 0}, {Kind: Delete, Key: 0}, {Kind: Add, Key: 1},
		{Kind: Replace, Off: 0, N: 2}, {Kind: Replace, Off: 1, N: 1}, {Kind: Replace, N: 0},
		{Kind: Resync}, {Kind: Pop},
	}
	if s.Real {
		steps = append(steps, Step{Kind: PopBatch})
		if mode.Bookmarks {
			steps = append(steps, Step{Kind: BookmarkOp})
		}
		if mode.Unlock {
			// A relist of the second key landing while a delta is
			// processed unlocked.
			steps = append(steps, Step{Kind: PopReplace, Off: 1, N: 1})
		}
	}
	return steps
}

// exhaustive runs <component>/exhaustive: in every mode of
// exhaustiveModes, every sequence of up to exhaustiveDepth steps, breadth
// first with one run per state; every run ends with Close and every delta
// popped (the machines' finish), checked against the model.
func exhaustive(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		var total checkkit.Coverage
		modes := exhaustiveModes(s)
		for _, mode := range modes {
			alphabet := fifoAlphabet(s, mode)
			cov, err := checkkit.Explore(cfg, checkkit.Space[Step]{
				Name: "FIFO ops", Steps: alphabet, Depth: exhaustiveDepth,
				Run: func(steps []Step) (key string, enabled []int, err error) {
					rec := checkkit.NewRecorder(cfg.Progress)
					x, err := newMachine(s, mode, rec)
					if err != nil {
						return "", nil, rec.Attach(err)
					}
					defer x.f.Close()
					for _, st := range steps {
						if err := x.Apply(st); err != nil {
							return "", nil, rec.Attach(err)
						}
					}
					key = x.key()
					for i, st := range alphabet {
						if (st.Kind != Pop && st.Kind != PopBatch) || x.queued() > 0 {
							enabled = append(enabled, i)
						}
					}
					return key, enabled, rec.Attach(x.finish())
				},
			})
			total = total.Plus(cov)
			total.Bound = fmt.Sprintf("%s, %d modes", cov.Bound, len(modes))
			if err != nil {
				checkkit.ReportCoverage(t, total)
				return checkkit.Save(t, cfg, component(s), name(s, CheckExhaustive), err)
			}
		}
		checkkit.ReportCoverage(t, total)
		return nil
	}
}

// versionRe matches an object's version in the models' keys ("k0"@7/0)
// and the known objects' rendering below.
var versionRe = regexp.MustCompile(`@(\d+)`)

// key is the machine's abstract state: the FIFO model's whole state, the
// known objects and the informer store's model, with every version
// replaced by its rank among the versions in the state (their values
// only ever count as newer or older).
func (x *machine) key() string {
	var b strings.Builder
	if x.rm != nil {
		b.WriteString(x.rm.Key())
	} else {
		b.WriteString(x.dm.Key())
	}
	b.WriteString(" known=")
	for _, k := range x.store.ListKeys() {
		obj, _, _ := x.store.GetByKey(k)
		fmt.Fprintf(&b, "%s:%v;", k, obj)
	}
	b.WriteString(" store=")
	for _, k := range slices.Sorted(maps.Keys(x.model.Objects)) {
		fmt.Fprintf(&b, "%s;", x.model.Objects[k])
	}
	s := b.String()
	var vs []int
	for _, m := range versionRe.FindAllStringSubmatch(s, -1) {
		v, _ := strconv.Atoi(m[1])
		vs = append(vs, v)
	}
	slices.Sort(vs)
	vs = slices.Compact(vs)
	return versionRe.ReplaceAllStringFunc(s, func(m string) string {
		v, _ := strconv.Atoi(m[1:])
		i, _ := slices.BinarySearch(vs, v)
		return "@" + strconv.Itoa(i)
	})
}
