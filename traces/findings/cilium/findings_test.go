package findings_test

import (
	"testing"

	"github.com/kverify/kverify/traces/findings"
)

// cilium is the github.com/cilium/cilium version go.mod pins.
const cilium = "v1.20.2"

// TestReproducers runs cilium's reproducers on the pinned version (each
// must show its defect) and on ours (each must pass).
func TestReproducers(t *testing.T) {
	findings.CheckReproducers(t, "../../..", "cilium", ".", "./...", cilium)
}
