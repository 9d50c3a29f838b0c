package findings_test

import (
	"testing"

	"github.com/kverify/kverify/traces/findings"
)

// lasso is the github.com/rancher/lasso version go.mod pins.
const lasso = "v0.2.10"

// TestReproducers runs lasso's reproducers on the pinned version (each
// must show its defect) and on ours (each must pass). The health loop's
// waits out one of lasso's 15 s sleeps.
func TestReproducers(t *testing.T) {
	findings.CheckReproducers(t, "../../..", "lasso", ".", "./...", lasso)
}
