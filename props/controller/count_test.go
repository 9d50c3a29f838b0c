package controller_test

import (
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	pctrl "github.com/kverify/kverify/props/controller"
	"github.com/kverify/kverify/subjects/ours"
)

// TestConvergeReach: controller/converge makes at least Schedules runs a
// round, and they reach what its guarantees need: every worker count, runs
// with many keys, failures and requeues.
func TestConvergeReach(t *testing.T) {
	s := ours.Controller()
	runs, many := 0, 0
	workers := map[int]bool{}
	inner := s.New
	s.New = func(st pctrl.Setup) (pctrl.Controller, error) {
		runs++
		workers[st.Workers] = true
		if _, objs := st.Server.Current(); len(objs) >= 8 {
			many++
		}
		return inner(st)
	}
	for _, c := range pctrl.Checks(s) {
		if c.Name == pctrl.CheckConverge {
			if err := c.Run(t, checkkit.Config{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if runs < pctrl.Schedules || len(workers) < 4 || many < runs/10 {
		t.Errorf("%d runs (want >= %d), worker counts %v (want 1-4), %d runs with 8 or more objects (want a tenth)", runs, pctrl.Schedules, workers, many)
	}
}
