//go:build !kverify_ours

package main

import "k8s.io/client-go/util/workqueue"

func newQueue(c hookedClock) queue {
	return workqueue.NewDelayingQueueWithCustomClock(c, "")
}
