package fuzz

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kverify/kverify/fuzz/libfuzzer"
	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/subjects"
	"github.com/kverify/kverify/subjects/suite"
)

// Every rapid state machine of the suite is also a native fuzz target: the
// check runs once per input on our implementation, its machine taking its
// draws from the fuzzer's bytes (props.FuzzCheck, rapid.MakeFuzz), so that
// go test -fuzz explores the same machine with coverage guidance and saves
// what fails under testdata/fuzz/<Target>/. make fuzz runs each target for
// FUZZTIME.
//
// Every plain go test runs each target's committed seed. Checks that run
// no rapid machine (fixed scenarios, race probes) have no target;
// FuzzCheck skips them. TestRapidChecksHaveTargets keeps the targets and
// the rapid-driven checks of ours the same set.

// fuzzMachine makes f the fuzz target of our implementation's check that
// libfuzzer.Machines names for f's target, the same check the libFuzzer
// build of the target runs. Its seeds are the files in
// testdata/fuzz/<Target>/ (TestMachineSeeds writes them), which libFuzzer
// builds also take: F.Add seeds are not seen there.
func fuzzMachine(f *testing.F) {
	m, ok := libfuzzer.Machines[f.Name()]
	if !ok {
		panic(fmt.Sprintf("%s is not in libfuzzer.Machines", f.Name()))
	}
	c, ok := suite.Lookup(subjects.All(), subjects.Ours, m.Component, m.Check)
	if !ok {
		panic(fmt.Sprintf("no check %s/%s registered for ours", m.Component, m.Check))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkkit.FuzzCheck(t, c, data) })
}

// TestLibFuzzerTargets checks that the machine targets of go test -fuzz
// (this package's FuzzCheck*), libfuzzer.Machines and the libFuzzer
// harnesses (libfuzzer/targets.go) are the same set, so that the
// ClusterFuzzLite build fuzzes every machine.
func TestLibFuzzerTargets(t *testing.T) {
	names := func(path string) []string {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range targetFunc.FindAllStringSubmatch(string(data), -1) {
			out = append(out, m[1])
		}
		sort.Strings(out)
		return out
	}
	var table []string
	for name := range libfuzzer.Machines {
		table = append(table, name)
	}
	sort.Strings(table)
	here, harnesses := names("machines_test.go"), names(filepath.Join("libfuzzer", "targets.go"))
	if d := cmp.Diff(table, here); d != "" {
		t.Errorf("libfuzzer.Machines (-) and this package's FuzzCheck targets (+) differ:\n%s", d)
	}
	if d := cmp.Diff(table, harnesses); d != "" {
		t.Errorf("libfuzzer.Machines (-) and libfuzzer/targets.go's harnesses (+) differ:\n%s", d)
	}
}

// TestRapidChecksHaveTargets checks that every check of ours that runs a
// rapid machine has a FuzzCheck target (an entry of libfuzzer.Machines),
// and that every target's check runs one (FuzzCheck skips a check that
// does not: such a target would fuzz nothing).
//
// It learns which checks are rapid-driven by running each once through
// checkkit.FuzzCheck on an empty input, its Run wrapped: rapid runs out
// of bytes at a machine's first draw and ends the check's goroutine with
// t.SkipNow from within rapid.MakeFuzz, so the wrapper sees the check
// leave through runtime.Goexit with rapid's frames on its stack. A check
// that runs no machine runs to its end instead, so the probe costs each
// such check one full run, and each rapid-driven one its work up to its
// first machine: milliseconds, except the checks in slowProbes, which run
// for seconds and are probed only with -machines.all.
func TestRapidChecksHaveTargets(t *testing.T) {
	targeted := map[libfuzzer.Machine]string{}
	for name, m := range libfuzzer.Machines {
		targeted[m] = name
	}
	seen := map[libfuzzer.Machine]bool{}
	start := time.Now()
	for _, e := range subjects.EntriesOf(subjects.Ours) {
		for _, c := range e.Checks() {
			m := libfuzzer.Machine{Component: e.Component, Check: c.Name}
			seen[m] = true
			target, hasTarget := targeted[m]
			if reason, slow := slowProbes[m]; slow {
				if hasTarget {
					t.Errorf("our %s/%s has target %s but is in slowProbes (%s): remove it from slowProbes, so that every run probes it", m.Component, m.Check, target, reason)
				}
				if !*probeAll {
					continue
				}
			}
			if c.NotOffered != "" {
				if hasTarget {
					t.Errorf("target %s: our %s/%s is not offered (%s), so it fuzzes nothing", target, m.Component, m.Check, c.NotOffered)
				}
				continue
			}
			switch rapid := runsRapid(t, e.Component, c); {
			case rapid && !hasTarget:
				t.Errorf("our %s/%s runs a rapid machine but has no fuzz target: add a FuzzCheck target for it here, its entry in libfuzzer.Machines and its harness in libfuzzer/targets.go, then write its seed (go test ./fuzz -run TestMachineSeeds -update-seeds)", m.Component, m.Check)
			case !rapid && hasTarget:
				t.Errorf("target %s: our %s/%s runs no rapid machine, so FuzzCheck skips every input", target, m.Component, m.Check)
			}
		}
	}
	for m, target := range targeted {
		if !seen[m] {
			t.Errorf("target %s: ours registers no check %s/%s", target, m.Component, m.Check)
		}
	}
	for m := range slowProbes {
		if !seen[m] {
			t.Errorf("slowProbes names %s/%s, which ours does not register", m.Component, m.Check)
		}
	}
	t.Logf("probed the checks in %v", time.Since(start).Round(time.Millisecond))
}

var probeAll = flag.Bool("machines.all", false, "TestRapidChecksHaveTargets: probe the checks in slowProbes too")

// slowProbes are our checks that run no rapid machine and take seconds to
// run to their end (measured on 2 busy cores: 0.3 s to 20 s each), each
// with why. TestRapidChecksHaveTargets probes them only with
// -machines.all (125 s in all here, against about 3 s without it), so a
// rapid machine added to one of them goes unnoticed without the flag;
// a target for one of them fails the test (remove the entry instead).
var slowProbes = map[libfuzzer.Machine]string{
	{Component: "workqueue", Check: "queue/lifecycle"}:   "a sweep of fixed lifecycle scenarios",
	{Component: "workqueue", Check: "queue/race"}:        "a race probe",
	{Component: "delaying", Check: "delaying/lifecycle"}: "a sweep of fixed lifecycle scenarios",
	{Component: "delaying", Check: "delaying/race"}:      "a race probe",
	{Component: "ratelimit", Check: "ratelimit/race"}:    "a race probe",
	{Component: "informer", Check: "processor/race"}:     "a race probe",
	{Component: "deltafifo", Check: "deltafifo/race"}:    "a race probe",
	{Component: "deltafifo", Check: "deltafifo/linear"}:  "linearizability of concurrent histories",
	{Component: "realfifo", Check: "realfifo/race"}:      "a race probe",
	{Component: "realfifo", Check: "realfifo/linear"}:    "linearizability of concurrent histories",
	{Component: "backoff", Check: "backoff/race"}:        "a race probe",
}

// runsRapid reports whether check c, of our component, runs a rapid
// machine: it runs c once through checkkit.FuzzCheck on an empty input
// (see TestRapidChecksHaveTargets). A check that returns without skipping
// has also run a machine, one that ended its own subtest (FuzzCheck skips
// a check that ran none).
func runsRapid(t *testing.T, component string, c checkkit.Check) bool {
	t.Helper()
	var inRapid, returned bool
	run := c.Run
	c.Run = func(t *testing.T, cfg checkkit.Config) error {
		defer func() {
			if !returned {
				inRapid = strings.Contains(string(debug.Stack()), "\npgregory.net/rapid.")
			}
		}()
		err := run(t, cfg)
		returned = true
		return err
	}
	var skipped bool
	ok := t.Run(component+"/"+c.Name, func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		checkkit.FuzzCheck(t, c, nil)
	})
	if !ok {
		t.Errorf("our %s/%s failed on an empty fuzz input", component, c.Name)
	}
	return inRapid || (returned && ok && !skipped)
}

var targetFunc = regexp.MustCompile(`(?m)^func (FuzzCheck[A-Za-z0-9]+)\(`)

var updateSeeds = flag.Bool("update-seeds", false, "rewrite the FuzzCheck targets' seed files")

// seedSize is the length of each machine target's seed: long enough that
// rapid, which reads its draws eight bytes at a time and skips an input
// that runs out, plays a whole machine run from it.
const seedSize = 16 << 10

// TestMachineSeeds checks that every FuzzCheck target has its committed
// seed (and writes them with -update-seeds): printable pseudo-random
// bytes, which the corpus file format stores one to one.
func TestMachineSeeds(t *testing.T) {
	data, err := os.ReadFile("machines_test.go")
	if err != nil {
		t.Fatal(err)
	}
	targets := targetFunc.FindAllStringSubmatch(string(data), -1)
	if len(targets) < 40 {
		t.Fatalf("found %d FuzzCheck targets", len(targets))
	}
	for i, m := range targets {
		path := filepath.Join("testdata", "fuzz", m[1], "seed-16k")
		if *updateSeeds {
			r := rand.New(rand.NewPCG(uint64(i), 0x7365656473))
			b := make([]byte, seedSize)
			for j := range b {
				b[j] = byte(0x23 + r.IntN(0x7e-0x23)) // printable, no quote or backslash
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if _, err := os.Stat(path); err != nil {
			t.Errorf("%s has no committed seed: %v (go test ./fuzz -run TestMachineSeeds -update-seeds)", m[1], err)
		}
	}
}

func FuzzCheckQueueDrain(f *testing.F) { fuzzMachine(f) }

func FuzzCheckQueueDoneUnheld(f *testing.F) { fuzzMachine(f) }

func FuzzCheckQueueMetrics(f *testing.F) { fuzzMachine(f) }

func FuzzCheckQueueOrder(f *testing.F) { fuzzMachine(f) }

func FuzzCheckQueueModel(f *testing.F) { fuzzMachine(f) }

func FuzzCheckDelayingMetrics(f *testing.F) { fuzzMachine(f) }

func FuzzCheckDelayingModel(f *testing.F) { fuzzMachine(f) }

func FuzzCheckDelayingTies(f *testing.F) { fuzzMachine(f) }

func FuzzCheckDelayingDeadline(f *testing.F) { fuzzMachine(f) }

func FuzzCheckRatelimitExponential(f *testing.F) { fuzzMachine(f) }

func FuzzCheckRatelimitExponentialOverflow(f *testing.F) { fuzzMachine(f) }

func FuzzCheckRatelimitFastslow(f *testing.F) { fuzzMachine(f) }

func FuzzCheckRatelimitMaxof(f *testing.F) { fuzzMachine(f) }

func FuzzCheckRatelimitMaxwait(f *testing.F) { fuzzMachine(f) }

func FuzzCheckRatelimitBucket(f *testing.F) { fuzzMachine(f) }

func FuzzCheckRatelimitingModel(f *testing.F) { fuzzMachine(f) }

func FuzzCheckRatelimitingDelegates(f *testing.F) { fuzzMachine(f) }

func FuzzCheckRingFifo(f *testing.F) { fuzzMachine(f) }

func FuzzCheckRingCapLaw(f *testing.F) { fuzzMachine(f) }

func FuzzCheckChunkedFifo(f *testing.F) { fuzzMachine(f) }

func FuzzCheckChunkedCapLaw(f *testing.F) { fuzzMachine(f) }

func FuzzCheckPooledFifo(f *testing.F) { fuzzMachine(f) }

func FuzzCheckPooledCapLaw(f *testing.F) { fuzzMachine(f) }

func FuzzCheckAssembledConverge(f *testing.F) { fuzzMachine(f) }

func FuzzCheckPumpStep(f *testing.F) { fuzzMachine(f) }

func FuzzCheckListenerDelivery(f *testing.F) { fuzzMachine(f) }

func FuzzCheckDeltafifoSynced(f *testing.F) { fuzzMachine(f) }

func FuzzCheckDeltafifoModel(f *testing.F) { fuzzMachine(f) }

func FuzzCheckDeltafifoNoKnown(f *testing.F) { fuzzMachine(f) }

func FuzzCheckDeltafifoDedup(f *testing.F) { fuzzMachine(f) }

func FuzzCheckDeltafifoFaults(f *testing.F) { fuzzMachine(f) }

func FuzzCheckDeltafifoPipeline(f *testing.F) { fuzzMachine(f) }

func FuzzCheckDeltafifoReplace(f *testing.F) { fuzzMachine(f) }

func FuzzCheckRealfifoModel(f *testing.F) { fuzzMachine(f) }

func FuzzCheckRealfifoAtomic(f *testing.F) { fuzzMachine(f) }

func FuzzCheckRealfifoBatch(f *testing.F) { fuzzMachine(f) }

func FuzzCheckRealfifoSynced(f *testing.F) { fuzzMachine(f) }

func FuzzCheckRealfifoFaults(f *testing.F) { fuzzMachine(f) }

func FuzzCheckRealfifoPipeline(f *testing.F) { fuzzMachine(f) }

func FuzzCheckRealfifoReplace(f *testing.F) { fuzzMachine(f) }

func FuzzCheckReflectorWithholding(f *testing.F) { fuzzMachine(f) }

func FuzzCheckReflectorMalformed(f *testing.F) { fuzzMachine(f) }

func FuzzCheckReflectorMachine(f *testing.F) { fuzzMachine(f) }

func FuzzCheckBackoffSequence(f *testing.F) { fuzzMachine(f) }

func FuzzCheckBackoffJitter(f *testing.F) { fuzzMachine(f) }

func FuzzCheckBackoffReset(f *testing.F) { fuzzMachine(f) }

func FuzzCheckBackoffResetDeclared(f *testing.F) { fuzzMachine(f) }

func FuzzCheckDeltafifoErrorPaths(f *testing.F) { fuzzMachine(f) }

func FuzzCheckDeltafifoCollaborators(f *testing.F) { fuzzMachine(f) }

func FuzzCheckRealfifoErrorPaths(f *testing.F) { fuzzMachine(f) }

func FuzzCheckRealfifoCollaborators(f *testing.F) { fuzzMachine(f) }

func FuzzCheckListwatchReflectorWithholding(f *testing.F) { fuzzMachine(f) }

func FuzzCheckListwatchReflectorMalformed(f *testing.F) { fuzzMachine(f) }

func FuzzCheckListwatchReflectorMachine(f *testing.F) { fuzzMachine(f) }

func FuzzCheckWireSchedules(f *testing.F) { fuzzMachine(f) }

// FuzzCheckControllerConverge is the machine target of controller/converge:
// our controller through one random schedule drawn from the input.
func FuzzCheckControllerConverge(f *testing.F) { fuzzMachine(f) }

// FuzzCheckRetrywatcherModel is the machine target of retrywatcher/model:
// our RetryWatcher through one server script drawn from the input.
func FuzzCheckRetrywatcherModel(f *testing.F) { fuzzMachine(f) }
