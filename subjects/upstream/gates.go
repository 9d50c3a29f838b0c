//go:build !clientgo_before_v0_30

package upstream

import (
	clientfeatures "k8s.io/client-go/features"
)

// GateOn reports whether client-go's feature gate name is on in this
// process: its default at this release, or what KUBE_FEATURE_<name> sets
// (client-go's environment-variable gates, from v0.30). known is false for
// a gate this release does not have.
func GateOn(name string) (on, known bool) {
	defer func() {
		if recover() != nil { // an unknown gate panics in Enabled
			on, known = false, false
		}
	}()
	return clientfeatures.FeatureGates().Enabled(clientfeatures.Feature(name)), true
}
