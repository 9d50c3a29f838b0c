package upstream

import (
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	pring "github.com/kverify/kverify/props/ring"
	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/traces"
	"k8s.io/utils/buffer"
)

// UtilsVersion is the k8s.io/utils version (the one client-go v0.37.2
// pins) whose rings these adapters and divergences describe.
const UtilsVersion = "k8s.io/utils@v0.0.0-20260626114624-be93311217bd"

// Ring returns k8s.io/utils/buffer's TypedRingGrowing[string] as a subject.
// It satisfies the subject's Ring as it is.
func Ring() pring.Subject {
	return pring.Subject{
		Name: "ring",
		New: func(n int) pring.Ring {
			return buffer.NewTypedRingGrowing[string](buffer.RingGrowingOptions{InitialSize: n})
		},
		Law: pring.LawDoubling,
	}
}

// ShrinkingNormal is the NormalSize of the rings ShrinkingRing makes.
const ShrinkingNormal = 16

// ShrinkingRing returns k8s.io/utils/buffer's Ring[string], the variant
// that reallocates a NormalSize array once drained, as a subject. It is
// not in the registry (our implementation has no shrinking ring for its
// checks to be compared with); the fuzz target and the benchmarks use it.
func ShrinkingRing() pring.Subject {
	return pring.Subject{
		Name: "shrinking",
		New: func(n int) pring.Ring {
			return buffer.NewRing[string](buffer.RingOptions{InitialSize: n, NormalSize: ShrinkingNormal})
		},
		Law:    pring.LawShrinking,
		Normal: ShrinkingNormal,
	}
}

// RingDivergences are k8s.io/utils/buffer's known differences from the
// ring contract.
var RingDivergences = []checkkit.Divergence{
	{
		Check:      "ring/" + pring.CheckNegativeSize,
		Guarantees: []string{pring.GNoPanic},
		Shape:      `^No panic: New\(-\d+\) panicked: runtime error: makeslice: len out of range`,
		Reason:     "NewTypedRingGrowing passes InitialSize to make([]T, n) unchecked, so a negative size panics (makeslice: len out of range); ours treats it as 0",
		Upstream:   UtilsVersion + "/buffer/ring_growing.go:54-59",
		Class:      checkkit.ClassPrecondition,
		Evidence:   UtilsVersion + "/buffer/ring_growing.go:25-27 documents InitialSize as \"the number of pre-allocated elements in the initial underlying storage buffer\", a count the caller supplies and the constructor passes to make unchecked",
	},
}

// ringEntries binds k8s.io/utils' ring. A module generated for another
// release builds k8s.io/utils at the version this module pins (kverify's
// checks need its clock package), not the one that release required, so
// there its results would not be the release's: not offered.
func ringEntries() []suite.Entry {
	if Generated {
		return absentEntries("the ring is k8s.io/utils/buffer, which kverify builds at "+UtilsRelease+" for every release (its checks need k8s.io/utils/clock), not at the version this release requires", pring.Component)
	}
	return []suite.Entry{entry(pring.Component, func() []checkkit.Check { return pring.Checks(Ring()) }, RingDivergences,
		func(_ *testing.T, tr *traces.Trace) error { return pring.Replay([]pring.Subject{Ring()}, tr) })}
}
