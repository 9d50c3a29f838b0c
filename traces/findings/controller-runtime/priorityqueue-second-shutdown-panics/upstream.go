//go:build !kverify_ours

package main

import "sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"

func newQueue() queue { return priorityqueue.New[string]("q") }
