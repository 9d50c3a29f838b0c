//go:build clientgo_before_v0_30 && !clientgo_before_v0_27

package upstream

import "k8s.io/client-go/tools/cache"

// optOutOfStreaming makes a reflector told to list list: v0.27-v0.29 have
// the exported UseWatchList (reflector.go:110 in v0.29.15), set from
// ENABLE_CLIENT_GO_WATCH_LIST_ALPHA.
func optOutOfStreaming(r *cache.Reflector) { r.UseWatchList = false }
