package deltatest

import (
	"testing"

	"github.com/kverify/kverify/internal/klogcap"
)

// CaptureKlog sends klog's output, at verbosity 2 (where k8s.io/utils/trace
// logs), to the returned capture until the test ends. klog's settings are
// process-wide: tests that call it must not run in parallel.
func CaptureKlog(t testing.TB) *klogcap.Capture {
	t.Helper()
	c := klogcap.Start(2)
	t.Cleanup(c.Release)
	return c
}
