package upstream

import (
	"context"
	"slices"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	prw "github.com/kverify/kverify/props/retrywatcher"
	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/traces"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	toolswatch "k8s.io/client-go/tools/watch"
)

// RetryWatcher is client-go's tools/watch.RetryWatcher as a subject,
// through NewRetryWatcher, which every release from v0.20 has (v0.33
// added NewRetryWatcherWithContext and deprecated it; the two run the same
// watcher, and the check's context only ends the run, after Stop).
func RetryWatcher() prw.Subject {
	return prw.Subject{New: func(_ context.Context, rv string, w prw.Watcher) (prw.Watch, error) {
		//lint:ignore SA1019 the one constructor every release from v0.20 has
		return toolswatch.NewRetryWatcher(rv, watcherFunc(w))
	}}
}

// watcherFunc is the check's server as a cache.Watcher.
type watcherFunc prw.Watcher

func (f watcherFunc) Watch(o metav1.ListOptions) (watch.Interface, error) {
	return f(context.Background(), o)
}

// RetryWatcherDivergences are client-go's declared differences from the
// RetryWatcher model: none at v0.37.2; two in older releases, both fixed
// upstream as bugs.
//
// On retrywatcher/model they are intermittent: its random scripts meet a
// refused watch only when a refusal is drawn while a call is pending,
// which some runs of 100 scripts never do (v0.31.14 in the matrix run of
// 2026-12-07); retrywatcher/exhaustive meets each of them every run.
var RetryWatcherDivergences = slices.Concat(
	intermittent(retryWatcherDeclared(prw.CheckModel)), retryWatcherDeclared(prw.CheckExhaustive))

// intermittent marks ds Intermittent.
func intermittent(ds []checkkit.Divergence) []checkkit.Divergence {
	for i := range ds {
		ds[i].Intermittent = true
	}
	return ds
}

// retryWatcherDeclared are the older releases' declarations for check,
// one per era (a check takes one declaration per release): before v0.31
// a second Stop panics and a refused watch is retried forever; in v0.31
// only the latter.
func retryWatcherDeclared(check string) []checkkit.Divergence {
	const (
		sleepReason   = "a server's retry-after is waited out in time.Sleep, which Stop cannot interrupt: the result channel stays open, and the goroutine runs, for up to RetryAfterSeconds after Stop, against watch.Interface's Stop (\"Stops watching. Will close the channel returned by ResultChan()\")"
		sleepShape    = `Stop ends it: after Stop the result channel is still open: nothing`
		sleepFix      = "kubernetes/kubernetes#93709 (v0.24.0, \"Make RetryWatcher sleep interruptible\"): \"time.Sleep() is not interruptible. It should be possible to stop sleeping if the watch owner wants to abort the watch during the sleep\""
		stopReason    = "Stop closes its stop channel unguarded, so a second Stop panics with close of closed channel; Stop is watch.Interface's, which callers (and UntilWithoutRetry's deferred Stop) may call more than once"
		stopShape     = `No panic: Stop: .*close of closed channel`
		stopFix       = "kubernetes/kubernetes#126125 (v0.31.0, \"Allow calling Stop multiple times on RetryWatcher without panicking\"): \"This makes the RetryWatcher.Stop method idempotent so that if Stop is called multiple times, it does not cause a panic due to closing a closed channel\""
		refusedReason = "a watch call refused as Forbidden or Unauthorized is retried every second, forever, without a word to the consumer: the error branch of doReceive retries every error but EOF alike"
		refusedShape  = `Ends on what it cannot recover from: after Refuse\((401|403)\): the consumer got nothing, want ERROR (401|403)`
		refusedFix    = "kubernetes/kubernetes#126038 (v0.32.0, \"Send an error on ResultChan and close the RetryWatcher when the client is forbidden or unauthorized from watching the resource\"): \"When the client does not have permission to watch a resource, the RetryWatcher continuously retried ... this is not a transient error that can be recovered without user intervention\""
	)
	return []checkkit.Divergence{
		{Check: check, Releases: "<v0.24.0", Class: checkkit.ClassDefect,
			Reason:     sleepReason + "; and " + stopReason + "; and " + refusedReason,
			Upstream:   "k8s.io/client-go@v0.23.17/tools/watch/retrywatcher.go:271 (the sleep), 283-285 (Stop), 110-138 (the watch call's errors)",
			Guarantees: []string{prw.GStop, prw.GNoPanic, prw.GEnd}, Shape: "^(" + sleepShape + "|" + stopShape + "|" + refusedShape + ")$",
			Evidence: "all three fixed upstream: " + sleepFix + "; " + stopFix + "; " + refusedFix,
		},
		{Check: check, Releases: ">=v0.24.0 <v0.31.0", Class: checkkit.ClassDefect,
			Reason:     stopReason + "; and " + refusedReason,
			Upstream:   "k8s.io/client-go@v0.30.14/tools/watch/retrywatcher.go:289-291 (Stop), 111-134 (the watch call's errors)",
			Guarantees: []string{prw.GNoPanic, prw.GEnd}, Shape: "^(" + stopShape + "|" + refusedShape + ")$",
			Evidence: "both fixed upstream as bugs: " + stopFix + "; " + refusedFix,
		},
		{Check: check, Releases: ">=v0.31.0 <v0.32.0", Class: checkkit.ClassDefect,
			Reason:     refusedReason,
			Upstream:   "k8s.io/client-go@v0.31.14/tools/watch/retrywatcher.go:111-134",
			Guarantees: []string{prw.GEnd}, Shape: "^" + refusedShape + "$",
			Evidence: "fixed upstream as a bug by " + refusedFix,
		},
	}
}

func retrywatcherEntries() []suite.Entry {
	return []suite.Entry{entry(prw.Component, func() []checkkit.Check { return prw.Checks(RetryWatcher()) }, RetryWatcherDivergences,
		func(t *testing.T, tr *traces.Trace) error { return prw.Replay(t, RetryWatcher(), tr) })}
}
