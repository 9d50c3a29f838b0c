//go:build !kverify_ours

package main

import "k8s.io/client-go/util/workqueue"

func newQueue() queue { return workqueue.New() }
