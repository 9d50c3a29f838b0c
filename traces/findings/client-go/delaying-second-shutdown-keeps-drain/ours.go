//go:build kverify_ours

package main

import "github.com/kverify/kverify/impl/workqueue"

func newQueue() queue {
	return workqueue.NewDelaying(workqueue.DelayingConfig[interface{}]{})
}
