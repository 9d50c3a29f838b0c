package gitops

import (
	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/wire"
)

// Divergences are the cluster cache's declared findings on the wire
// checks. At v0.7.3 every fixed wire check it is offered passes (wire/
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
// Its one defect found over the wire (the finding
// watch-event-of-another-kind-stays-cached, findingsDir): the cache applies
// and hands on any watch event's object, of another kind or with a version
// that is not a number. wire/malformed's fixed schedule does not deliver
// those events to this cache; wire/schedules draws one where the cache
// meets it seldom (none in 412 draws when the finding was written; a CI
// run met one, a MODIFIED at "not-a-number"), so it is declared there as
// intermittent, with that run's trace.
var Divergences = []checkkit.Divergence{{
	Check: wire.CheckSchedules, Intermittent: true,
	Guarantees: []string{wire.GHandlers, wire.GConverge},
	Shape:      `^(handler calls are consistent|after quiescence the cache)[^:]*: .*` + wire.MalformedShape,
	Reason: "watchEvents applies every event whose object decodes as *unstructured.Unstructured (cluster.go:612-618) and processEvent keys it by the object's own group and kind (:997-1016), never comparing them, or its version, with the watched API's: " +
		"an object whose resourceVersion is not a number is cached and handed to OnResourceUpdated (and client-go v0.23.1's RetryWatcher resumes its watch from that version), an object of another kind is cached as a new resource and kept for good (no relist of the watched kind removes it, :344-347)",
	Upstream: Version + "/pkg/cache/cluster.go:344-347,612-618,997-1016",
	Class:    checkkit.ClassDefect,
	Evidence: "the finding watch-event-of-another-kind-stays-cached (traces/findings/gitops): gitops-engine keeps its cache right without trusting the watch (cluster.go:44-45, 600-602; argoproj/gitops-engine#133: \"Argo CD should not rely on 100% watch API correctness\"), yet caches what the watch hands it unchecked; no upstream report found",
}}
