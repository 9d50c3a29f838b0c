package wire_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/wire"
	"github.com/kverify/kverify/subjects/ours"
)

// TestReach plays generated schedules on ours and counts the answers that
// make the guarantees able to fail: a check whose generator never makes a
// client page, resume after a cut, or meet a 410 cannot catch a client that
// gets those wrong.
func TestReach(t *testing.T) {
	const runs = 300
	classes := []checkkit.ReachClass{
		{Name: "a list answered with a continue token", Why: "continue tokens used as issued"},
		{Name: "a continue request", Why: "continue tokens used as issued"},
		{Name: "a watch cut by a restart", Why: "resume after a cut"},
		{Name: "a watch from an exact version", Why: "resume from a version sent"},
		{Name: "a 410 answer or ERROR", Why: "moving on after 410"},
		{Name: "a malformed event sent", Why: "malformed events"},
		{Name: "a refused request", Why: "backoff"},
		{Name: "a client that took a minute or more to converge", Why: "the recovery bound"},
	}
	tally := checkkit.Tally{}
	s := ours.Wire()
	for seed := range uint64(runs) {
		run := wire.Play(t, checkkit.NewRecorder(nil), s, wire.Generate(seed+1))
		if err := wire.Judge(run); err != nil {
			t.Fatalf("seed %d: %v", seed+1, err)
		}
		hit := map[string]bool{}
		for _, q := range run.Requests {
			hit["a list answered with a continue token"] = hit["a list answered with a continue token"] || q.Continue != ""
			hit["a continue request"] = hit["a continue request"] || q.Options.Continue != ""
			hit["a watch cut by a restart"] = hit["a watch cut by a restart"] || q.Cut
			exact := q.Verb == "watch" && q.Options.ResourceVersion != "" && q.Options.ResourceVersion != "0"
			hit["a watch from an exact version"] = hit["a watch from an exact version"] || exact
			hit["a 410 answer or ERROR"] = hit["a 410 answer or ERROR"] || q.Code == 410 || slices.Contains(q.Events, "ERROR 410")
			hit["a malformed event sent"] = hit["a malformed event sent"] || len(q.Malformed) > 0
			hit["a refused request"] = hit["a refused request"] || (q.Code == 0 && !strings.HasPrefix(q.Verb, "held"))
		}
		hit["a client that took a minute or more to converge"] = run.Recovered >= 60e9
		for _, c := range classes {
			tally.Hit(c.Name, hit[c.Name])
		}
	}
	tally.Check(t, "generated schedules on ours", 5, classes)
}
