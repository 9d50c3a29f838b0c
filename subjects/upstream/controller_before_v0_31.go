//go:build clientgo_before_v0_31

package upstream

import "github.com/kverify/kverify/subjects/suite"

func controllerEntries() []suite.Entry {
	return absentEntries("the sample controller's composition is written against the typed work queue (TypedRateLimitingInterface), which client-go has from v0.31.0", "controller")
}
