//go:build clientgo_before_v0_27

package upstream

import "github.com/kverify/kverify/subjects/suite"

// wait.Backoff.DelayWithReset arrived in v0.27.
func backoffEntries() []suite.Entry {
	return absentEntries("the adapter takes wait.Backoff.DelayWithReset, first in v0.27.0", "backoff")
}

// kverify's model API server (spec/apiserver) speaks watch-list, whose
// ListOptions.SendInitialEvents k8s.io/apimachinery has from v0.27:
// against older releases the reflector, informer and wire checks do not
// build.
func informerEntries() []suite.Entry {
	return absentEntries(modelNeedsWatchList, "informer")
}

func reflectorEntries() []suite.Entry {
	return absentEntries(modelNeedsWatchList, "reflector")
}

func wireEntries() []suite.Entry {
	return absentEntries(modelNeedsWatchList, "wire")
}

const modelNeedsWatchList = "kverify's model API server (spec/apiserver, which these checks run against) is built on metav1.ListOptions.SendInitialEvents, which k8s.io/apimachinery has from v0.27.0"
