package ring

import (
	"fmt"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
)

// CheckExhaustive is the ring's exhaustive mode (full name: the subject's
// prefix, "/exhaustive").
const CheckExhaustive = "exhaustive"

// exhaustiveDepth is the default bound in operations (KVERIFY_DEEPER adds
// to it): past the first growth from 0 (to 16) and the next (at 17), and
// two growths and wraps from every other initial size; 0.1 s.
const exhaustiveDepth = 24

// exhaustiveSizes are the initial sizes the search starts from: an empty
// buffer and the small ones, where growth and wrap come within the bound.
var exhaustiveSizes = []int{0, 1, 2, 3}

// ringAlphabet is every single operation; bulk steps are the random
// machines' (their sizes are not a choice to enumerate).
var ringAlphabet = []Step{{Kind: Write}, {Kind: Read}, {Kind: Len}, {Kind: Cap}}

// exhaustive runs <subject>/exhaustive: from each initial size, every
// sequence of up to exhaustiveDepth operations, with the capacity law
// checked after every one (cap-law's mode), breadth first with one run per
// state. The state is the model's length and capacity, the subject's
// capacity, and how many values were written modulo the capacity: the
// place a ring writes next, so that every wrap position of an array ring
// is a state of its own (a ring whose bug depends on more of its history
// than that can hide from the reduction; the random machines cover long
// histories).
func exhaustive(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		var total checkkit.Coverage
		for _, size := range exhaustiveSizes {
			cov, err := checkkit.Explore(cfg, checkkit.Space[Step]{
				Name: "ring ops", Steps: ringAlphabet, Depth: exhaustiveDepth,
				Run: func(steps []Step) (key string, enabled []int, err error) {
					rec := checkkit.NewRecorder(cfg.Progress)
					x, err := newMachine(s, size, Mode{Law: true}, rec)
					if err != nil {
						return "", nil, rec.Attach(err)
					}
					for _, st := range steps {
						if err := x.Apply(st); err != nil {
							return "", nil, rec.Attach(err)
						}
					}
					c := max(x.m.Cap(), 1)
					key = fmt.Sprintf("len=%d cap=%d subject-cap=%d at=%d", x.m.Len(), x.m.Cap(), x.r.Cap(), x.next%c)
					return key, checkkit.Every(len(ringAlphabet)), nil
				},
			})
			total = total.Plus(cov)
			total.Bound = fmt.Sprintf("%s, initial sizes %v", cov.Bound, exhaustiveSizes)
			if err != nil {
				checkkit.ReportCoverage(t, total)
				return err
			}
		}
		checkkit.ReportCoverage(t, total)
		return nil
	}
}
