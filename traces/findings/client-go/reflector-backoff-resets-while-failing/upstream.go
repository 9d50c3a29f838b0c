//go:build !kverify_ours

package main

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"
)

// newReflector is cache.NewReflectorWithOptions for
// *metav1.PartialObjectMetadata with the given clock.
func newReflector(lw *fakeLW, store cache.Store, clk *testingclock.FakeClock) reflector {
	return cache.NewReflectorWithOptions(lw, &metav1.PartialObjectMetadata{}, store,
		cache.ReflectorOptions{Name: "repro", Clock: clk})
}
