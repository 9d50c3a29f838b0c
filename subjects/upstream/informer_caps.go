//go:build !clientgo_before_v0_27

package upstream

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kverify/kverify/internal/klogcap"
	pinf "github.com/kverify/kverify/props/informer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// client-go's optional informer capabilities for the suite: its slow-handler
// warning is a utiltrace trace logged through klog, and its handler panics
// are contained only with utilruntime.ReallyCrash false. Both are
// process-wide settings, set for the duration of one check and restored.

// slowInformer is the informer with klog captured at verbosity 2, where
// processorListener.run's trace (shared_informer.go:1496-1503, logged by
// k8s.io/utils/trace's LogIfLong only when klog.V(2) is on, trace.go:195)
// becomes visible.
type slowInformer struct {
	*upstreamInformer
	log *klogcap.Capture
}

func newSlowInformer() (pinf.SlowFanOut, func()) {
	c := klogcap.Start(2)
	return &slowInformer{upstreamInformer: newUpstreamInformer(0), log: c}, c.Release
}

var (
	traceHeader = regexp.MustCompile(`Trace\[(\d+)\]: "processorListener handler" .*pendingNotifications:(\d+)`)
	traceEnd    = regexp.MustCompile(`Trace\[(\d+)\]: \[([^\]]+)\] \[[^\]]+\] END`)
)

// SlowWarnings parses the listener traces klog logged so far: the backlog
// the trace recorded and the trace's full duration.
func (s *slowInformer) SlowWarnings() []pinf.SlowWarning {
	text := s.log.String()
	took := map[string]time.Duration{}
	for _, m := range traceEnd.FindAllStringSubmatch(text, -1) {
		if d, err := time.ParseDuration(m[2]); err == nil {
			took[m[1]] = d
		}
	}
	var ws []pinf.SlowWarning
	for _, line := range strings.Split(text, "\n") {
		m := traceHeader.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		w := pinf.SlowWarning{Pending: -1, Took: -1}
		if n, err := strconv.ParseInt(m[2], 10, 64); err == nil {
			w.Pending = n
		}
		if d, ok := took[m[1]]; ok {
			w.Took = d
		}
		ws = append(ws, w)
	}
	return ws
}

// ContainPanics runs body with utilruntime.ReallyCrash false, so that
// HandleCrash in processorListener.run (shared_informer.go:1495) logs a
// handler panic instead of re-panicking and killing the test binary, and
// with klog captured so that the panic's stack trace does not flood the
// test log. Both are restored afterwards.
func ContainPanics(body func() error) error {
	prev := utilruntime.ReallyCrash
	utilruntime.ReallyCrash = false
	c := klogcap.Start(0)
	defer func() {
		c.Release()
		utilruntime.ReallyCrash = prev
	}()
	return body()
}
