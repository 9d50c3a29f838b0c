// Package klogcap captures klog's output, process-wide, for the checks
// and tests that must see what client-go and k8s.io/utils/trace log.
package klogcap

import (
	"bytes"
	"flag"
	"strconv"
	"sync"

	"k8s.io/klog/v2"
)

// Capture is klog's output from Start until Release.
type Capture struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	state klog.State
}

// Start sends klog's output, at verbosity v, to the returned Capture and
// nowhere else, until Release restores every klog setting. klog's settings
// are process-wide: two captures must not overlap.
func Start(v int) *Capture {
	c := &Capture{state: klog.CaptureState()}
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	for name, value := range map[string]string{
		"v": strconv.Itoa(v), "logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL",
	} {
		// klog's own flags and values: a failure would be a klog API
		// change, which the callers then see as missing output.
		_ = fs.Set(name, value)
	}
	klog.SetOutput(c)
	return c
}

// Write implements io.Writer for klog.
func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

// String flushes klog and returns what it has written so far.
func (c *Capture) String() string {
	klog.Flush()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// Release restores klog's settings as Start found them.
func (c *Capture) Release() {
	klog.Flush()
	c.state.Restore()
}
