//go:build clientgo_before_v0_30

package upstream

// GateOn: before v0.30 client-go has no feature gates; every behaviour is
// the release's fixed one (known is always false).
func GateOn(name string) (on, known bool) { return false, false }
