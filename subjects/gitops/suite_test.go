package gitops

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/subjects/suite"
	"go.uber.org/goleak"
)

// TestMain removes the built adapter and then checks for leaks as
// checkkit.VerifyTestMain does (the adapter is a process: its goroutines
// are not this one's).
func TestMain(m *testing.M) {
	if syncChild() { // a child process of BenchmarkSync100k
		os.Exit(0)
	}
	code := m.Run()
	Cleanup()
	if code == 0 {
		if hung := checkkit.Hung(); hung != "" {
			fmt.Printf("goleak: not checked: %s hung in this process and its goroutines still run\n", hung)
		} else if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: Errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// TestSuite builds the adapter (go build in client/) and runs the wire
// checks on it, as TestSuite/wire/gitops/<check>. Listing the checks
// (KVERIFY_LIST=1) builds nothing.
func TestSuite(t *testing.T) {
	if listing, _ := strconv.ParseBool(os.Getenv("KVERIFY_LIST")); !listing {
		if _, err := Build(); err != nil {
			t.Fatal(err)
		}
	}
	suite.RunSuite(t, Entries())
}

// TestReplay replays the trace named by KVERIFY_REPLAY on the cluster
// cache (kverify replay FILE --subject gitops).
func TestReplay(t *testing.T) { suite.RunReplay(t, Entries()) }
