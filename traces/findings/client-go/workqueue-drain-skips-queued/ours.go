//go:build kverify_ours

package main

import "github.com/kverify/kverify/impl/workqueue"

func newQueue() queue { return workqueue.New(workqueue.Config[interface{}]{}) }
