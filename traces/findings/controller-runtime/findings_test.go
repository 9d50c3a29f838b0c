package findings_test

import (
	"testing"

	"github.com/kverify/kverify/traces/findings"
)

// controllerRuntime is the release go.mod pins.
const controllerRuntime = "v0.25.3"

// TestReproducers runs controller-runtime's reproducers on the pinned
// release (each must show its defect) and on ours (each must pass).
func TestReproducers(t *testing.T) {
	findings.CheckReproducers(t, "../../..", "controller-runtime", ".", "./...", controllerRuntime)
}
