package ring

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"
	"weak"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/traces"
	"pgregory.net/rapid"
)

// Check names, without the subject's prefix: the full name is
// Subject.Name + "/" + one of these, e.g. "ring/fifo", "chunked/shrink".
const (
	CheckFIFO         = "fifo"
	CheckCapLaw       = "cap-law"
	CheckRetention    = "retention"
	CheckNegativeSize = "negative-size"
	CheckShrink       = "shrink"
)

// initialSizes are the sizes the machines make buffers with: empty, tiny
// (growth and wrap-around every few steps, a chunk per value or three),
// upstream's default, and (issue 27, class 1: TestReachRing measured none
// before) an even size that is not a power of two, sizes past the default
// and a chunk past the listener's 1024, which must be taken whole.
var initialSizes = []int{0, 1, 3, 16, 2, 5, 6, 17, 100, 1025, 2000}

// burstSize is the burst the shrink check writes and drains.
const burstSize = 100_000

// name returns the full name of check c for s.
func name(s Subject, c string) string { return s.name() + "/" + c }

// Checks returns every check of the suite that s can take: the shrink
// check only for subjects that give memory back.
func Checks(s Subject) []checkkit.Check {
	cs := []checkkit.Check{
		{Name: name(s, CheckFIFO), Family: checkkit.FamilyModel,
			Guarantee: "across growth, wrap-around and chunk boundaries, ReadOne returns the values written, in order, none lost or repeated, (zero, false) when empty; Len is writes minus successful reads; Cap >= Len",
			Run:       machineCheck(s, CheckFIFO, Mode{})},
		{Name: name(s, CheckCapLaw), Family: checkkit.FamilyModel,
			Guarantee: capGuarantee(s),
			Run:       machineCheck(s, CheckCapLaw, Mode{Law: true})},
		{Name: name(s, CheckRetention), Family: checkkit.FamilyRetention,
			Guarantee: "a value returned by ReadOne is not referenced by the buffer, whether it stays in use, wraps, grows, changes chunk or drains",
			Run:       retention(s)},
		{Name: name(s, CheckNegativeSize), Family: checkkit.FamilyWitness,
			Guarantee: "New with a negative size does not panic and makes the buffer New(0) makes",
			Run:       negativeSize(s)},
	}
	cs = append(cs, checkkit.Check{Name: name(s, CheckShrink), Family: checkkit.FamilyWitness,
		Guarantee: fmt.Sprintf("after a burst of %d values and a full drain, Cap is back to %s and the burst's memory is collectable; during the burst Cap stays within the law", burstSize, shrinkBound(s)),
		Run:       shrink(s)}.OfferedIf(s.shrinks(), "the buffer's law never shrinks it (Subject.Law is LawDoubling, client-go's TypedRingGrowing)"))
	cs = append(cs, checkkit.Check{Name: name(s, CheckExhaustive), Family: checkkit.FamilyExhaustive,
		Guarantee: fmt.Sprintf("from initial sizes %v, every sequence of up to %d single writes, reads, Len and Cap, breadth first with one run per state (length, capacity, and the place the next write goes): cap-law's guarantees after every operation", exhaustiveSizes, exhaustiveDepth),
		Run:       exhaustive(s)})
	return checkkit.Replayable(cs, func(_ *testing.T, tr *traces.Trace) error { return Replay([]Subject{s}, tr) })
}

func capGuarantee(s Subject) string {
	switch s.Law {
	case LawShrinking:
		return "Cap starts at the initial size and changes only on a write into a full buffer, to 2*Cap (16 from 0), or on a read that leaves the buffer empty, to NormalSize if it was larger"
	case LawChunked:
		return "Cap is a multiple of the chunk size k, 0 before the first write, changes by at most one chunk per operation (never doubles), stays <= Len + 3k - 2, and is <= k whenever the buffer is empty"
	}
	return "Cap starts at the initial size and changes only on a write into a full buffer (Len == Cap), to 2*Cap, or 16 from 0; it never shrinks"
}

func shrinkBound(s Subject) string {
	if s.Law == LawShrinking {
		return fmt.Sprintf("NormalSize (%d)", s.Normal)
	}
	return "one chunk"
}

var modeFor = map[string]Mode{
	CheckFIFO:       {},
	CheckCapLaw:     {Law: true},
	CheckExhaustive: {Law: true},
}

// thresholds are the sizes at which a ring changes behaviour: the growing
// ring's first capacity and doublings, and the chunked ring's default
// chunk (1024, client-go's listener ring size) and its multiples. Bursts
// and drains reach them and go well past (maxBulk).
var thresholds = []int{16, 17, 32, 64, 1023, 1024, 1025, 2048, 3072}

// maxBulk is the largest Burst or Drain of the machines.
const maxBulk = 5000

func stepGen() *rapid.Generator[Step] {
	op := checkkit.Choice(35, 30, 8, 7, 10, 10)
	size := checkkit.Size(maxBulk, thresholds...)
	return rapid.Custom(func(t *rapid.T) Step {
		// Weighted; shrinking moves towards Write.
		switch op.Draw(t, "op") {
		case 0:
			return Step{Kind: Write}
		case 1:
			return Step{Kind: Read}
		case 2:
			return Step{Kind: Len}
		case 3:
			return Step{Kind: Cap}
		case 4:
			return Step{Kind: Burst, N: size.Draw(t, "n")}
		default:
			return Step{Kind: Drain, N: size.Draw(t, "n")}
		}
	})
}

func machineCheck(s Subject, c string, mode Mode) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		gen := stepGen()
		err := checkkit.Rapid(t, cfg, func(rt *rapid.T, rec *checkkit.Recorder) {
			size := rapid.SampledFrom(initialSizes).Draw(rt, "initialSize")
			x, err := newMachine(s, size, mode, rec)
			if err != nil {
				rec.Errorf(rt, err)
			}
			rt.Repeat(map[string]func(*rapid.T){
				"step": func(rt *rapid.T) {
					if err := x.Apply(gen.Draw(rt, "step")); err != nil {
						rec.Errorf(rt, err)
					}
				},
			})
		})
		return checkkit.Save(t, cfg, Component, name(s, c), err)
	}
}

// Replay runs a saved trace of a machine check (fifo or cap-law) on the
// subject among ss whose Name prefixes the trace's check, or else on ss[0]
// under its own capacity law. It returns the violation if the trace still
// breaks the subject.
func Replay(ss []Subject, tr *traces.Trace) error {
	if len(ss) == 0 {
		return fmt.Errorf("ring: no subject to replay on")
	}
	prefix, c, _ := strings.Cut(tr.Check, "/")
	mode, ok := modeFor[c]
	if !ok {
		return fmt.Errorf("ring: check %q has no replayable steps", tr.Check)
	}
	s := ss[0]
	for _, x := range ss {
		if x.name() == prefix {
			s = x
		}
	}
	ops := tr.Ops()
	if len(ops) == 0 {
		return fmt.Errorf("ring: empty trace")
	}
	size, ok := parseNew(ops[0])
	if !ok {
		return fmt.Errorf("ring: trace starts with %q, want New(n)", ops[0])
	}
	var steps []Step
	for _, op := range ops[1:] {
		st, err := parseStep(op)
		if err != nil {
			return fmt.Errorf("trace step %q: %w", op, err)
		}
		steps = append(steps, st)
	}
	return RunSteps(s, size, mode, steps, nil)
}

// retentionCase builds one scenario and returns the buffer (to keep alive)
// and the probe's weak pointer, or the violation. After it, the probe has
// been read and nothing outside the buffer references it.
func retentionCase(s Subject, size, pre int, drain bool) (Ring, weak.Pointer[byte], error) {
	r := s.New(size)
	for range pre {
		r.WriteOne("filler")
	}
	for range pre / 2 { // move the read position: wrap-around
		r.ReadOne()
	}
	v, wp := checkkit.Probe(fmt.Sprintf("%d-%d-%v", size, pre, drain))
	r.WriteOne(v)
	v = ""
	for range 3 {
		r.WriteOne("filler")
	}
	for range pre - pre/2 {
		r.ReadOne()
	}
	if got, ok := r.ReadOne(); !ok || unsafe.StringData(got) != wp.Value() {
		return r, wp, checkkit.Broke(GFIFO, "retention scenario (size %d, %d before): read %q, want the probe", size, pre, got)
	}
	if drain {
		if err := checkkit.Bounded(checkkit.DrainLimit, func() string {
			return fmt.Sprintf("retention scenario (size %d, %d before): reading until empty, ReadOne kept returning values (Len %d)", size, pre, r.Len())
		}, func() (bool, error) {
			_, ok := r.ReadOne()
			return !ok, nil
		}); err != nil {
			return r, wp, err
		}
	} else {
		// Keep the buffer busy past the probe's slot: wrap-around, growth,
		// new chunks.
		for range 2*pre + 20 {
			r.WriteOne("filler")
			r.ReadOne()
		}
	}
	return r, wp, nil
}

// guarded runs a check body, turning a panic of the subject into a
// violation instead of a crash of the test binary.
func guarded(body func(t *testing.T) error) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, _ checkkit.Config) (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = checkkit.Broke(GNoPanic, "the buffer panicked: %v", p)
			}
		}()
		return body(t)
	}
}

func retention(s Subject) func(*testing.T, checkkit.Config) error {
	return guarded(func(t *testing.T) error {
		type live struct {
			r    Ring
			wp   weak.Pointer[byte]
			name string
		}
		var all []live
		for _, size := range []int{0, 1, 3, 16} {
			for _, pre := range []int{0, 1, 2, 5, 17, 40} {
				for _, drain := range []bool{false, true} {
					r, wp, err := retentionCase(s, size, pre, drain)
					if err != nil {
						return err
					}
					all = append(all, live{r, wp, fmt.Sprintf("New(%d), %d values written and %d read before the probe, %s after it was read", size, pre, pre/2, map[bool]string{false: "buffer kept busy", true: "buffer drained"}[drain])})
				}
			}
		}
		wps := make([]weak.Pointer[byte], len(all))
		for i, l := range all {
			wps[i] = l.wp
		}
		if held := checkkit.Held(wps...); len(held) > 0 {
			return checkkit.Broke(GNoRetention, "a value returned by ReadOne is still referenced by the buffer: %s", all[held[0]].name)
		}
		runtime.KeepAlive(all)
		return nil
	})
}

func negativeSize(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		steps := []Step{{Kind: Cap}, {Kind: Len}, {Kind: Read}, {Kind: Write}, {Kind: Cap}, {Kind: Read}, {Kind: Burst, N: 40}, {Kind: Cap}, {Kind: Drain, N: 41}, {Kind: Cap}}
		for _, n := range []int{-1, -1000} {
			sub := s
			if s.Law == LawChunked {
				// The buffer New(n) makes must be the one New(0) makes.
				k := s.ChunkSize(0)
				sub.ChunkSize = func(int) int { return k }
			}
			// A declared violation for one size does not hide the other.
			if err := RunSteps(sub, n, Mode{Law: true}, steps, nil); err != nil {
				if err = annotate(err, "New(%d) then %v", n, steps); !cfg.Excused(err) {
					return err
				}
			}
		}
		return nil
	}
}

func shrink(s Subject) func(*testing.T, checkkit.Config) error {
	return guarded(func(t *testing.T) error {
		bound := s.Normal
		if s.Law == LawChunked {
			bound = s.ChunkSize(0)
		}
		base := checkkit.LiveHeap()
		r := s.New(0)
		const v = "burst-value" // static: the burst allocates slots only
		for i := range burstSize {
			r.WriteOne(v)
			if s.Law == LawChunked {
				if l, c := r.Len(), r.Cap(); c > l+3*bound-2 {
					return checkkit.Broke(GNoGrowthSpike, "write %d of the burst: cap %d > len %d + 3*%d - 2 (chunk %d)", i+1, c, l, bound, bound)
				}
			}
		}
		peak := checkkit.LiveHeap()
		for i := range burstSize {
			if got, ok := r.ReadOne(); !ok || got != v {
				return checkkit.Broke(GFIFO, "read %d of the drain: (%q, %v)", i+1, got, ok)
			}
		}
		if got, ok := r.ReadOne(); ok {
			return checkkit.Broke(GFIFO, "read after the drain returned %q", got)
		}
		if c := r.Cap(); c > bound || r.Len() != 0 {
			return checkkit.Broke(GMemoryReturned, "after a burst of %d and a full drain: len %d cap %d, want cap <= %d", burstSize, r.Len(), c, bound)
		}
		after := checkkit.LiveHeap()
		runtime.KeepAlive(r)
		// The burst's slots are at least 16 bytes each; a quarter of what
		// the burst added may stay (noise, the one chunk kept).
		grown := int64(peak) - int64(base)
		kept := int64(after) - int64(base)
		t.Logf("heap: +%d bytes at the peak, +%d after the drain", grown, kept)
		if grown < 16*burstSize/2 {
			return fmt.Errorf("shrink: the burst grew the heap by only %d bytes; the measurement is unreliable", grown)
		}
		if kept > grown/4 {
			return checkkit.Broke(GMemoryReturned, "after a burst of %d and a full drain, Cap is %d but the heap still holds %d of the %d bytes the burst added", burstSize, r.Cap(), kept, grown)
		}
		return nil
	})
}
