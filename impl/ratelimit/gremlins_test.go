//go:build gremlins

package ratelimit_test

import (
	"os"
	"testing"

	"github.com/kverify/kverify/subjects"
)

// Under the gremlins tag only TestGremlins runs: go-gremlins runs every
// test of the mutated package, and a unit test that hangs on a gremlin
// waits for gremlins' timeout (minutes), where the suite's watchdog names
// the hang in seconds. The flag is read when the test binary's main
// parses its command line, after every init.
func init() { os.Args = append(os.Args, "-test.run=^TestGremlins$") }

// TestGremlins runs the conformance checks of every component built on
// this package, on our implementation, so that go-gremlins (make
// gremlins), which runs only the mutated package's own tests, judges a
// gremlin here by the suite rather than by this package's unit tests.
func TestGremlins(t *testing.T) { subjects.RunGremlins(t, "ratelimit") }
