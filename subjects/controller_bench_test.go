package subjects

import (
	"testing"

	pctrl "github.com/kverify/kverify/props/controller"
	"github.com/kverify/kverify/subjects/ours"
	"github.com/kverify/kverify/subjects/upstream"
)

// controllerKeys and controllerWorkers are the benchmark: 100,000
// keys changed once, reconciled by 8 workers.
const (
	controllerKeys    = 100_000
	controllerWorkers = 8
)

// BenchmarkController100k: 100,000 keys changed once, each reconciled by
// 8 workers reading the cache (props/controller.Benchmark), ours
// (impl/controller) side by side with client-go's parts composed as the
// sample controller composes them. subjects/controllerruntime has the same
// benchmark with controller-runtime's controller beside them.
func BenchmarkController100k(b *testing.B) {
	impls := []struct {
		name    string
		subject func() pctrl.Subject
	}{
		{Ours, ours.Controller},
		{Upstream, upstream.Controller},
	}
	for _, impl := range inRoundOrder(impls) {
		b.Run("impl="+impl.name, func(b *testing.B) {
			pctrl.Benchmark(b, impl.subject(), controllerKeys, controllerWorkers)
		})
	}
}
