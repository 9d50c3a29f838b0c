package fifo

import (
	"fmt"
	"slices"
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
	// CheckErrorPaths and CheckCollaborators are the machines of issue
	// 27's classes 2 and 3: calls that fail, and collaborators that fail,
	// each tried from every state class.
	CheckErrorPaths    = "error-paths"
	CheckCollaborators = "collaborators"
)

// Sizes: maxList bounds a Replace's list and a Pops step; the thresholds
// are where client-go changes behaviour (the slow-pop trace past a depth of
// 10, RealFIFO's batch of 1000 and its unlock bound of 2000).
const maxList = 3000

// thresholds are the sizes Replace lists and Pops steps cluster around.
var thresholds = []int{10, 11, spec.DefaultBatchSize, 2 * spec.DefaultBatchSize}

// mix is a machine's operation weights, indexed by Kind.
type mix [PopReplace + 1]int

// machineSpec is one machine check: its base mode, the flags it draws per
// run, its operation mix and the inputs it draws.
type machineSpec struct {
	name string
	g    string
	base Mode
	draw func(t *rapid.T, m Mode) Mode
	mix  mix
	wide int // weight of a key from the wide range (of 8)
	max  int // the largest Replace list and Pops step
	in   inputs
}

// inputs are what a machine's steps draw besides their operation and keys.
type inputs struct {
	// vary: namespaced objects, states delivered again, relists with
	// duplicate keys, in reverse order or empty (every machine).
	vary bool
	// objFaults is the weight (of 8) of an Add, Update, Delete or Replace
	// whose object (one listed object) the key function or, with a
	// transformer, the transformer rejects.
	objFaults int
	// knownFaults is the weight (of 8) of a Delete (DeltaFIFO), Replace or
	// Resync whose known-objects store fails (lookup, ghost, foreign), and
	// of an Add, Update or Delete the transformer rejects.
	knownFaults int
	// popFaults: one PopBatch in four has a process func that fails.
	popFaults bool
	// states: each run first takes the FIFO to a state class it draws
	// (stateClasses), so that the faults are tried from every one.
	states bool
}

var vary = inputs{vary: true}

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

// Add Upd Del Rep Rsy Pop Err Pnc Pops Bat Bkm Cls Know PopRep
var (
	mixModel   = mix{6, 4, 4, 2, 2, 5, 0, 0, 2, 0, 0, 1, 1}
	mixDedup   = mix{3, 1, 8, 2, 1, 3, 0, 0, 1, 0, 0, 0, 1}
	mixReplace = mix{3, 1, 3, 6, 2, 3, 0, 0, 3, 0, 0, 0, 2}
	mixSynced  = mix{1, 1, 1, 4, 1, 6, 0, 0, 2, 0, 0, 0, 3}
	// A relist landing while a delta is processed unlocked (PopReplace)
	// matters most before the first sync, after a bookmark: RealFIFO's
	// synced machine (a FIFO that processes under its lock skips it).
	mixRealSyn = mix{1, 1, 1, 4, 1, 6, 0, 0, 2, 0, 2, 0, 3, 3}
	mixFaults  = mix{4, 2, 2, 2, 1, 3, 3, 3, 1, 0, 0, 1, 1}
	mixReal    = mix{6, 4, 4, 2, 2, 4, 0, 0, 2, 2, 1, 1, 1}
	mixBatch   = mix{5, 3, 3, 3, 2, 1, 0, 0, 1, 8, 1, 0, 1}
	mixRealFlt = mix{4, 2, 2, 2, 1, 3, 3, 3, 1, 3, 0, 1, 1}
	mixErrors  = mix{4, 3, 3, 4, 1, 3, 0, 0, 2, 0, 0, 0, 2}
	mixRealErr = mix{4, 3, 3, 4, 1, 3, 0, 0, 2, 2, 1, 0, 2}
	mixCollab  = mix{3, 2, 4, 4, 4, 3, 0, 0, 2, 0, 0, 0, 4}
	mixRealCol = mix{3, 2, 2, 4, 4, 3, 0, 0, 2, 1, 0, 0, 4}
)

// drawErrors draws a DeltaFIFO error-paths run's options: known objects or
// not, a transformer three times in four (so that it can reject).
func drawErrors(t *rapid.T, m Mode) Mode {
	m.Known = rapid.Bool().Draw(t, "known")
	m.EmitReplaced = rapid.Bool().Draw(t, "emitReplaced")
	m.Transform = rapid.IntRange(0, 3).Draw(t, "transform") > 0
	return m
}

// drawRealErrors is drawReal with a transformer three times in four.
func drawRealErrors(t *rapid.T, m Mode) Mode {
	m = drawReal(t, m)
	m.Transform = m.Transform || rapid.Bool().Draw(t, "transform again")
	return m
}

// drawCollab draws a collaborators run's options: known objects (required),
// a transformer three times in four.
func drawCollab(t *rapid.T, m Mode) Mode {
	m.EmitReplaced = rapid.Bool().Draw(t, "emitReplaced")
	m.Transform = rapid.IntRange(0, 3).Draw(t, "transform") > 0
	return m
}

func (s Subject) machines() []machineSpec {
	if s.Real {
		return []machineSpec{
			// First, as DeltaFIFO's: the cheapest machine, and the one a
			// sync-counting bug fails.
			{name: CheckSynced, base: Mode{SyncDuring: true}, draw: drawReal, mix: mixRealSyn, max: 300, in: vary, wide: 2,
				g: "HasSynced is true exactly when the initial population (the deltas queued at the first Replace) has been popped and processed, never reverts, also when that Replace lands while an earlier delta is processed unlocked (that delta is not one of its); every pop's isInInitialList tells whether it began before the FIFO synced"},
			{name: CheckModel, base: Mode{Known: true}, draw: drawRealNonAtomic, mix: mixReal, max: 2500, in: vary, wide: 2,
				g: "with known objects, one delta per Add, Update, Delete (never suppressed) and Sync per unqueued known key on Resync, in arrival order; Replace queues tombstones for queued keys not listed whose last delta is not Deleted (carrying it) and for known keys not listed and not queued, then Replaced per listed object; transform once per object"},
			{name: CheckAtomic, base: Mode{Atomic: true}, draw: drawRealAtomic, mix: mixReal, max: 600, in: vary, wide: 2,
				g: "in atomic mode Replace queues exactly one ReplacedAll carrying the transformed list, Resync one SyncAll, Bookmark one Bookmark when enabled; everything else one delta per event in arrival order"},
			{name: CheckBatch, base: Mode{SyncDuring: true}, draw: drawReal, mix: mixBatch, max: 2500, in: vary, wide: 2,
				g: "PopBatch takes up to 1000 consecutive deltas, never past the initial population, never a key twice, never past a delta it cannot batch (taken alone when first); one delta goes to the single func; the FIFO syncs only after the batch that ends the initial population was processed"},
			{name: CheckFaults, base: Mode{}, draw: drawReal, mix: mixRealFlt, max: 200, in: inputs{vary: true, popFaults: true}, wide: 2,
				g: "a process func (Pop's, PopBatch's batch or single) that returns an error or panics: Pop and PopBatch return the error or propagate the panic, the deltas are consumed and counted as processed, and the FIFO goes on exactly as the model (order, sync) with no lock held"},
			{name: CheckErrorPaths, base: Mode{}, draw: drawRealErrors, mix: mixRealErr, max: 200, wide: 1,
				in: inputs{vary: true, objFaults: 4, popFaults: true, states: true},
				g:  "from every state class (fresh, unpopulated with deltas queued, mid initial sync, synced idle or busy, closed), an Add, Update, Delete or Replace whose object (one listed object) the key function or the transformer rejects returns an error, queues nothing (a relist is all or nothing), marks the FIFO populated only as client-go does (producers: yes; a failed Replace: no), and leaves HasSynced, the initial population and every later pop's isInInitialList as the model; a PopBatch whose process func fails returns its error or panic, its deltas taken and counted"},
			{name: CheckCollaborators, base: Mode{Known: true}, draw: drawRealNonAtomic, mix: mixRealCol, max: 200, wide: 1,
				in: inputs{vary: true, knownFaults: 4, states: true},
				g:  "from every state class, known objects whose GetByKey fails, that list a key they do not have, or hold an object without a key, and a transformer that rejects an object: Replace queues the tombstone without an object (with the stored one), Resync skips the key (stops with an error at the keyless object, the syncs before it queued), the transformer's error is returned with nothing queued; nothing else changes"},
			{name: CheckPipeline, base: Mode{Pipeline: true}, draw: drawReal, mix: mixReal, max: 1200, in: vary, wide: 2,
				g: "popped deltas processed into the informer's store: adds, updates (with the stored old object) and deletes (tombstones included) notified in order with the right isInInitialList, ReplacedAll reconciled against the store, SyncAll an update per stored object; the store equals the model's"},
			{name: CheckReplace, base: Mode{Known: true}, draw: drawRealNonAtomic, mix: mixReplace, max: 2500, in: vary, wide: 4,
				g: "Replace lists of thousands over hundreds of known and queued keys: every listed object exactly one Replaced, every queued or known key missing from the list exactly one tombstone with the newest state known, no ghosts, no double deletions; the initial population counted right also when Replace comes twice before a pop"},
		}
	}
	return []machineSpec{
		{name: CheckSynced, base: Mode{Known: true, SyncDuring: true}, draw: drawFlags, mix: mixSynced, max: 300, in: vary, wide: 2,
			g: "HasSynced is true exactly when the initial population (the keys the first Replace queued) has been popped and processed, and not while the last one's process func runs; never reverts; isInInitialList right on every pop"},
		{name: CheckModel, base: Mode{Known: true}, draw: drawFlags, mix: mixModel, max: 1200, in: vary, wide: 2,
			g: "with known objects: deltas accumulate per key, keys pop in first-touch order once each with all their deltas, Delete of an unknown unqueued key is dropped, Replace and Resync queue exactly the model's deltas, transform once per object"},
		{name: CheckNoKnown, base: Mode{}, draw: drawFlags, mix: mixModel, max: 300, in: vary, wide: 2,
			g: "without known objects: Delete of an unqueued key is dropped, Resync is a no-op, Replace tombstones only queued keys; otherwise as the model"},
		{name: CheckDedup, base: Mode{Known: true}, draw: drawFlags, mix: mixDedup, max: 64, in: vary, wide: 1,
			g: "only two trailing deletions collapse: the newer survives if the older is a tombstone, else the older; every other sequence is kept verbatim"},
		{name: CheckFaults, base: Mode{Known: true}, draw: drawFlags, mix: mixFaults, max: 200, in: vary, wide: 2,
			g: "a process func that returns an error or panics: Pop returns the error or propagates the panic, the key is consumed (not requeued), and the FIFO goes on exactly as the model with no lock held"},
		{name: CheckErrorPaths, base: Mode{}, draw: drawErrors, mix: mixErrors, max: 200, wide: 1,
			in: inputs{vary: true, objFaults: 4, states: true},
			g:  "from every state class (fresh, unpopulated with keys queued, mid initial sync, synced idle or busy, closed), an Add, Update, Delete or Replace whose object (one listed object) the key function or the transformer rejects returns an error, queues nothing (a relist is all or nothing), marks the FIFO populated only as client-go does (Add, Update, a keyed Delete: yes; a Delete without a key, a failed Replace: no), and leaves HasSynced, the initial population and every later pop's isInInitialList as the model"},
		{name: CheckCollaborators, base: Mode{Known: true}, draw: drawCollab, mix: mixCollab, max: 200, wide: 1,
			in: inputs{vary: true, knownFaults: 4, states: true},
			g:  "from every state class, known objects whose GetByKey fails, that list a key they do not have, or hold an object without a key, and a transformer that rejects an object: Delete of an unqueued key whose lookup fails is queued (of a key not found, dropped), Replace queues the tombstone without an object (with the stored one), Resync skips the key (stops with an error at the keyless object, the syncs before it queued), the transformer's error is returned with nothing queued; nothing else changes"},
		{name: CheckPipeline, base: Mode{Known: true, Pipeline: true}, draw: drawFlags, mix: mixModel, max: 1200, in: vary, wide: 2,
			g: "popped deltas processed into the informer's store: adds, updates (with the stored old object) and deletes (tombstones included) notified in order with the right isInInitialList; the store equals the model's"},
		{name: CheckReplace, base: Mode{Known: true}, draw: drawFlags, mix: mixReplace, max: maxList, in: vary, wide: 4,
			g: "Replace lists of thousands over hundreds of known and queued keys: every listed object exactly one Sync/Replaced, every queued or known key missing from the list exactly one tombstone with the newest state known, no ghosts, no double deletions; the initial population counted right also when Replace comes twice before a pop"},
	}
}

// name is the full name of check c of the component.
func name(s Subject, c string) string { return component(s) + "/" + c }

func component(s Subject) string {
	if s.Real {
		return RealComponent
	}
	return DeltaComponent
}

// stepGen is the generator of ms's steps for a FIFO in mode.
func stepGen(s Subject, ms machineSpec, mode Mode) *rapid.Generator[Step] {
	m, wide, max, in := ms.mix, ms.wide, ms.max, ms.in
	op := checkkit.Choice(m[:]...)
	var ts []int
	for _, t := range thresholds {
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
	// oneIn is true once in n draws; false shrinks to false.
	oneIn := func(t *rapid.T, n int, label string) bool {
		return in.vary && rapid.IntRange(0, n-1).Draw(t, label) == n-1
	}
	// The faults a step of each kind can draw in this mode; index 0 of
	// each is none, where shrinking goes.
	var objFaults, knownFaults []Fault
	objFaults = append(objFaults, faultNoKey)
	if mode.Transform {
		objFaults = append(objFaults, faultNoTransform)
	}
	if mode.Known {
		knownFaults = []Fault{faultLookup, faultGhost, faultForeign}
	}
	fault := func(t *rapid.T, k Kind) Fault {
		var fs []Fault
		weight := 0
		switch {
		case in.objFaults > 0 && k != Resync:
			fs, weight = objFaults, in.objFaults
		case in.knownFaults > 0:
			switch {
			case k == Resync || k == Replace || (k == Delete && !s.Real):
				fs = knownFaults
			case mode.Transform && k != Resync:
				fs = []Fault{faultNoTransform}
			}
			weight = in.knownFaults
		}
		if len(fs) == 0 || rapid.IntRange(0, 7).Draw(t, "faulty") >= weight {
			return noFault
		}
		return rapid.SampledFrom(fs).Draw(t, "fault")
	}
	return rapid.Custom(func(t *rapid.T) Step {
		st := Step{Kind: Kind(op.Draw(t, "op"))}
		switch st.Kind {
		case Add, Update, Delete, Know:
			st.Key = key(t)
			st.NS = oneIn(t, 8, "ns")
			st.Again = oneIn(t, 8, "again")
			if st.Kind != Know {
				st.Fault = fault(t, st.Kind)
			}
		case PopReplace:
			st.Off = narrow.Draw(t, "off")
			st.N = rapid.IntRange(0, 3).Draw(t, "n")
		case Replace:
			st.Off = narrow.Draw(t, "off")
			if !oneIn(t, 10, "empty") {
				st.N = size.Draw(t, "n")
			}
			st.Dup = oneIn(t, 6, "dup")
			st.Rev = oneIn(t, 6, "rev")
			st.NS = oneIn(t, 8, "ns")
			st.Fault = fault(t, Replace)
			switch n := st.N + (st.N+1)/2*b2i(st.Dup); {
			case knownFault(st.Fault):
				st.At = narrow.Draw(t, "at")
			case st.Fault != noFault && n == 0:
				st.Fault = noFault
			case st.Fault != noFault:
				st.At = rapid.IntRange(0, n-1).Draw(t, "at")
			}
		case Resync:
			if st.Fault = fault(t, Resync); st.Fault != noFault {
				st.At = narrow.Draw(t, "at")
			}
		case Pops:
			st.N = size.Draw(t, "n")
		case PopBatch:
			if in.popFaults {
				st.Fault = []Fault{noFault, noFault, faultErr, faultPanic}[rapid.IntRange(0, 3).Draw(t, "fail")]
			}
		}
		return st
	})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// drawState draws, for a machine that asks for one (inputs.states), a
// state class, and returns mode adjusted for it and the steps that take the
// FIFO there (a prelude) followed by a probe: one of the machine's error
// paths, drawn evenly, tried from that state.
func drawState(t *rapid.T, s Subject, ms machineSpec, mode Mode) (Mode, []Step) {
	if !ms.in.states {
		return mode, nil
	}
	c := rapid.SampledFrom(stateClasses).Draw(t, "state")
	mode, pre := prelude(s.Real, mode, c)
	steps := mustSteps(pre)
	if paths := errorPaths(s, ms, mode); len(paths) > 0 {
		st := rapid.SampledFrom(paths).Draw(t, "probe")
		switch st.Kind {
		case Add, Update, Delete:
			st.Key = rapid.IntRange(0, 5).Draw(t, "key")
		case Replace:
			st.Off = rapid.IntRange(0, 5).Draw(t, "off")
			st.N = rapid.IntRange(1, 4).Draw(t, "n")
			if knownFault(st.Fault) {
				st.At = rapid.IntRange(0, 5).Draw(t, "at")
			} else {
				st.At = rapid.IntRange(0, st.N-1).Draw(t, "at")
			}
		case Resync:
			st.At = rapid.IntRange(0, 5).Draw(t, "at")
		}
		steps = append(steps, st)
	}
	return mode, steps
}

// errorPaths are the error paths ms tries from every state class, as
// steps without their keys, for a FIFO in mode: a rejected object on each
// producer and Replace (inputs.objFaults), each known-objects fault on the
// calls that look objects up and the transformer's rejection on the
// producers (inputs.knownFaults).
func errorPaths(s Subject, ms machineSpec, mode Mode) []Step {
	var out []Step
	if ms.in.objFaults > 0 {
		fs := []Fault{faultNoKey}
		if mode.Transform {
			fs = append(fs, faultNoTransform)
		}
		for _, k := range []Kind{Add, Update, Delete, Replace} {
			for _, f := range fs {
				out = append(out, Step{Kind: k, Fault: f})
			}
		}
	}
	if ms.in.knownFaults > 0 {
		if mode.Known {
			ks := []Kind{Replace, Resync}
			if !s.Real {
				ks = append(ks, Delete)
			}
			for _, k := range ks {
				for _, f := range []Fault{faultLookup, faultGhost, faultForeign} {
					out = append(out, Step{Kind: k, Fault: f})
				}
			}
		}
		if mode.Transform {
			out = append(out, Step{Kind: Add, Fault: faultNoTransform}, Step{Kind: Update, Fault: faultNoTransform})
			if s.Real {
				out = append(out, Step{Kind: Delete, Fault: faultNoTransform})
			}
		}
	}
	return out
}

// mustSteps parses a fixed sequence of steps.
func mustSteps(s string) []Step {
	var out []Step
	for _, op := range strings.Fields(s) {
		st, err := parseStep(op)
		if err != nil {
			panic(err)
		}
		out = append(out, st)
	}
	return out
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
		scs = append(slices.Clone(scs), ownScenarios[component(s)][ms.name]...)
		if err := runScenarios(s, scs, cfg); err != nil {
			return checkkit.Save(t, cfg, component(s), name(s, ms.name), err)
		}
		err := checkkit.Rapid(t, cfg, func(rt *rapid.T, rec *checkkit.Recorder) {
			mode, pre := drawState(rt, s, ms, ms.draw(rt, ms.base))
			x, err := newMachine(s, mode, rec)
			if err != nil {
				rec.Errorf(rt, err)
			}
			defer x.f.Close()
			for _, st := range pre {
				if err := x.Apply(st); err != nil {
					rec.Errorf(rt, err)
				}
			}
			gen := stepGen(s, ms, mode)
			rt.Repeat(map[string]func(*rapid.T){
				"step": func(rt *rapid.T) {
					if err := x.Apply(gen.Draw(rt, "step")); err != nil {
						rec.Errorf(rt, err)
					}
				},
			})
			if ms.in.states {
				if err := x.finish(); err != nil {
					rec.Errorf(rt, err)
				}
			}
		})
		return checkkit.Save(t, cfg, component(s), name(s, ms.name), err)
	}
}

// Checks returns every check s can take: DeltaFIFO's or RealFIFO's as
// s.Real says. The fixed scenarios come first, then the race probe, then
// the machines (each starting with its own fixed scenarios), then the
// linearizability check: a runner that stops at the first failure gets
// there soonest.
func Checks(s Subject) []checkkit.Check {
	fixed, probes := witnesses(s)
	cs := append([]checkkit.Check{{Name: name(s, CheckRules), Family: checkkit.FamilyWitness,
		Guarantee: "every rule the machines check, pinned by a fixed run at the state where it matters (dedup survivors, Delete suppression, Replace's tombstones and initial population, Resync, PopBatch's boundaries, sync after processing, processing into the store)",
		Run:       rules(s)}}, fixed...)
	cs = append(cs, probes[0])
	for _, ms := range s.machines() {
		cs = append(cs, checkkit.Check{Name: name(s, ms.name), Family: checkkit.FamilyModel, Guarantee: ms.g, Run: machineCheck(s, ms)})
	}
	cs = append(cs, checkkit.Check{Name: name(s, CheckExhaustive), Family: checkkit.FamilyExhaustive,
		Guarantee: fmt.Sprintf("every sequence of up to %d steps (add, update and delete of one key, add of another, relists of both, of one and of none, resync, pop%s), with known objects%s, breadth first with one run per state (versions kept by their order), each ending with Close and every delta popped: the machines' guarantees after every step", exhaustiveDepth, map[bool]string{true: ", batch pop, bookmark", false: ""}[s.Real], map[bool]string{true: ", atomic with bookmarks, and through the processing path when offered", false: ""}[s.Real]),
		Run:       exhaustive(s)})
	return checkkit.Replayable(append(cs, probes[1:]...), func(_ *testing.T, tr *traces.Trace) error { return Replay(s, tr) })
}

// Replay runs a saved trace of one of the machine checks on s.
func Replay(s Subject, tr *traces.Trace) error {
	comp, c, _ := strings.Cut(tr.Check, "/")
	if comp != component(s) {
		return fmt.Errorf("fifo: trace of %q is not of component %s", tr.Check, component(s))
	}
	found := c == CheckRules || c == CheckExhaustive
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
		st, err := parseStep(op)
		if err != nil {
			return fmt.Errorf("trace step %q: %w", op, err)
		}
		steps = append(steps, st)
	}
	return RunSteps(s, mode, steps, nil)
}
