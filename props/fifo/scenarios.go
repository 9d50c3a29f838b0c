package fifo

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
)

// scenario is a fixed run a machine check makes before its random ones:
// each pins a rule at the state where it matters, so that breaking the
// rule fails every run of the check, not the runs that happen to get there.
// One that pins a delta a FIFO could fail to queue closes the FIFO before
// it pops: a FIFO that dropped it then reports closed at once, where an
// open one would block the pop until the watchdog gives up.
type scenario struct {
	mode  Mode
	steps string // space-separated steps in trace notation
}

// ownScenarios are the scenarios only the machine check runs, not the
// rules check, by component and check: each pins a rule client-go breaks
// (a divergence declared for that check alone).
var ownScenarios = map[string]map[string][]scenario{DeltaComponent: {}, RealComponent: {}}

// deltaScenarios are DeltaFIFO's, by check.
var deltaScenarios = map[string][]scenario{
	CheckDedup: {
		// Deleted after Deleted: the older survives.
		{Mode{Known: true}, "Add(k0) Delete(k0) Delete(k0) Pop"},
		// A tombstone then a Deleted: the newer survives.
		{Mode{Known: true}, "Know(k0) Add(k1) Replace(1,1) Delete(k0) Pops(3)"},
		// Two tombstones: the newer survives.
		{Mode{}, "Add(k0) Replace(1,1) Replace(2,1) Pops(4)"},
		// Not deletions: kept verbatim.
		{Mode{}, "Add(k0) Update(k0) Update(k0) Delete(k0) Add(k0) Pop"},
		// Delete of an unknown, unqueued key is dropped; of a known one kept.
		{Mode{Known: true}, "Know(k1) Delete(k0) Delete(k1) Pops(2)"},
		{Mode{}, "Delete(k0) Add(k1) Pop Delete(k1) Pops(2)"},
	},
	CheckReplace: {
		// Replace twice before a pop: the initial population is the first's.
		{Mode{Known: true}, "Know(k7) Replace(0,3) Replace(2,3) Pops(8)"},
		// Tombstones carry the newest queued state, unwrapped.
		{Mode{Known: true}, "Add(k0) Update(k0) Replace(1,2) Replace(3,1) Pops(6)"},
		// Known keys missing from the list: one tombstone each, none for
		// a known key that is queued.
		{Mode{Known: true}, "Know(k0) Know(k1) Know(k2) Update(k1) Replace(2,1) Pops(5)"},
		{Mode{Known: true, EmitReplaced: true, Transform: true}, "Replace(0,40) Pops(20) Replace(10,40) Pops(100)"},
		// A relist listing keys twice: a delta per listing, a key counted
		// once in the initial population.
		{Mode{Known: true}, "Replace(0,2,dup) Pops(3) Add(k9) Pop"},
		// An empty relist tombstones everything queued or known.
		{Mode{Known: true}, "Know(k3) Add(k0) Replace(1,0) Pops(3) Add(k9) Pop"},
		{Mode{Known: true, EmitReplaced: true}, "Add(k1) Replace(0,3,rev,dup) Pops(4)"},
	},
	CheckSynced: {
		{Mode{Known: true, SyncDuring: true}, "Know(k5) Know(k6) Replace(0,2) Pop Pop Pop Pop Add(k1) Pop"},
		{Mode{Known: true, SyncDuring: true}, "Add(k0) Replace(1,2) Pops(5)"},
		{Mode{SyncDuring: true}, "Replace(0,0) Add(k0) Pop"},
	},
	CheckModel: {
		// Resync: only known keys with nothing queued; never transformed.
		{Mode{Known: true, Transform: true}, "Add(k0) Add(k1) Pops(2) Update(k0) Resync Pops(3)"},
		// First-touch order across pops.
		{Mode{Known: true}, "Add(k0) Add(k1) Update(k0) Pop Add(k0) Add(k2) Pops(4)"},
		{Mode{Known: true}, "Add(k0) Close Add(k1) Pops(3) Pop"},
		// One name in two namespaces is two keys; a state delivered twice
		// is two deltas.
		{Mode{Known: true}, "Add(k1) Add(k1,ns) Update(k1,ns,again) Know(k2,ns) Replace(1,1,ns) Pops(4)"},
	},
	CheckNoKnown: {
		{Mode{Transform: true}, "Add(k0) Pop Resync Delete(k0) Add(k1) Replace(2,1) Pops(3)"},
	},
	CheckFaults: {
		{Mode{Known: true}, "Replace(0,3) PopErr PopPanic Pop Add(k0) PopPanic"},
	},
	CheckPipeline: {
		{Mode{Known: true, Pipeline: true}, "Replace(0,3) Pops(3) Update(k1) Delete(k2) Replace(1,1) Pops(3) Resync Pops(2)"},
	},
}

func init() {
	deltaScenarios[CheckErrorPaths] = []scenario{
		// A Delete without a key leaves a fresh FIFO unpopulated; an Add
		// or Update without one (or rejected by the transformer)
		// populates it.
		{Mode{}, "Delete(k0,nokey) Replace(0,2) Pops(2)"},
		{Mode{}, "Add(k0,nokey) Replace(0,2) Pops(2)"},
		{Mode{Transform: true}, "Update(k0,notransform) Replace(0,2) Pops(2)"},
		// Unpopulated with keys queued: a failed Replace does not count.
		{Mode{Known: true, Transform: true}, "Know(k9) Resync Replace(0,2,notransform@0) Delete(k1,nokey) Pops(2) Replace(0,2) Pops(4)"},
		// Mid initial sync; a dropped Delete never meets the transformer.
		{Mode{Known: true, Transform: true}, "Replace(0,3) Pop Add(k5,notransform) Delete(k9,notransform) Delete(k1,nokey) Replace(0,1,nokey@0) Pops(5)"},
		{Mode{}, "Add(k0) Close Add(k1,nokey) Replace(0,1,nokey@0) Pops(2) Pop"},
	}
	// All or nothing: client-go queues the objects before the bad one.
	ownScenarios[DeltaComponent][CheckErrorPaths] = []scenario{
		{Mode{}, "Replace(0,3,nokey@2) Add(k5) Pop"},
		{Mode{Transform: true}, "Add(k7) Replace(0,3,notransform@1) Pops(5)"},
	}
	deltaScenarios[CheckCollaborators] = []scenario{
		// Delete: a failed lookup counts as known, a key not found does not.
		{Mode{Known: true}, "Know(k0) Know(k1) Know(k2) Delete(k0,lookup) Delete(k1,ghost) Delete(k5,lookup) Close Pops(3) Pop"},
		// Replace: tombstones without an object for failed lookups and
		// ghosts, with the keyless object the store returned.
		{Mode{Known: true}, "Know(k0) Know(k1) Know(k2) Know(k3) Replace(5,1,lookup@9) Pops(6)"},
		{Mode{Known: true}, "Know(k0) Know(k2) Replace(5,1,ghost@1) Pops(5) Add(k4) Pop Replace(4,1,foreign@0) Pops(4)"},
		// Resync skips failed lookups and ghosts, stops at a keyless object.
		{Mode{Known: true}, "Know(k0) Know(k1) Know(k2) Know(k3) Resync(lookup@9) Pops(4) Resync(ghost@1) Pops(4) Resync(foreign@1) Pops(4)"},
		// The transformer's error: returned, nothing queued.
		{Mode{Known: true, Transform: true}, "Add(k0,notransform) Update(k1,notransform) Delete(k2,notransform) Know(k3) Delete(k3,notransform) Add(k4) Pops(3)"},
	}
	realScenarios[CheckErrorPaths] = []scenario{
		// Every producer populates, also when it fails.
		{Mode{Known: true, SyncDuring: true}, "Delete(k0,nokey) Replace(0,2) Pops(2)"},
		// A failed Replace does not populate: fresh, and with deltas queued.
		{Mode{Atomic: true, Transform: true, SyncDuring: true}, "Replace(0,2,notransform@1) Add(k0) Pop"},
		{Mode{Atomic: true, Bookmarks: true, Transform: true, SyncDuring: true}, "Bookmark Resync Replace(0,2,notransform@0) Update(k1,notransform) Pops(3)"},
		{Mode{Known: true, Transform: true, SyncDuring: true}, "Replace(0,3) Pop Add(k5,notransform) Replace(0,1,nokey@0) Pops(5)"},
	}
	// The first Replace landing while a delta queued before it (a
	// bookmark, a resync) is processed unlocked: that delta was popped
	// before the FIFO was populated and is not one of the Replace's, so
	// the FIFO syncs only once the ReplacedAll is processed. client-go
	// counts it down when its process func returns and syncs one delta
	// early (the_real_fifo.go:410-418).
	ownScenarios[RealComponent][CheckSynced] = []scenario{
		{Mode{Atomic: true, Unlock: true, Bookmarks: true, SyncDuring: true}, "Bookmark PopReplace(0,2) Pop Add(k5) Pop"},
		{Mode{Atomic: true, Unlock: true, SyncDuring: true}, "Resync PopReplace(0,1) Pop"},
	}
	// All or nothing: client-go's atomic Replace keys nothing, its
	// non-atomic one queues the tombstones and the objects before the one
	// the transformer rejects.
	ownScenarios[RealComponent][CheckErrorPaths] = []scenario{
		{Mode{Atomic: true, SyncDuring: true}, "Replace(0,2,nokey@1) Add(k5) Pop"},
		{Mode{Known: true, Transform: true}, "Add(k7) Replace(0,3,notransform@1) Pops(6)"},
	}
	realScenarios[CheckCollaborators] = []scenario{
		// Resync skips failed lookups and ghosts, stops at a keyless object.
		{Mode{Known: true, SyncDuring: true}, "Know(k0) Know(k1) Know(k2) Know(k3) Resync(lookup@9) Pops(3) Resync(ghost@3) Pops(4) Resync(foreign@2) Pops(4)"},
		// Replace: tombstones without an object for ghosts and failed lookups.
		{Mode{Known: true}, "Know(k0) Know(k1) Add(k5) Replace(5,1,ghost@2) Replace(6,1,lookup@9) Pops(12)"},
		{Mode{Known: true}, "Know(k0) Know(k3) Replace(5,1,foreign@3) Pops(3)"},
		{Mode{Known: true, Transform: true}, "Add(k0,notransform) Update(k1) Delete(k1,notransform) Pops(2)"},
	}
}

// realScenarios are RealFIFO's, by check.
var realScenarios = map[string][]scenario{
	CheckModel: {
		{Mode{Known: true, SyncDuring: true}, "Add(k0) Delete(k9) Update(k0) Pops(3)"},
		{Mode{Known: true, Transform: true}, "Add(k0) Pop Add(k1) Resync Pops(2) Resync Pops(3)"},
		// Resync skips a known key with a delta queued.
		{Mode{Known: true}, "Add(k0) Add(k1) Pops(2) Update(k0) Resync Pops(3)"},
	},
	CheckReplace: {
		// Tombstones: queued keys not listed (unless their last delta is a
		// deletion), then known keys not listed and not queued.
		{Mode{Known: true}, "Know(k5) Know(k6) Add(k0) Add(k1) Delete(k1) Update(k6) Replace(2,2) Pops(10)"},
		{Mode{Known: true, SyncDuring: true}, "Know(k7) Replace(0,3) Replace(2,3) Pops(20)"},
		// An empty relist tombstones everything queued or known; keys
		// listed twice, a Replaced per listing.
		{Mode{Known: true}, "Know(k3) Add(k0) Replace(1,0) Close Pops(3) Pop"},
		{Mode{Known: true, SyncDuring: true}, "Add(k1,ns) Replace(0,2,dup,rev) Pops(6) Add(k9) Pop"},
	},
	CheckAtomic: {
		{Mode{Atomic: true, Bookmarks: true, Transform: true, SyncDuring: true}, "Add(k0) Replace(0,3) Bookmark Resync Pops(4) Replace(1,1) Pops(2)"},
		{Mode{Atomic: true}, "Bookmark Add(k0) Pops(2)"},
	},
	CheckBatch: {
		// The initial-population boundary, a duplicate key, a delta that
		// cannot be batched (alone when first), the batch size.
		{Mode{Known: true, SyncDuring: true}, "Know(k9) Replace(0,3) Add(k0) Add(k1) Add(k1) PopBatch PopBatch PopBatch PopBatch"},
		{Mode{Known: true, SyncDuring: true}, "Replace(0,3) Add(k5) Add(k6) PopBatch PopBatch"},
		{Mode{Atomic: true, Bookmarks: true, SyncDuring: true}, "Add(k0) Add(k1) Bookmark Add(k2) Replace(0,2) Resync Add(k3) PopBatch PopBatch PopBatch PopBatch PopBatch PopBatch"},
		{Mode{Known: true, SyncDuring: true}, "Replace(0,2500) PopBatch PopBatch PopBatch Add(k0) PopBatch Pops(2000)"},
		// A key listed twice, and one name in two namespaces.
		{Mode{Known: true, SyncDuring: true}, "Replace(0,3,dup) Add(k1,ns) PopBatch PopBatch PopBatch"},
	},
	CheckSynced: {
		{Mode{Known: true, SyncDuring: true}, "Know(k5) Replace(0,2) Pop Pop Pop Add(k1) Pop"},
		{Mode{Atomic: true, SyncDuring: true}, "Bookmark Replace(0,2) Pop Pop Add(k0) Pop"},
		// A relist while an initial delta is processed unlocked: the
		// initial population stays the first Replace's.
		{Mode{Atomic: true, Unlock: true, SyncDuring: true}, "Replace(0,2) PopReplace(3,1) Pops(2) Add(k0) Pop"},
	},
	CheckFaults: {
		{Mode{Known: true, SyncDuring: true}, "Replace(0,3) PopErr PopPanic Pop Add(k0) PopPanic"},
		{Mode{Atomic: true, Unlock: true, SyncDuring: true}, "Replace(0,3) PopPanic Add(k0) PopErr Pops(2)"},
		// PopBatch's batch and single process funcs failing.
		{Mode{Known: true, SyncDuring: true}, "Replace(0,3) PopBatch(err) Add(k0) Add(k1) PopBatch(panic) Add(k2) PopBatch(err) Pops(2)"},
		{Mode{Atomic: true, Unlock: true, SyncDuring: true}, "Replace(0,2) Add(k0) Add(k1) PopBatch(panic) PopBatch(err) Add(k2) Add(k3) PopBatch(panic) Pop"},
	},
	CheckPipeline: {
		{Mode{Atomic: true, Pipeline: true}, "Replace(0,3) Pop Update(k1) Delete(k2) Replace(1,2) Resync Pops(5)"},
		{Mode{Known: true, Pipeline: true}, "Replace(0,3) Pops(3) Update(k1) Delete(k2) Replace(1,1) Resync Pops(5) PopBatch"},
		// A relist listing a key twice: the store keeps the last listing.
		{Mode{Atomic: true, Pipeline: true}, "Replace(0,2,dup) Pop Replace(1,2,dup,rev,ns) Pop Replace(0,0) Pop"},
	},
}

// rules is the rules check: every fixed scenario of the subject's FIFO,
// grouped by the machine check whose guarantee it pins, in a fixed order.
// It runs first, so that a broken rule is reported in milliseconds; the
// machines then explore at random.
func rules(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		all := deltaScenarios
		if s.Real {
			all = realScenarios
		}
		for _, ms := range s.machines() {
			scs := all[ms.name]
			if !s.Real {
				// Whether a DeltaFIFO syncs before or after the last
				// initial pop is processed is the synced check's alone:
				// client-go's syncs before, a declared divergence that
				// must not hide the other rules.
				scs = slices.Clone(scs)
				for i := range scs {
					scs[i].mode.SyncDuring = false
				}
			}
			if err := runScenarios(s, scs, cfg); err != nil {
				return checkkit.Save(t, cfg, component(s), name(s, CheckRules), err)
			}
		}
		return nil
	}
}

// runScenarios runs scenarios; the first failure comes back with its steps
// as the trace.
func runScenarios(s Subject, scenarios []scenario, cfg checkkit.Config) error {
	for _, sc := range scenarios {
		if sc.mode.Pipeline && s.Process == nil {
			continue
		}
		var steps []Step
		for _, op := range strings.Fields(sc.steps) {
			st, err := parseStep(op)
			if err != nil {
				return fmt.Errorf("fifo: scenario %q: %w", sc.steps, err)
			}
			steps = append(steps, st)
		}
		rec := checkkit.NewRecorder(cfg.Progress)
		if err := RunSteps(s, sc.mode, steps, rec); err != nil {
			return rec.Attach(err)
		}
	}
	return nil
}
