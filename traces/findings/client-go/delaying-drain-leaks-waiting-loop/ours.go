//go:build kverify_ours

package main

import "github.com/kverify/kverify/impl/workqueue"

func newQueue(c hookedClock) queue {
	return workqueue.NewDelaying(workqueue.DelayingConfig[interface{}]{Config: workqueue.Config[interface{}]{Clock: c}})
}
