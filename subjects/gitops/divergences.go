package gitops

import "github.com/kverify/kverify/props/checkkit"

// Divergences are the cluster cache's declared findings on the wire
// checks: none. At v0.7.3 every wire check it is offered passes (wire/
// faults-exhaustive is not offered to a real-time subject).
//
// What the cache lacks, it reports as kverify-client/v1 allows, so no
// declaration is needed for it (README.md):
//   - a synced-to version: state.rv is "", and the checks judge the cache
//     and the handler calls alone (a reported version is earned is not
//     judged);
//   - handler calls for its initial sync: the cache fills itself
//     (clusterCache.sync, pkg/cache/cluster.go:763-772 at v0.7.3, setNode
//     without OnResourceUpdated), and an application reads that state with
//     FindResources; the adapter reports it as one add per resource, once,
//     before the first handler call.
//
// Its one defect found over the wire, an object of another kind on a
// watch kept for good (the finding watch-event-of-another-kind-stays-cached,
// findingsDir), breaks the handlers guarantee on a schedule that
// wire/schedules seldom draws (explore_test.go), and wire/malformed's
// fixed schedule does not deliver those events to this cache, so no check
// run observes it and none declares it.
var Divergences []checkkit.Divergence
