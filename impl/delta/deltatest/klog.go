package deltatest

import (
	"bytes"
	"flag"
	"os"
	"sync"
	"testing"

	"k8s.io/klog/v2"
)

// Klog is klog's output captured by CaptureKlog.
type Klog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write implements io.Writer for klog.
func (k *Klog) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.buf.Write(p)
}

// String flushes klog and returns what it has written so far.
func (k *Klog) String() string {
	klog.Flush()
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.buf.String()
}

// CaptureKlog sends klog's output, at verbosity 2 (where k8s.io/utils/trace
// logs), to the returned Klog until the test ends. klog's settings are
// process-wide: tests that call it must not run in parallel.
func CaptureKlog(t testing.TB) *Klog {
	t.Helper()
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	set := func(name, value string) {
		if err := fs.Set(name, value); err != nil {
			t.Fatalf("klog flag %s=%s: %v", name, value, err)
		}
	}
	k := &Klog{}
	set("logtostderr", "false")
	set("alsologtostderr", "false")
	set("stderrthreshold", "FATAL")
	set("v", "2")
	klog.SetOutput(k)
	t.Cleanup(func() {
		klog.Flush()
		set("v", "0")
		set("logtostderr", "true")
		klog.SetOutput(os.Stderr)
	})
	return k
}
