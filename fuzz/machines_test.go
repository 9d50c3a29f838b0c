package fuzz

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/kverify/kverify/props"
	"github.com/kverify/kverify/subjects"
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
// FuzzCheck skips them.

// fuzzMachine makes f the fuzz target of our implementation's check
// component/check. Its seeds are the files in testdata/fuzz/<Target>/
// (TestMachineSeeds writes them), which libFuzzer builds also take:
// F.Add seeds are not seen there.
func fuzzMachine(f *testing.F, component, check string) {
	c, ok := oursCheck(component, check)
	if !ok {
		panic(fmt.Sprintf("no check %s/%s registered for ours", component, check))
	}
	f.Fuzz(func(t *testing.T, data []byte) { props.FuzzCheck(t, c, data) })
}

func oursCheck(component, check string) (props.Check, bool) {
	for _, e := range subjects.All() {
		if e.Component != component || e.Subject != subjects.Ours {
			continue
		}
		cs := e.Checks()
		if i := slices.IndexFunc(cs, func(c props.Check) bool { return c.Name == check }); i >= 0 {
			return cs[i], true
		}
	}
	return props.Check{}, false
}

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
	targets := regexp.MustCompile(`(?m)^func (FuzzCheck[A-Za-z0-9]+)\(`).FindAllStringSubmatch(string(data), -1)
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

func FuzzCheckQueueDrain(f *testing.F) { fuzzMachine(f, "workqueue", "queue/drain") }

func FuzzCheckQueueDoneUnheld(f *testing.F) { fuzzMachine(f, "workqueue", "queue/done-unheld") }

func FuzzCheckQueueMetrics(f *testing.F) { fuzzMachine(f, "workqueue", "queue/metrics") }

func FuzzCheckQueueOrder(f *testing.F) { fuzzMachine(f, "workqueue", "queue/order") }

func FuzzCheckQueueModel(f *testing.F) { fuzzMachine(f, "workqueue", "queue/model") }

func FuzzCheckDelayingMetrics(f *testing.F) { fuzzMachine(f, "delaying", "delaying/metrics") }

func FuzzCheckDelayingModel(f *testing.F) { fuzzMachine(f, "delaying", "delaying/model") }

func FuzzCheckDelayingTies(f *testing.F) { fuzzMachine(f, "delaying", "delaying/ties") }

func FuzzCheckDelayingDeadline(f *testing.F) { fuzzMachine(f, "delaying", "delaying/deadline") }

func FuzzCheckRatelimitExponential(f *testing.F) {
	fuzzMachine(f, "ratelimit", "ratelimit/exponential")
}

func FuzzCheckRatelimitExponentialOverflow(f *testing.F) {
	fuzzMachine(f, "ratelimit", "ratelimit/exponential-overflow")
}

func FuzzCheckRatelimitFastslow(f *testing.F) { fuzzMachine(f, "ratelimit", "ratelimit/fastslow") }

func FuzzCheckRatelimitMaxof(f *testing.F) { fuzzMachine(f, "ratelimit", "ratelimit/maxof") }

func FuzzCheckRatelimitMaxwait(f *testing.F) { fuzzMachine(f, "ratelimit", "ratelimit/maxwait") }

func FuzzCheckRatelimitBucket(f *testing.F) { fuzzMachine(f, "ratelimit", "ratelimit/bucket") }

func FuzzCheckRatelimitingModel(f *testing.F) { fuzzMachine(f, "ratelimit", "ratelimiting/model") }

func FuzzCheckRatelimitingDelegates(f *testing.F) {
	fuzzMachine(f, "ratelimit", "ratelimiting/delegates")
}

func FuzzCheckRingFifo(f *testing.F) { fuzzMachine(f, "ring", "ring/fifo") }

func FuzzCheckRingCapLaw(f *testing.F) { fuzzMachine(f, "ring", "ring/cap-law") }

func FuzzCheckChunkedFifo(f *testing.F) { fuzzMachine(f, "ring", "chunked/fifo") }

func FuzzCheckChunkedCapLaw(f *testing.F) { fuzzMachine(f, "ring", "chunked/cap-law") }

func FuzzCheckPooledFifo(f *testing.F) { fuzzMachine(f, "ring", "pooled/fifo") }

func FuzzCheckPooledCapLaw(f *testing.F) { fuzzMachine(f, "ring", "pooled/cap-law") }

func FuzzCheckAssembledConverge(f *testing.F) { fuzzMachine(f, "informer", "assembled/converge") }

func FuzzCheckPumpStep(f *testing.F) { fuzzMachine(f, "informer", "pump/step") }

func FuzzCheckListenerDelivery(f *testing.F) { fuzzMachine(f, "informer", "listener/delivery") }

func FuzzCheckDeltafifoSynced(f *testing.F) { fuzzMachine(f, "deltafifo", "deltafifo/synced") }

func FuzzCheckDeltafifoModel(f *testing.F) { fuzzMachine(f, "deltafifo", "deltafifo/model") }

func FuzzCheckDeltafifoNoKnown(f *testing.F) { fuzzMachine(f, "deltafifo", "deltafifo/no-known") }

func FuzzCheckDeltafifoDedup(f *testing.F) { fuzzMachine(f, "deltafifo", "deltafifo/dedup") }

func FuzzCheckDeltafifoFaults(f *testing.F) { fuzzMachine(f, "deltafifo", "deltafifo/faults") }

func FuzzCheckDeltafifoPipeline(f *testing.F) { fuzzMachine(f, "deltafifo", "deltafifo/pipeline") }

func FuzzCheckDeltafifoReplace(f *testing.F) { fuzzMachine(f, "deltafifo", "deltafifo/replace") }

func FuzzCheckRealfifoModel(f *testing.F) { fuzzMachine(f, "realfifo", "realfifo/model") }

func FuzzCheckRealfifoAtomic(f *testing.F) { fuzzMachine(f, "realfifo", "realfifo/atomic") }

func FuzzCheckRealfifoBatch(f *testing.F) { fuzzMachine(f, "realfifo", "realfifo/batch") }

func FuzzCheckRealfifoSynced(f *testing.F) { fuzzMachine(f, "realfifo", "realfifo/synced") }

func FuzzCheckRealfifoFaults(f *testing.F) { fuzzMachine(f, "realfifo", "realfifo/faults") }

func FuzzCheckRealfifoPipeline(f *testing.F) { fuzzMachine(f, "realfifo", "realfifo/pipeline") }

func FuzzCheckRealfifoReplace(f *testing.F) { fuzzMachine(f, "realfifo", "realfifo/replace") }

func FuzzCheckReflectorWithholding(f *testing.F) {
	fuzzMachine(f, "reflector", "reflector/withholding")
}

func FuzzCheckReflectorMalformed(f *testing.F) { fuzzMachine(f, "reflector", "reflector/malformed") }

func FuzzCheckReflectorMachine(f *testing.F) { fuzzMachine(f, "reflector", "reflector/machine") }

func FuzzCheckBackoffSequence(f *testing.F) { fuzzMachine(f, "backoff", "backoff/sequence") }

func FuzzCheckBackoffJitter(f *testing.F) { fuzzMachine(f, "backoff", "backoff/jitter") }

func FuzzCheckBackoffReset(f *testing.F) { fuzzMachine(f, "backoff", "backoff/reset") }

func FuzzCheckBackoffResetDeclared(f *testing.F) { fuzzMachine(f, "backoff", "backoff/reset-declared") }
