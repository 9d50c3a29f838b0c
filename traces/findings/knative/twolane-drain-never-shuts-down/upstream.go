//go:build !kverify_ours

package main

import (
	"context"
	"time"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/types"
	"knative.dev/pkg/controller"
)

type nop struct{}

func (nop) Reconcile(context.Context, string) error { return nil }

// reporter reports nothing: knative's default registers OpenCensus views.
type reporter struct{}

func (reporter) ReportQueueDepth(int64) error { return nil }
func (reporter) ReportReconcile(time.Duration, string, types.NamespacedName) error {
	return nil
}

// newQueue is the work queue of a knative controller.Impl: the two-lane
// queue.
func newQueue() queue {
	impl := controller.NewContext(context.Background(), nop{}, controller.ControllerOptions{
		WorkQueueName: "q", Logger: zap.NewNop().Sugar(), Reporter: reporter{}})
	return impl.WorkQueue()
}
