package knative

import (
	_ "unsafe" // go:linkname

	pwq "github.com/kverify/kverify/props/workqueue"
	"github.com/kverify/kverify/subjects/upstream"
	"k8s.io/client-go/util/workqueue"
)

// globalMetricsProvider is client-go's process-wide work queue metrics
// provider (util/workqueue/metrics.go:213), which SetProvider sets once.
//
//go:linkname globalMetricsProvider k8s.io/client-go/util/workqueue.globalMetricsProvider
var globalMetricsProvider workqueue.MetricsProvider

// init replaces the provider knative.dev/pkg/controller installed at its
// own init (stats_reporter.go:95) with a throwaway recorder of the suite's
// (upstream.MetricsProvider). Every metric knative's provider records goes
// through knative's metrics worker, a goroutine the metrics package starts
// at init (metrics/exporter.go:37-40) that answers each record on a
// channel the caller makes: inside a synctest bubble that answer is a send
// from outside the bubble, which the runtime refuses (fatal error), so
// every check would crash. The two-lane queue's metrics are not judged
// (Subject.Metrics is false); its behaviour is.
func init() { globalMetricsProvider = upstream.MetricsProvider(new(pwq.Metrics)) }
