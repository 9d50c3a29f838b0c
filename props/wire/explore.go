package wire

import (
	"fmt"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/modelserver"
)

// CheckFaultsExhaustive plays every fault schedule up to a length bound
// over the wire.
const CheckFaultsExhaustive = "wire/faults-exhaustive"

// wireFaultsDepth is the default bound: every schedule of up to this many
// faults (KVERIFY_DEEPER adds to it). Only in-process subjects take the
// check: a real-time one (a process) takes seconds per schedule.
const wireFaultsDepth = 3

// wireFaults are the faults enumerated: served, refused, 410, 500, a
// stream ended at once, a stream ended after one event with a 410, too
// large a version.
var wireFaults = []modelserver.Fault{
	{}, {Refuse: true}, {Reject: 410}, {Reject: 500}, {Ends: true}, {Ends: true, EndAfter: 1, EndStatus: 410}, {TooLarge: true},
}

// wireHistory is every schedule's server history: writes, a restart (every
// stream cut, the history compacted), a delete, waits long enough for a
// retry.
var wireHistory = []Op{
	{Kind: OpWrite, Key: 0}, {Kind: OpWait, Wait: time.Second}, {Kind: OpRestart},
	{Kind: OpWrite, Key: 1}, {Kind: OpDelete, Key: 0}, {Kind: OpWait, Wait: 3 * time.Second},
}

// faultsExhaustive runs wire/faults-exhaustive: every schedule of faults
// of wireFaults up to the bound, with 3 objects and wireHistory, judged
// as wire/schedules judges a schedule. Unreduced: every schedule runs.
func faultsExhaustive(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		all := checkkit.Every(len(wireFaults))
		cov, err := checkkit.Explore(cfg, checkkit.Space[modelserver.Fault]{
			Name: "faults", Steps: wireFaults, Depth: wireFaultsDepth, NoReduce: true,
			Run: func(faults []modelserver.Fault) (string, []int, error) {
				rec := checkkit.NewRecorder(cfg.Progress)
				sc := Schedule{Objects: 3, Faults: faults, Ops: wireHistory}
				run := Play(t, rec, s, sc)
				if err := withTrace(rec, run, nil); err != nil {
					return "", nil, err
				}
				// Every schedule is extended, even one whose last fault no
				// request took: how many requests a run makes may depend
				// on the goroutines' order inside the bubble, and the set
				// of schedules tried must not.
				return fmt.Sprint(faults), all, nil
			},
		})
		checkkit.ReportCoverage(t, cov)
		return err
	}
}
