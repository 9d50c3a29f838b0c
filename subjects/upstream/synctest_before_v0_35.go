//go:build clientgo_before_v0_35 && !clientgo_before_v0_27

package upstream

import (
	"time"
	_ "unsafe" // go:linkname
)

// Before v0.35 a reflector without a resync period waits for its resync
// on neverExitWatch, a channel client-go makes when its package is
// initialised, outside any synctest bubble; a goroutine blocked on it is
// not durably blocked, so a bubble with a reflector never becomes idle
// and every check that waits for quiescence reports a hang.
// kubernetes PR #133500 (first in v0.35.0) made the variable nil, because
// "testing/synctest gets unhappy when goroutines are blocked on reading
// on channels which are created outside of the synctest bubble"; "a nil
// channel has exactly the desired behaviour". The adapter does the same
// to the older releases, once, before any reflector runs: nothing is ever
// sent on either channel, so the reflector's behaviour is the release's.
//
//go:linkname neverExitWatch k8s.io/client-go/tools/cache.neverExitWatch
var neverExitWatch <-chan time.Time

func init() { neverExitWatch = nil }
