package informer

import (
	"fmt"
	"testing"
	"testing/synctest"
	"weak"

	"github.com/kverify/kverify/props"
)

// CheckRetention is the listener's retention check.
const CheckRetention = "listener/retention"

// retentionKeys is how many keys the retention check adds and deletes
// behind a blocked handler: past client-go's 1024-slot initial buffer.
const retentionKeys = 1100

// retention checks that a started fan-out lets go of what it delivered:
// with the handler blocked, every key is added and deleted (so the store
// no longer holds it), 2200 notifications pile up in the listener's
// buffer, the handler is released and takes them all; then, with the
// fan-out still running and idle, no key is referenced any more: not by
// the buffer's slots, not by a notification left in hand.
func retention(s Subject) func(*testing.T, props.Config) error {
	return func(t *testing.T, cfg props.Config) error {
		if s.SourceRetains != "" {
			t.Skipf("not applicable: %s", s.SourceRetains)
		}
		return inBubble(t, func() error {
			f := s.New()
			defer f.Stop()
			p := newProbe("h")
			if _, err := f.AddHandler(p); err != nil {
				return fmt.Errorf("AddHandler: %w", err)
			}
			f.Start()
			synctest.Wait()
			p.block()
			probes := make([]weak.Pointer[byte], retentionKeys)
			cfg.Progress.Op(fmt.Sprintf("Add and Delete of %d keys behind a blocked handler", retentionKeys))
			for i := range probes {
				var k string
				k, probes[i] = props.Probe(fmt.Sprint("listener-", i))
				f.Emit(Add, k)
				f.Emit(Delete, k)
			}
			synctest.Wait()
			p.unblock()
			synctest.Wait()
			if got := len(p.received()); got != 2*retentionKeys {
				return props.Broke("Delivery", "the handler received %d of the %d notifications once released", got, 2*retentionKeys)
			}
			if held := props.Held(probes...); len(held) > 0 {
				return props.Broke("No retention", "%d of %d keys added, deleted and delivered are still referenced by the running fan-out (key %d first)", len(held), len(probes), held[0])
			}
			return nil
		})
	}
}
