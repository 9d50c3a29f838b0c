//go:build clientgo_before_v0_27 || !clientgo_before_v0_34

package upstream

import "k8s.io/client-go/tools/cache"

// optOutOfStreaming makes a reflector told to list list. Before v0.27
// there is no watch-list; from v0.35 the adapter's ListerWatcher opts out
// (IsWatchListSemanticsUnSupported, listwatch.go:149); v0.34 has no way:
// its useWatchList is private and follows the WatchListClient gate alone
// (reflector.go:148), which the declarations say.
func optOutOfStreaming(*cache.Reflector) {}
