//go:build !kverify_ours

package main

import (
	"os"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"
)

func init() {
	// Stream the initial state with watch-list, whichever way this release
	// enables it: the WatchListClient feature gate (default on since
	// v0.35), the ENABLE_CLIENT_GO_WATCH_LIST_ALPHA variable (v0.28-v0.30),
	// or the UseWatchList field (v0.27-v0.30, set in newReflector).
	os.Setenv("KUBE_FEATURE_WatchListClient", "true")
	os.Setenv("ENABLE_CLIENT_GO_WATCH_LIST_ALPHA", "true")
}

// newReflector is cache.NewReflectorWithOptions for
// *metav1.PartialObjectMetadata with the given clock.
func newReflector(lw *fakeLW, store cache.Store, clk *testingclock.FakeClock) reflector {
	r := cache.NewReflectorWithOptions(lw, &metav1.PartialObjectMetadata{}, store,
		cache.ReflectorOptions{Name: "repro", Clock: clk})
	if f := reflect.ValueOf(r).Elem().FieldByName("UseWatchList"); f.IsValid() {
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Pointer:
			t := true
			f.Set(reflect.ValueOf(&t))
		}
	}
	return r
}
