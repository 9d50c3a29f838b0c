package workqueue

import (
	"strings"
	"testing"

	impl "github.com/kverify/kverify/impl/workqueue"
	"github.com/kverify/kverify/props/checkkit"
)

// A search that runs out of steps is no verdict: with a budget of one
// step every search of both linear checks is inconclusive, and each check
// still passes a correct queue, saying in its summary that it checked
// nothing.
func TestLinearInconclusiveIsNoFailure(t *testing.T) {
	defer func(n int) { linearSteps = n }(linearSteps)
	linearSteps = 1
	s := Subject{New: func(d Deps) Queue { return impl.New(impl.Config[string]{Clock: d.Clock}) }}
	for _, c := range linearChecks(s) {
		if err := c.Run(t, checkkit.Config{TraceDir: t.TempDir()}); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
	var tally inconclusive
	for seed := range uint64(5) {
		tally.add(seed)
	}
	if got := tally.summary(5); !strings.Contains(got, "every search was inconclusive") || !strings.Contains(got, "[0 1 2 ...]") {
		t.Errorf("summary of 5 inconclusive runs of 5: %q", got)
	}
	if got := tally.summary(6); !strings.Contains(got, "5 inconclusive search(es)") {
		t.Errorf("summary of 5 inconclusive runs of 6: %q", got)
	}
	if got := (&inconclusive{}).summary(6); got != "" {
		t.Errorf("summary without inconclusive runs: %q", got)
	}
}
