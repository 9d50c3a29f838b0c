package fifo

import (
	"fmt"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	spec "github.com/kverify/kverify/spec/fifo"
)

// CheckSlow is the slow-pop warning's check.
const CheckSlow = "slow-warning"

// The slow-pop rule: client-go traces a pop that left more than slowDepth
// keys (DeltaFIFO) or deltas (RealFIFO) queued and whose process func took
// more than slowTook (delta_fifo.go:591-602, the_real_fifo.go:424-439).
const (
	slowDepth = 10
	slowTook  = 100 * time.Millisecond
)

type slowReport struct {
	key   string
	depth int
	took  time.Duration
}

// slowWarning checks the rule at its edges, in fake time: depth 11 and
// 101 ms is reported once, with the popped key, the depth and the time;
// depth 10, exactly 100 ms, or a fast pop are not.
func slowWarning(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		if !s.ReportsSlow {
			checkkit.SkipNotOffered(t, "the subject does not report slow pops (client-go traces them to klog, at -v=2 and up, with k8s.io/utils/trace)")
		}
		cases := []struct {
			queued int
			took   time.Duration
			want   bool
		}{
			{slowDepth + 2, slowTook + time.Millisecond, true},
			{slowDepth + 1, slowTook + time.Millisecond, false},
			{slowDepth + 2, slowTook, false},
			{slowDepth + 2, 0, false},
			{3 * slowDepth, time.Second, true},
		}
		for _, m := range basicModes(s) {
			for _, c := range cases {
				cfg.Progress.Op(fmt.Sprintf("%s: %d queued, process %v", m, c.queued, c.took))
				var err error
				checkkit.Bubble(t, func() { err = slowCase(s, m, c.queued, c.took, c.want) })
				if err != nil {
					return err
				}
			}
		}
		return nil
	}
}

func slowCase(s Subject, m Mode, queued int, took time.Duration, want bool) error {
	var reports []slowReport
	opts := Options{Atomic: m.Atomic, Unlock: m.Unlock, OnSlow: func(key string, depth int, took time.Duration) {
		reports = append(reports, slowReport{key, depth, took})
	}}
	if m.Known {
		opts.Known = NewStore()
	}
	f, err := s.New(opts)
	if err != nil {
		return checkkit.Broke(GErrors, "New(%s) failed: %v", m, err)
	}
	defer f.Close()
	for i := range queued {
		_ = f.Add(object(spec.Obj{Key: fmt.Sprintf("k%d", i), Version: i + 1}))
	}
	if _, err := f.Pop(func([]Delta, bool) error { time.Sleep(took); return nil }); err != nil {
		return checkkit.Broke(GErrors, "Pop failed: %v", err)
	}
	what := fmt.Sprintf("%s: a pop leaving %d queued whose process took %v", m, queued-1, took)
	switch {
	case !want && len(reports) > 0:
		return checkkit.Broke(GSlow, "%s was reported slow (%+v); the rule is more than %d queued and more than %v", what, reports, slowDepth, slowTook)
	case want && len(reports) != 1:
		return checkkit.Broke(GSlow, "%s was reported %d times, want once", what, len(reports))
	case want && (reports[0].key != "k0" || reports[0].depth != queued-1 || reports[0].took < took):
		return checkkit.Broke(GSlow, "%s was reported as key %q, depth %d, took %v; want k0, %d, at least %v", what, reports[0].key, reports[0].depth, reports[0].took, queued-1, took)
	}
	return nil
}
