package delta_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kverify/kverify/impl/delta"
	"github.com/kverify/kverify/impl/delta/deltatest"
	utiltrace "k8s.io/utils/trace"
)

func TestTraceSlowPop(t *testing.T) {
	k := deltatest.CaptureKlog(t)
	delta.TraceSlowPop("RealFIFO PopBatch Process", "ns/a", 11, 150*time.Millisecond, utiltrace.Field{Key: "BatchSize", Value: 3})
	got := k.String()
	want := `"RealFIFO PopBatch Process" ID:ns/a,Depth:11,Reason:slow event handlers blocking the queue,BatchSize:3,Took:150ms `
	if !strings.Contains(got, want) {
		t.Errorf("klog got %q, want it to contain %q", got, want)
	}
}
