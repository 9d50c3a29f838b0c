package subjects_test

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	prefl "github.com/kverify/kverify/props/reflector"
	"github.com/kverify/kverify/subjects/ours"
)

// A plain list-and-watch reflector (no watch-list, no paging, no resync:
// ours.ListWatchReflector, impl/reflector with WatchListOff, PagingOff and
// no resync period) is a correct reflector: it passes every reflector
// check but the two that need only what it lacks, which are not offered,
// and every assembled-informer check over it (issue 27, "Optional
// features a subject can declare absent").
func TestListWatchReflectorCapabilities(t *testing.T) {
	runOffered(t, prefl.Checks(ours.ListWatchReflector()), map[string]bool{
		ours.ListWatchName + "/" + prefl.CheckBound:  true, // a watch-list stream without its end bookmark
		ours.ListWatchName + "/" + prefl.CheckResync: true, // the store's Resync every period
	})
}

// The assembled informer over that reflector, with no resync: only
// assembled/resync and assembled/resync-orders need only what it lacks
// (their watch-list scenarios and random runs are not generated, and no
// handler is given a period).
func TestListWatchAssembledCapabilities(t *testing.T) {
	runOffered(t, prefl.InformerChecks(ours.ListWatchAssembled()), map[string]bool{
		prefl.CheckAssembledResync:       true,
		prefl.CheckAssembledResyncOrders: true,
	})
}

// runOffered checks that exactly the checks in notOffered are not offered,
// then runs the checks with checkkit.Run and checks that every offered
// one ran to its end without a violation (a check that skipped, or never
// returned, fails the test too).
func runOffered(t *testing.T, checks []checkkit.Check, notOffered map[string]bool) {
	t.Helper()
	var mu sync.Mutex
	passed := map[string]bool{}
	var offered []string
	for i, c := range checks {
		if got := c.NotOffered != ""; got != notOffered[c.Name] {
			t.Errorf("%s: not offered %v (%q), want %v", c.Name, got, c.NotOffered, notOffered[c.Name])
		}
		if c.NotOffered != "" {
			continue
		}
		offered = append(offered, c.Name)
		run := c.Run
		checks[i].Run = func(t *testing.T, cfg checkkit.Config) error {
			err := run(t, cfg)
			mu.Lock()
			defer mu.Unlock()
			passed[c.Name] = err == nil
			return err
		}
	}
	for name := range notOffered {
		if !slices.ContainsFunc(checks, func(c checkkit.Check) bool { return c.Name == name }) {
			t.Errorf("no check %s", name)
		}
	}
	checkkit.Run(t, checks)
	mu.Lock()
	defer mu.Unlock()
	for _, name := range offered {
		if !passed[name] {
			t.Errorf("%s did not run to a pass", name)
		}
	}
	if t.Failed() {
		return
	}
	t.Logf("passed: %v; not offered: %v", offered, slices.Sorted(maps.Keys(notOffered)))
}

// A schedule that streams cannot be run on a reflector that declares no
// watch-list: RunSchedule says so rather than judge it; the schedule
// without the absent features runs and passes.
func TestListWatchReflectorSchedule(t *testing.T) {
	s := ours.ListWatchReflector()
	sc := prefl.Decode([]byte{0x03, 3, 1, 6, 2, 1, 0x00, 0x08, 0x07}) // reflector watch-list
	if err := prefl.RunSchedule(t, checkkit.Config{}, s, sc); err == nil || !strings.Contains(err.Error(), "needs watch-list") {
		t.Errorf("a watch-list schedule on a reflector without watch-list: got %v, want an error naming watch-list", err)
	}
	paged := prefl.Decode([]byte{0x0b, 3, 0, 0x00, 0x10}) // watch-list and pages of 1
	if paged.PageSize != 1 || !paged.WatchList {
		t.Fatalf("decoded %s, want watch-list and page size 1", paged)
	}
	for _, sc := range []prefl.Schedule{sc, paged} {
		if err := prefl.RunSchedule(t, checkkit.Config{}, s, sc.Without(s.Capabilities)); err != nil {
			t.Errorf("%s without %s: %v", sc, s.Capabilities, err)
		}
	}
}
