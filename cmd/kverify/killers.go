package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/kverify/kverify/internal/kvenv"
	"github.com/kverify/kverify/mutants"
	"github.com/kverify/kverify/props/checkkit"
)

// The search for killers: after the first pass, every check that has
// killed no mutant yet is run alone on its component's mutants until it
// kills one (a check that cannot fail is a defect).

// killCounts is, for every offered check of comps (component/check),
// the number of mutants whose outcome names it as a killer.
func killCounts(info map[string]checkkit.Check, comps []string, ms []mutants.Mutant, outcomes []killOutcome) map[string]int {
	killers := map[string]int{}
	for key, c := range info {
		if c.NotOffered == "" && slices.Contains(comps, strings.SplitN(key, "/", 2)[0]) {
			killers[key] = 0
		}
	}
	for i, m := range ms {
		for _, k := range outcomes[i].by {
			killers[m.Component+"/"+strings.TrimSuffix(k, crashMark)]++
		}
	}
	return killers
}

// findKillers looks, for every check that has killed no mutant so far,
// for a mutant of its component that it kills, running that check alone
// on the mutants' suites in catalogue order; it records what it finds.
func findKillers(ms []mutants.Mutant, outcomes []killOutcome, killers map[string]int, prefer map[string]string, parallel int) {
	var weak []string
	for k, n := range killers {
		if n == 0 {
			weak = append(weak, k)
		}
	}
	sort.Strings(weak)
	// The checks are looked for side by side; what they find is recorded
	// afterwards in the order of weak, so that the matrix does not depend
	// on which finished first.
	found := make([]int, len(weak)) // index into ms, or -1
	sem := make(chan struct{}, max(1, parallel))
	var wg sync.WaitGroup
	for w, k := range weak {
		found[w] = -1
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			comp, _, _ := strings.Cut(k, "/")
			// The mutant the committed matrix says this check killed
			// fastest goes first; then the rest in catalogue order.
			order := make([]int, 0, len(ms))
			for i, m := range ms {
				if m.ID == prefer[k] {
					order = append([]int{i}, order...)
				} else {
					order = append(order, i)
				}
			}
			for _, i := range order {
				m, o := ms[i], &outcomes[i]
				if m.Component != comp || o.err != nil {
					continue
				}
				st, err := o.ready()
				if err != nil {
					continue
				}
				ro := o.run
				ro.env = slices.Concat(ro.env, kvenv.Config{Only: []string{k}}.Environ())
				run := st.run(ro, o.wanted)
				if _, ok := timeToKill(run, o.wanted); ok {
					found[w] = i
					fmt.Fprintf(os.Stderr, "  %s kills %s\n", k, m.ID)
					return
				}
			}
		})
	}
	wg.Wait()
	for w, k := range weak {
		if i := found[w]; i >= 0 {
			_, check, _ := strings.Cut(k, "/")
			outcomes[i].by = append(outcomes[i].by, check)
			killers[k]++
		}
	}
}

// ready returns the outcome's suite, building it now if it was left to be
// built when needed (lazy, for --merge). findKillers' searches call it side
// by side: it writes nothing but the lazy suite, under its once.
func (o *killOutcome) ready() (*suite, error) {
	if o.suite != nil {
		return o.suite, nil
	}
	if o.lazy == nil {
		return nil, errors.New("no suite")
	}
	o.lazy.once.Do(func() { o.lazy.s, o.lazy.err = o.lazy.build() })
	return o.lazy.s, o.lazy.err
}

// lazySuite builds a mutant's suite the first time it is needed.
type lazySuite struct {
	once  sync.Once
	build func() (*suite, error)
	s     *suite
	err   error
}
