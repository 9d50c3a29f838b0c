package reflector

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/modelserver"
)

// CheckFaultsExhaustive plays every fault schedule up to a length bound,
// not a random draw of them.
const CheckFaultsExhaustive = "reflector/faults-exhaustive"

// faultAlphabet is what the server may do to one request in
// reflector/faults-exhaustive: serve it, refuse it, reject it (410
// Expired, 500), end a watch at once or after one event with a 410, fail
// it as too large a version, serve a stale list. A schedule is a sequence
// of them, one per List or Watch request in the order they come.
var faultAlphabet = []modelserver.Fault{
	{},
	{Refuse: true},
	{Reject: 410},
	{Reject: 500},
	{Ends: true},
	{Ends: true, EndAfter: 1, EndStatus: 410},
	{TooLarge: true},
	{Stale: 1},
}

// faultsDepth is the default bound: every schedule of up to this many
// faults (KVERIFY_DEEPER adds to it). Random draws of reflector/machine
// take 8 kinds of fault among more than 40 and up to 8 of them: a given
// sequence of three comes up about once in 2000 schedules.
const faultsDepth = 3

// faultSetups are the configurations every schedule is played on: a
// listing reflector, a streaming one on a server that streams, and a
// streaming one on a server without watch-list (it falls back to LIST).
var faultSetups = []Schedule{
	{ServerWatchList: false, WatchList: false},
	{ServerWatchList: true, WatchList: true},
	{ServerWatchList: false, WatchList: true},
}

// faultHistory is the server's history under every schedule: writes,
// a compaction (so that a re-watch from an old version is expired), a
// bookmark, and stretches of time past the watches' timeouts (so that
// every stream ends and a new request takes the next fault).
var faultHistory = []Op{
	{Kind: opUpdate, Key: 0}, {Kind: opCompact}, {Kind: opAdvance, Advance: 65 * time.Second},
	{Kind: opDelete, Key: 1}, {Kind: opBookmark}, {Kind: opAdvance, Advance: 400 * time.Second},
	{Kind: opCreate, Key: 5}, {Kind: opAdvance, Advance: 400 * time.Second},
}

// faultsExhaustive runs reflector/faults-exhaustive: for each setup the
// subject can take, every schedule of up to faultsDepth faults of
// faultAlphabet, with reflector/machine's invariants at every quiescent
// point, convergence once the faults are spent, and every watch stopped.
// Every schedule runs (unreduced). The coverage's states are the distinct
// request histories the schedules produced.
func faultsExhaustive(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		var total checkkit.Coverage
		for _, setup := range faultSetups {
			if setup.WatchList && s.Capabilities.NoWatchList {
				continue
			}
			cov, err := checkkit.Explore(cfg, checkkit.Space[modelserver.Fault]{
				Name: "faults", Steps: faultAlphabet, Depth: faultsDepth, NoReduce: true,
				Run: func(faults []modelserver.Fault) (string, []int, error) {
					sc := setup
					sc.Objects, sc.Faults, sc.Ops = 3, faults, faultHistory
					var calls []string
					err := checkkit.Scenario(t, cfg, sc.String(), func(rec *checkkit.Recorder) error {
						i := 0
						srv := play(nil, rec, s, sc, func(*world, []string) (Op, bool) {
							if i == len(sc.Ops) {
								return Op{}, false
							}
							i++
							return sc.Ops[i-1], true
						})
						cs, _ := srv.Calls()
						for _, c := range cs {
							calls = append(calls, fmt.Sprintf("%v %s/%d %v", c.Kind, c.Options.ResourceVersion, c.Options.Limit, c.Err != nil))
						}
						return nil
					})
					if err != nil {
						return "", nil, err
					}
					// Every schedule is extended, even one whose last fault
					// no request took: how many requests a run makes may
					// depend on the goroutines' order inside the bubble, and
					// the set of schedules tried must not.
					return strings.Join(calls, ";"), checkkit.Every(len(faultAlphabet)), nil
				},
			})
			total = total.Plus(cov)
			total.Bound = fmt.Sprintf("%s, %d server and reflector setups", cov.Bound, len(faultSetups))
			if err != nil {
				checkkit.ReportCoverage(t, total)
				return err
			}
		}
		checkkit.ReportCoverage(t, total)
		return nil
	}
}
