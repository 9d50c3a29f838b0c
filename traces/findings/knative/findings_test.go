package findings_test

import (
	"testing"

	"github.com/kverify/kverify/traces/findings"
)

// knative is the knative.dev/pkg version go.mod pins.
const knative = "v0.0.0-20230612155445-74c4be5e935e"

// TestReproducers runs knative's reproducers on the pinned version (each
// must show its defect) and on ours (each must pass).
func TestReproducers(t *testing.T) {
	findings.CheckReproducers(t, "../../..", "knative", ".", "./...", knative)
}
