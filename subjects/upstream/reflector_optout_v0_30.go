//go:build clientgo_before_v0_34 && !clientgo_before_v0_30

package upstream

import "k8s.io/client-go/tools/cache"

// optOutOfStreaming makes a reflector told to list list: v0.30-v0.33 have
// UseWatchList *bool (reflector.go:143 in v0.33.13), which a reflector
// takes from the gate only when it is nil.
func optOutOfStreaming(r *cache.Reflector) {
	off := false
	r.UseWatchList = &off
}
