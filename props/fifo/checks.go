package fifo

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	spec "github.com/kverify/kverify/spec/fifo"
	"github.com/kverify/kverify/traces"
	"pgregory.net/rapid"
)

// Check names.
const (
	CheckRules     = "rules"
	CheckModel     = "model"
	CheckNoKnown   = "no-known"
	CheckDedup     = "dedup"
	CheckReplace   = "replace"
	CheckSynced    = "synced"
	CheckFaults    = "faults"
	CheckPipeline  = "pipeline"
	CheckAtomic    = "atomic"
	CheckBatch     = "batch"
	CheckClose     = "close"
	CheckBadInput  = "bad-input"
	CheckRetention = "retention"
	CheckUnlock    = "unlock"
	CheckOptions   = "bad-options"
	CheckRace      = "race"
	CheckLinear    = "linear"
)

// Sizes: MaxList bounds a Replace's list and a Pops step; the thresholds
// are where client-go changes behaviour (the slow-pop trace past a depth of
// 10, RealFIFO's batch of 1000 and its unlock bound of 2000).
const MaxList = 3000

// Thresholds are the sizes Replace lists and Pops steps cluster around.
var Thresholds = []int{10, 11, spec.DefaultBatchSize, 2 * spec.DefaultBatchSize}

// mix is a machine's operation weights, indexed by Kind.
type mix [Know + 1]int

// machineSpec is one machine check: its base mode, the flags it draws per
// run and its operation mix.
type machineSpec struct {
	name string
	g    string
	base Mode
	draw func(t *rapid.T, m Mode) Mode
	mix  mix
	wide int // weight of a key from the wide range (of 8)
	max  int // the largest Replace list and Pops step
}

func drawFlags(t *rapid.T, m Mode) Mode {
	m.EmitReplaced = m.EmitReplaced || rapid.Bool().Draw(t, "emitReplaced")
	m.Transform = m.Transform || rapid.Bool().Draw(t, "transform")
	return m
}

func drawReal(t *rapid.T, m Mode) Mode {
	m.SyncDuring = true
	m.Transform = rapid.Bool().Draw(t, "transform")
	m.Atomic = rapid.Bool().Draw(t, "atomic")
	m.Known = !m.Atomic
	if m.Atomic {
		m.Bookmarks = rapid.Bool().Draw(t, "bookmarks")
		m.Unlock = rapid.Bool().Draw(t, "unlock")
	}
	return m
}

func drawRealNonAtomic(t *rapid.T, m Mode) Mode {
	m.SyncDuring = true
	m.Transform = rapid.Bool().Draw(t, "transform")
	return m
}

func drawRealAtomic(t *rapid.T, m Mode) Mode {
	m.SyncDuring = true
	m.Transform = rapid.Bool().Draw(t, "transform")
	m.Bookmarks = rapid.Bool().Draw(t, "bookmarks")
	m.Unlock = rapid.Bool().Draw(t, "unlock")
	return m
}

// Add Upd Del Rep Rsy Pop Err Pnc Pops Bat Bkm Cls Know
var (
	mixModel   = mix{6, 4, 4, 2, 2, 5, 0, 0, 2, 0, 0, 1, 1}
	mixDedup   = mix{3, 1, 8, 2, 1, 3, 0, 0, 1, 0, 0, 0, 1}
	mixReplace = mix{3, 1, 3, 6, 2, 3, 0, 0, 3, 0, 0, 0, 2}
	mixSynced  = mix{1, 1, 1, 4, 1, 6, 0, 0, 2, 0, 0, 0, 3}
	mixFaults  = mix{4, 2, 2, 2, 1, 3, 3, 3, 1, 0, 0, 1, 1}
	mixReal    = mix{6, 4, 4, 2, 2, 4, 0, 0, 2, 2, 1, 1, 1}
	mixBatch   = mix{5, 3, 3, 3, 2, 1, 0, 0, 1, 8, 1, 0, 1}
)

func (s Subject) machines() []machineSpec {
	if s.Real {
		return []machineSpec{
			{name: CheckModel, base: Mode{Known: true}, draw: drawRealNonAtomic, mix: mixReal, max: 2500, wide: 2,
				g: "with known objects, one delta per Add, Update, Delete (never suppressed) and Sync per unqueued known key on Resync, in arrival order; Replace queues tombstones for queued keys not listed whose last delta is not Deleted (carrying it) and for known keys not listed and not queued, then Replaced per listed object; transform once per object"},
			{name: CheckAtomic, base: Mode{Atomic: true}, draw: drawRealAtomic, mix: mixReal, max: 600, wide: 2,
				g: "in atomic mode Replace queues exactly one ReplacedAll carrying the transformed list, Resync one SyncAll, Bookmark one Bookmark when enabled; everything else one delta per event in arrival order"},
			{name: CheckBatch, base: Mode{SyncDuring: true}, draw: drawReal, mix: mixBatch, max: 2500, wide: 2,
				g: "PopBatch takes up to 1000 consecutive deltas, never past the initial population, never a key twice, never past a delta it cannot batch (taken alone when first); one delta goes to the single func; the FIFO syncs only after the batch that ends the initial population was processed"},
			{name: CheckSynced, base: Mode{SyncDuring: true}, draw: drawReal, mix: mixSynced, max: 300, wide: 2,
				g: "HasSynced is true exactly when the initial population (the deltas queued at the first Replace) has been popped and processed, never reverts; every pop's isInInitialList tells whether it began before the FIFO synced"},
			{name: CheckFaults, base: Mode{}, draw: drawReal, mix: mixFaults, max: 200, wide: 2,
				g: "a process func that returns an error or panics: Pop returns the error or propagates the panic, the delta is consumed, and the FIFO goes on exactly as the model (order, sync) with no lock held"},
			{name: CheckPipeline, base: Mode{Pipeline: true}, draw: drawReal, mix: mixReal, max: 1200, wide: 2,
				g: "popped deltas processed into the informer's store: adds, updates (with the stored old object) and deletes (tombstones included) notified in order with the right isInInitialList, ReplacedAll reconciled against the store, SyncAll an update per stored object; the store equals the model's"},
			{name: CheckReplace, base: Mode{Known: true}, draw: drawRealNonAtomic, mix: mixReplace, max: 2500, wide: 4,
				g: "Replace lists of thousands over hundreds of known and queued keys: every listed object exactly one Replaced, every queued or known key missing from the list exactly one tombstone with the newest state known, no ghosts, no double deletions; the initial population counted right also when Replace comes twice before a pop"},
		}
	}
	return []machineSpec{
		{name: CheckSynced, base: Mode{Known: true, SyncDuring: true}, draw: drawFlags, mix: mixSynced, max: 300, wide: 2,
			g: "HasSynced is true exactly when the initial population (the keys the first Replace queued) has been popped and processed, and not while the last one's process func runs; never reverts; isInInitialList right on every pop"},
		{name: CheckModel, base: Mode{Known: true}, draw: drawFlags, mix: mixModel, max: 1200, wide: 2,
			g: "with known objects: deltas accumulate per key, keys pop in first-touch order once each with all their deltas, Delete of an unknown unqueued key is dropped, Replace and Resync queue exactly the model's deltas, transform once per object"},
		{name: CheckNoKnown, base: Mode{}, draw: drawFlags, mix: mixModel, max: 300, wide: 2,
			g: "without known objects: Delete of an unqueued key is dropped, Resync is a no-op, Replace tombstones only queued keys; otherwise as the model"},
		{name: CheckDedup, base: Mode{Known: true}, draw: drawFlags, mix: mixDedup, max: 64, wide: 1,
			g: "only two trailing deletions collapse: the newer survives if the older is a tombstone, else the older; every other sequence is kept verbatim"},
		{name: CheckFaults, base: Mode{Known: true}, draw: drawFlags, mix: mixFaults, max: 200, wide: 2,
			g: "a process func that returns an error or panics: Pop returns the error or propagates the panic, the key is consumed (not requeued), and the FIFO goes on exactly as the model with no lock held"},
		{name: CheckPipeline, base: Mode{Known: true, Pipeline: true}, draw: drawFlags, mix: mixModel, max: 1200, wide: 2,
			g: "popped deltas processed into the informer's store: adds, updates (with the stored old object) and deletes (tombstones included) notified in order with the right isInInitialList; the store equals the model's"},
		{name: CheckReplace, base: Mode{Known: true}, draw: drawFlags, mix: mixReplace, max: MaxList, wide: 4,
			g: "Replace lists of thousands over hundreds of known and queued keys: every listed object exactly one Sync/Replaced, every queued or known key missing from the list exactly one tombstone with the newest state known, no ghosts, no double deletions; the initial population counted right also when Replace comes twice before a pop"},
	}
}

// Name is the full name of check c of the component.
func Name(s Subject, c string) string { return component(s) + "/" + c }

func component(s Subject) string {
	if s.Real {
		return RealComponent
	}
	return DeltaComponent
}

func stepGen(m mix, wide, max int) *rapid.Generator[Step] {
	op := checkkit.Choice(m[:]...)
	var ts []int
	for _, t := range Thresholds {
		if t < max {
			ts = append(ts, t)
		}
	}
	size := checkkit.Size(max, ts...)
	narrow := rapid.IntRange(0, 5)
	far := rapid.IntRange(0, 500)
	which := rapid.IntRange(0, 7)
	key := func(t *rapid.T) int {
		if which.Draw(t, "wide") < wide {
			return far.Draw(t, "key")
		}
		return narrow.Draw(t, "key")
	}
	return rapid.Custom(func(t *rapid.T) Step {
		k := Kind(op.Draw(t, "op"))
		switch k {
		case Add, Update, Delete, Know:
			return Step{Kind: k, Key: key(t)}
		case Replace:
			return Step{Kind: k, Off: narrow.Draw(t, "off"), N: size.Draw(t, "n")}
		case Pops:
			return Step{Kind: k, N: size.Draw(t, "n")}
		}
		return Step{Kind: k}
	})
}

func machineCheck(s Subject, ms machineSpec) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		if ms.name == CheckPipeline && s.Process == nil {
			checkkit.SkipNotOffered(t, "the subject offers no processing path (Subject.Process is nil; client-go's processDeltas is unexported, tools/cache/controller.go:823)")
		}
		scs := deltaScenarios[ms.name]
		if s.Real {
			scs = realScenarios[ms.name]
		}
		if err := runScenarios(s, scs, cfg); err != nil {
			return checkkit.Save(t, cfg, component(s), Name(s, ms.name), err)
		}
		gen := stepGen(ms.mix, ms.wide, ms.max)
		err := checkkit.Rapid(t, cfg, func(rt *rapid.T, rec *checkkit.Recorder) {
			mode := ms.draw(rt, ms.base)
			x, err := newMachine(s, mode, rec)
			if err != nil {
				rec.Errorf(rt, err)
			}
			defer x.f.Close()
			rt.Repeat(map[string]func(*rapid.T){
				"step": func(rt *rapid.T) {
					if err := x.Apply(gen.Draw(rt, "step")); err != nil {
						rec.Errorf(rt, err)
					}
				},
			})
		})
		return checkkit.Save(t, cfg, component(s), Name(s, ms.name), err)
	}
}

// Checks returns every check s can take: DeltaFIFO's or RealFIFO's as
// s.Real says. The fixed scenarios come first, then the race probe, then
// the machines (each starting with its own fixed scenarios), then the
// linearizability check: a runner that stops at the first failure gets
// there soonest.
func Checks(s Subject) []checkkit.Check {
	fixed, probes := witnesses(s)
	cs := append([]checkkit.Check{{Name: Name(s, CheckRules), Family: checkkit.FamilyWitness,
		Guarantee: "every rule the machines check, pinned by a fixed run at the state where it matters (dedup survivors, Delete suppression, Replace's tombstones and initial population, Resync, PopBatch's boundaries, sync after processing, processing into the store)",
		Run:       rules(s)}}, fixed...)
	cs = append(cs, probes[0])
	for _, ms := range s.machines() {
		cs = append(cs, checkkit.Check{Name: Name(s, ms.name), Family: checkkit.FamilyModel, Guarantee: ms.g, Run: machineCheck(s, ms)})
	}
	return checkkit.Replayable(append(cs, probes[1:]...), func(_ *testing.T, tr *traces.Trace) error { return Replay(s, tr) })
}

// Replay runs a saved trace of one of the machine checks on s.
func Replay(s Subject, tr *traces.Trace) error {
	comp, c, _ := strings.Cut(tr.Check, "/")
	if comp != component(s) {
		return fmt.Errorf("fifo: trace of %q is not of component %s", tr.Check, component(s))
	}
	found := c == CheckRules
	for _, ms := range s.machines() {
		found = found || ms.name == c
	}
	if !found {
		return fmt.Errorf("fifo: check %q has no replayable steps", tr.Check)
	}
	ops := tr.Ops()
	if len(ops) == 0 {
		return fmt.Errorf("fifo: empty trace")
	}
	mode, err := parseMode(ops[0])
	if err != nil {
		return err
	}
	var steps []Step
	for _, op := range ops[1:] {
		if op == "HasSynced" {
			continue // recorded by a failing check, not a step
		}
		st, err := ParseStep(op)
		if err != nil {
			return fmt.Errorf("trace step %q: %w", op, err)
		}
		steps = append(steps, st)
	}
	return RunSteps(s, mode, steps, nil)
}
