package gitops

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/wire"
)

// Schedules (wire.Decode's bytes, as kverify serve --schedule takes them)
// whose one malformed event lands on the cluster cache's first watch: two
// objects, a healthy LIST, then a watch whose first event is malformed,
// then writes of default/o001 and default/o003 with waits between. Each
// is a schedule wire/schedules can draw; its random draws seldom put a
// malformed event where this client meets it (the cache makes one LIST
// and one WATCH per schedule, and its RetryWatcher reconnects a second
// after a stream ends), and wire/malformed's fixed schedule ends before
// the cache reconnects to its later streams (README.md).
var malformedFirstWatch = map[string]string{
	// MODIFIED default/o001 with resourceVersion "not-a-number": cached
	// and handed to OnResourceUpdated (a handlers violation).
	"badrv": "0200020000000a00030e080e180e",
	// The MODIFIED event's object is a Secret: cached under kind Secret
	// and handed on as an add while the ConfigMap is held (a handlers
	// violation; the Secret stays for good: the finding
	// watch-event-of-another-kind-stays-cached, under findingsDir).
	"wrongtype": "0200020000000a00010e080e180e",
	// No resourceVersion: the RetryWatcher ends with an error, the cache
	// relists (passes).
	"norv": "0200020000000a00020e080e180e",
	// No object: the stream's decoder fails, the RetryWatcher resumes
	// (passes).
	"nil": "0200020000000a00000e080e180e",
}

// TestExplore plays one schedule on the cluster cache and logs every
// request, every line the adapter wrote and the judge's verdict, without
// failing: GITOPS_EXPLORE names one of malformedFirstWatch, or
// GITOPS_SCHEDULE gives the bytes (hex) of any schedule, e.g. from a
// violation's "kverify serve --schedule HEX".
//
//	GITOPS_EXPLORE=wrongtype go test -run TestExplore -v .
func TestExplore(t *testing.T) {
	h := os.Getenv("GITOPS_SCHEDULE")
	if name := os.Getenv("GITOPS_EXPLORE"); name != "" {
		h = malformedFirstWatch[name]
	}
	if h == "" {
		t.Skip("set GITOPS_EXPLORE (badrv, wrongtype, norv, nil) or GITOPS_SCHEDULE (hex)")
	}
	data, err := hex.DecodeString(h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(); err != nil {
		t.Fatal(err)
	}
	sc := wire.Decode(data)
	t.Logf("schedule %s", sc)
	run := wire.Play(t, checkkit.NewRecorder(nil), Subject(), sc)
	for _, q := range run.Requests {
		t.Logf("%s %s %s", q.At.Format("15:04:05.000"), q.String(), q.Path)
	}
	for _, l := range run.Lines {
		b, _ := json.Marshal(l)
		t.Logf("line %s", b)
	}
	t.Logf("converged %v after %v; judge: %v", run.Converged, run.Recovered, wire.Judge(run))
}
