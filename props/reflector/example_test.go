package reflector_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kverify/kverify/subjects/ours"

	"github.com/kverify/kverify/props/checkkit"
	prefl "github.com/kverify/kverify/props/reflector"
	"github.com/kverify/kverify/subjects/upstream"
	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a stream goroutine outlives them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A conformance test for a reflector is a subject and one call:
//
//	func TestConformance(t *testing.T) {
//		props.Run(t, reflector.Checks(subject))
//	}
//
// The subject builds a reflector over the model server it is given, writing
// to the recording store and reading time from the counting clock; here
// client-go's Reflector is the subject. Its constructor returns no error,
// so reflector/bad-input is not offered to it.
func ExampleChecks() {
	for _, c := range prefl.Checks(upstream.Reflector()) {
		note := ""
		if c.NotOffered != "" {
			note = "(not offered)"
		}
		fmt.Println(strings.TrimSpace(fmt.Sprintf("%-32s %-8s %s", c.Name, c.Family, note)))
	}
	// Output:
	// reflector/bad-input              model    (not offered)
	// reflector/requests               witness
	// reflector/stops                  leak
	// reflector/withholding            model
	// reflector/cancel                 leak
	// reflector/backoff                timing
	// reflector/initial-events-bound   timing
	// reflector/resync                 timing
	// reflector/malformed              model
	// reflector/machine                model
	// reflector/faults-exhaustive      exhaustive
}

// Decode turns any bytes into a schedule, which RunSchedule plays against
// a subject: the fuzz target's loop body.
func ExampleDecode() {
	sc := prefl.Decode([]byte{0x03, 3, 1, 6, 2, 1})
	fmt.Println(sc)
	// Output:
	// server watch-list=true, reflector watch-list=true, page size 0, 3 objects, faults [[end-after=2/410]], 0 steps
}

func TestRunScheduleOurs(t *testing.T) {
	for _, data := range [][]byte{{0x03, 3, 1, 6, 2, 1, 0x00, 0x08, 0x07}, {0x10, 2, 2, 1, 0, 0, 4, 0, 0, 0x05, 0x1f}} {
		if err := prefl.RunSchedule(t, checkkit.Config{}, ours.Reflector(), prefl.Decode(data)); err != nil {
			t.Fatal(err)
		}
	}
}
