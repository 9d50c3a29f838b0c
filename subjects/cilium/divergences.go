package cilium

import (
	"strings"

	"github.com/kverify/kverify/props/checkkit"
	presource "github.com/kverify/kverify/subjects/cilium/proposed/resource"
	"github.com/kverify/kverify/subjects/upstream"
)

// The sources the declarations cite.
const resourceGo = Version + "/pkg/k8s/resource/resource.go"

// LevelDivergences are cilium's declared differences from the resource
// component's guarantees: none for Resource[T] as cilium builds its
// resources (Level), one for a Resource built with WithTransform
// (LevelTransformed).
var LevelDivergences = []checkkit.Divergence{transformLosesDelete}

// transformLosesDelete: a relist's tombstone fails WithTransform's type
// assertion, and the delete is dropped for good.
var transformLosesDelete = checkkit.Divergence{
	Check:      TransformName + "/" + presource.CheckLevel,
	Guarantees: []string{presource.GConverge},
	Shape:      `^after quiescence every subscription's last event[^:]*: two hours after the last step: server at \d+ \{[^}]*\}; subscription \d+: last events: (missing|stale|ghost) \[`,
	Reason: "on a relist client-go's DeltaFIFO queues a Deleted delta carrying a cache.DeletedFinalStateUnknown for every stored key the new list lacks; the Resource's Process applies the transform to every delta's object (resource.go:755-764), " +
		"WithTransform's wrapper fails on anything but *From (resource.go:180-188: \"resource.WithTransform: expected %T, got %T\"), so Process returns before it deletes the object from the store and queues the key (resource.go:797-806), " +
		"and client-go's controller drops Process errors (" + clientGo + "/tools/cache/controller.go:236-261): the object stays in the store and in every subscriber's view (a ghost; deltas of the key queued behind the tombstone are dropped with it), at this relist and every later one",
	Upstream: resourceGo + ":172-191,755-764,797-806",
	Class:    checkkit.ClassDefect,
	Evidence: "Events promises a Delete once the object is gone and a Sync after every object of the synced store (resource.go:59-91), and WithTransform transforms \"the object before storing it\" with no exception for deletions (resource.go:172-191); " +
		"client-go never hands a transform a tombstone (" + clientGo + "/tools/cache/delta_fifo.go:497-515); the maintainers' fix: https://github.com/cilium/cilium/pull/48639 (merged after v1.20.2: \"on a relist the resource hands the transform a cache.DeletedFinalStateUnknown tombstone, the type assertion fails, and the deltas of that key are dropped with no retry, silently, and again at every later relist\"; no transform in cilium's tree uses WithTransform, so a trap for the next one rather than a live bug); " +
		"reproducer traces/findings/cilium/resource-withtransform-relist-loses-delete",
}

// WireDivergences are cilium's declared differences over the wire:
// client-go's informer's, which a Resource runs (resource.New makes
// client-go's controller over a DeltaFIFO, resource.go:737-816, whose
// reflector lists and watches), as subjects/upstream declares them, for the
// client-go this module builds cilium with (v0.36.4) and this process's
// gates.
var WireDivergences = inheritClientGo(upstream.WireDivergences)

// inheritClientGo are client-go's declarations evaluated for clientGo's
// release and this process's gates, then cleared of both. Their sources
// are client-go's tools/cache/reflector.go, whose lines v0.36.4 and
// v0.37.2 share (the files differ in one trace field at line 745), so the
// citations are moved to v0.36.4 as they are.
func inheritClientGo(ds []checkkit.Divergence) []checkkit.Divergence {
	release := strings.TrimPrefix(clientGo, "k8s.io/client-go@")
	var out []checkkit.Divergence
	for _, d := range upstream.ForRelease(ds, release) {
		d.Releases, d.Gate = "", ""
		d.Reason = "a Resource runs client-go's informer machinery (cache.New over a DeltaFIFO, " + resourceGo + ":737-816), whose reflector is client-go's: " +
			strings.ReplaceAll(d.Reason, upstream.Version, clientGo)
		d.Upstream = strings.ReplaceAll(d.Upstream, upstream.Version, clientGo)
		d.Evidence = strings.ReplaceAll(d.Evidence, upstream.Version, clientGo)
		out = append(out, d)
	}
	return out
}
