package fifo

// The reach of the machines' generators (issue 27): every input the FIFO
// API admits, every fault, and every state class the error paths are
// tried from, measured over ordinary draws and held to a floor, as
// checkkit's sizes_test does for size classes.

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/kverify/kverify/internal/klogcap"
	"github.com/kverify/kverify/props/checkkit"
	spec "github.com/kverify/kverify/spec/fifo"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"pgregory.net/rapid"
)

// reachSubject is our DeltaFIFO or RealFIFO as a subject, set by
// ours_test.go (package fifo_test): subjects/ours imports this package, so
// only the external test package can import it. The reach runs need a
// FIFO that agrees with the model to get anywhere.
var reachSubject func(real bool) Subject

// tally counts, per class, how often it was reached and out of how many
// chances.
type tally struct {
	hit, of map[string]int
}

func newTally() *tally { return &tally{hit: map[string]int{}, of: map[string]int{}} }

// chance records a chance of class c, reached or not.
func (t *tally) chance(c string, reached bool) {
	t.of[c]++
	if reached {
		t.hit[c]++
	}
}

func (t *tally) share(c string) float64 {
	if t.of[c] == 0 {
		return 0
	}
	return float64(t.hit[c]) / float64(t.of[c])
}

// check fails t unless every class of floors is reached in at least its
// share of its chances; it logs every class.
func (ta *tally) check(t *testing.T, what string, floors map[string]float64) {
	t.Helper()
	var lines []string
	for _, c := range slices.Sorted(maps.Keys(ta.of)) {
		lines = append(lines, fmt.Sprintf("  %-40s %5d of %5d (%4.1f%%)", c, ta.hit[c], ta.of[c], 100*ta.share(c)))
	}
	t.Logf("%s:\n%s", what, strings.Join(lines, "\n"))
	for _, c := range slices.Sorted(maps.Keys(floors)) {
		if ta.of[c] == 0 || ta.share(c) < floors[c] {
			t.Errorf("%s: %s reached %d of %d times, want at least %.0f%%", what, c, ta.hit[c], ta.of[c], 100*floors[c])
		}
	}
}

func subjectName(real bool) string {
	if real {
		return RealComponent
	}
	return DeltaComponent
}

// TestReachInputs draws steps from every machine's generator and measures
// how often each input variation and fault comes, against the steps that
// could carry it.
func TestReachInputs(t *testing.T) {
	for _, real := range []bool{false, true} {
		s := Subject{Real: real}
		for _, ms := range s.machines() {
			t.Run(name(s, ms.name), func(t *testing.T) { reachInputs(t, s, ms) })
		}
	}
}

func reachInputs(t *testing.T, s Subject, ms machineSpec) {
	{
		{
			ta := newTally()
			checkkit.Seeded(t, 3, func(rt *rapid.T) {
				mode := ms.draw(rt, ms.base)
				gen := stepGen(s, ms, mode)
				for range 30 {
					st := gen.Draw(rt, "step")
					classifyStep(ta, s, ms, mode, st)
				}
			})
			ta.check(t, name(s, ms.name), inputFloors(s, ms))
		}
	}
}

// classifyStep records the chances st had and which it took.
func classifyStep(ta *tally, s Subject, ms machineSpec, mode Mode, st Step) {
	k := st.Kind.String()
	switch st.Kind {
	case Add, Update, Delete, Know:
		ta.chance("ns object", st.NS)
		ta.chance("state again", st.Again)
	case Replace:
		ta.chance("Replace empty", st.N == 0)
		ta.chance("Replace dup keys", st.Dup && st.N > 0)
		ta.chance("Replace reversed", st.Rev && st.N > 1)
		ta.chance("Replace ns", st.NS && st.N > 0)
	case PopBatch:
		if ms.in.popFaults {
			ta.chance("PopBatch err", st.Fault == faultErr)
			ta.chance("PopBatch panic", st.Fault == faultPanic)
		}
	}
	obj := st.Kind == Add || st.Kind == Update || st.Kind == Delete || st.Kind == Replace
	if ms.in.objFaults > 0 && obj && (st.Kind != Replace || st.N > 0) {
		ta.chance(k+" nokey", st.Fault == faultNoKey)
		if mode.Transform {
			ta.chance(k+" notransform", st.Fault == faultNoTransform)
		}
	}
	if ms.in.knownFaults > 0 {
		if st.Kind == Resync || st.Kind == Replace || (st.Kind == Delete && !s.Real) {
			for _, f := range []Fault{faultLookup, faultGhost, faultForeign} {
				ta.chance(k+" "+f.String(), st.Fault == f)
			}
		}
		if mode.Transform && (st.Kind == Add || st.Kind == Update || (st.Kind == Delete && s.Real)) {
			ta.chance(k+" notransform", st.Fault == faultNoTransform)
		}
	}
}

// inputFloors are the shares each class of ms must reach: about half of
// what its weights give.
func inputFloors(s Subject, ms machineSpec) map[string]float64 {
	f := map[string]float64{}
	if ms.in.vary {
		if ms.mix[Add]+ms.mix[Update]+ms.mix[Delete]+ms.mix[Know] > 0 {
			f["ns object"], f["state again"] = 0.06, 0.06
		}
		if ms.mix[Replace] > 0 {
			f["Replace empty"], f["Replace dup keys"], f["Replace reversed"], f["Replace ns"] = 0.05, 0.07, 0.07, 0.05
		}
	}
	if ms.in.popFaults {
		f["PopBatch err"], f["PopBatch panic"] = 0.12, 0.12
	}
	if ms.in.objFaults > 0 {
		for _, k := range []Kind{Add, Update, Delete, Replace} {
			f[k.String()+" nokey"] = 0.12
			f[k.String()+" notransform"] = 0.12
		}
	}
	if ms.in.knownFaults > 0 {
		ks := []Kind{Replace, Resync}
		if !s.Real {
			ks = append(ks, Delete)
		}
		for _, k := range ks {
			for _, fl := range []Fault{faultLookup, faultGhost, faultForeign} {
				f[k.String()+" "+fl.String()] = 0.07
			}
		}
		for _, k := range []Kind{Add, Update} {
			f[k.String()+" notransform"] = 0.2
		}
		if s.Real {
			f["Delete notransform"] = 0.2
		}
	}
	return f
}

// reachRuns runs ms's machine on our FIFO for rounds×100 cases of a
// prelude and probe (drawState) and 40 drawn steps, calling see before
// each step with the machine as it stands; it returns the number of runs.
func reachRuns(t *testing.T, s Subject, ms machineSpec, rounds int, see func(x *machine, st Step, run int)) int {
	t.Helper()
	// Our FIFOs report each failed lookup (utilruntime.HandleError), as
	// client-go's do: kept out of the test's output, and without
	// HandleError's throttle (a sleep of up to 1 ms per error).
	logs := klogcap.Start(0)
	defer logs.Release()
	handlers := utilruntime.ErrorHandlers
	defer func() { utilruntime.ErrorHandlers = handlers }()
	utilruntime.ErrorHandlers = handlers[:min(1, len(handlers))]
	run := 0
	{
		checkkit.Seeded(t, rounds, func(rt *rapid.T) {
			run++
			mode, pre := drawState(rt, s, ms, ms.draw(rt, ms.base))
			x, err := newMachine(s, mode, nil)
			if err != nil {
				rt.Fatal(err)
			}
			defer x.f.Close()
			gen := stepGen(s, ms, mode)
			for i := 0; i < len(pre)+40; i++ {
				var st Step
				if i < len(pre) {
					st = pre[i]
				} else {
					st = gen.Draw(rt, "step")
				}
				see(x, st, run)
				if err := x.Apply(st); err != nil {
					rt.Fatalf("%s on our %s: %v", st, subjectName(s.Real), err)
				}
			}
		})
	}
	return run
}

// errorPath is a fault step's error path: "Replace nokey", "Resync ghost".
func errorPath(st Step) string { return st.Kind.String() + " " + st.Fault.String() }

// TestReachStates runs the error-paths and collaborators machines on our
// FIFOs and measures, for every error path, in how many runs it was tried
// from each state class: every pair must come in some of them.
func TestReachStates(t *testing.T) {
	for _, real := range []bool{false, true} {
		s := reachSubject(real)
		for _, ms := range s.machines() {
			if ms.in.states {
				t.Run(name(s, ms.name), func(t *testing.T) { reachStates(t, s, ms) })
			}
		}
	}
}

func reachStates(t *testing.T, s Subject, ms machineSpec) {
	{
		{
			seen := map[string]map[int]bool{} // path @ state -> runs
			runs := reachRuns(t, s, ms, 10, func(x *machine, st Step, run int) {
				if st.Fault == noFault {
					return
				}
				if st.Kind == Delete && knownFault(st.Fault) && x.rm != nil {
					return // RealFIFO's Delete does not look anything up
				}
				if objectFault(st.Fault) == spec.NoTransform && !x.mode.Transform {
					return
				}
				c := errorPath(st) + " @ " + x.stateClass()
				if seen[c] == nil {
					seen[c] = map[int]bool{}
				}
				seen[c][run] = true
			})
			ta := newTally()
			floors := map[string]float64{}
			for _, p := range errorPaths(s, ms, Mode{Known: true, Transform: true}) {
				for _, c := range stateClasses {
					k := errorPath(p) + " @ " + c
					ta.of[k], ta.hit[k] = runs, len(seen[k])
					floors[k] = 0.005
				}
			}
			ta.check(t, name(s, ms.name)+" (runs trying each path from each state class)", floors)
		}
	}
}

// TestReachKeys runs the model, no-known and replace machines on our FIFOs
// and measures the inputs whose class depends on the state: an Add,
// Update or Delete of a key never made, queued, known (handed out) or gone;
// a Replace that tombstones queued or known keys, lists a queued key, or
// lists nothing while something is queued or known.
func TestReachKeys(t *testing.T) {
	for _, real := range []bool{false, true} {
		s := reachSubject(real)
		for _, ms := range s.machines() {
			if ms.name == CheckModel || ms.name == CheckNoKnown || ms.name == CheckReplace {
				t.Run(name(s, ms.name), func(t *testing.T) { reachKeys(t, s, ms) })
			}
		}
	}
}

func reachKeys(t *testing.T, s Subject, ms machineSpec) {
	{
		{
			ms.max = min(ms.max, 300) // the classes do not depend on size
			ta := newTally()
			reachRuns(t, s, ms, 1, func(x *machine, st Step, _ int) {
				classifyKeys(ta, x, st)
			})
			floors := map[string]float64{}
			for _, k := range []string{"Add", "Update", "Delete"} {
				floors[k+" key never made"] = 0.05
				floors[k+" key queued"] = 0.05
				floors[k+" key gone"] = 0.02
				if ms.base.Known {
					floors[k+" key known, not queued"] = 0.01
				}
			}
			floors["Replace tombstones queued keys"] = 0.2
			floors["Replace lists a queued key"] = 0.2
			floors["Replace empty, something queued or known"] = 0.02
			if ms.base.Known {
				floors["Replace tombstones known keys"] = 0.1
			}
			ta.check(t, name(s, ms.name)+" (state-dependent inputs)", floors)
		}
	}
}

// classifyKeys records the state-dependent classes of st on x.
func classifyKeys(ta *tally, x *machine, st Step) {
	queued := map[string]bool{}
	if x.rm != nil {
		for _, d := range x.rm.Items() {
			queued[d.Key()] = true
		}
	} else {
		for _, k := range x.dm.Keys() {
			queued[k] = true
		}
	}
	known := x.model.Objects
	switch st.Kind {
	case Add, Update, Delete:
		key := keyName(st.Key, st.NS)
		_, made := x.last[key]
		_, isKnown := known[key]
		k := st.Kind.String()
		ta.chance(k+" key never made", !made && !queued[key] && !isKnown)
		ta.chance(k+" key queued", queued[key])
		ta.chance(k+" key known, not queued", isKnown && !queued[key])
		ta.chance(k+" key gone", made && !queued[key] && !isKnown)
	case Replace:
		listed := map[string]bool{}
		for i := range st.N {
			listed[keyName(st.Off+i, st.NS)] = true
		}
		var tq, tk, lq bool
		for k := range queued {
			tq = tq || !listed[k]
			lq = lq || listed[k]
		}
		if x.mode.Known {
			for k := range known {
				tk = tk || (!listed[k] && !queued[k])
			}
		}
		ta.chance("Replace tombstones queued keys", tq)
		ta.chance("Replace lists a queued key", lq)
		if x.mode.Known {
			ta.chance("Replace tombstones known keys", tk)
		}
		ta.chance("Replace empty, something queued or known", st.N == 0 && (len(queued) > 0 || (x.mode.Known && len(known) > 0)))
	}
}

// Every step a machine draws, and every prelude and probe, reads back from
// its trace notation as itself, so that its counterexamples replay.
func TestStepNotationRoundTrip(t *testing.T) {
	for _, real := range []bool{false, true} {
		s := Subject{Real: real}
		for _, ms := range s.machines() {
			rapid.Check(t, func(rt *rapid.T) {
				mode, steps := drawState(rt, s, ms, ms.draw(rt, ms.base))
				gen := stepGen(s, ms, mode)
				for range 20 {
					steps = append(steps, gen.Draw(rt, "step"))
				}
				for _, st := range steps {
					if st.Kind == PopBatch && !s.Real {
						continue
					}
					back, err := parseStep(st.String())
					if err != nil || back != st {
						rt.Fatalf("%s: %#v reads back as %#v (%v)", name(s, ms.name), st, back, err)
					}
				}
				if m, err := parseMode(mode.String()); err != nil || m != mode {
					rt.Fatalf("mode %s reads back as %s (%v)", mode, m, err)
				}
			})
		}
	}
	for _, bad := range []string{"Add(k1,dup)", "Resync(nokey@1)", "Replace(1,2,lookup)", "PopBatch(ghost)", "Add(k1,nokey,lookup)", "Pop()", "Add(k1,)"} {
		if st, err := parseStep(bad); err == nil {
			t.Errorf("ParseStep(%q) = %v, want an error", bad, st)
		}
	}
}
