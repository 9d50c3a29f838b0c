package python

import (
	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/wire"
)

// Version is the library the declarations' file:line refer to: Debian
// bookworm's python3-kubernetes 22.6.0-2 (the kubernetes package 22.6.0,
// under /usr/lib/python3/dist-packages/kubernetes).
const Version = "kubernetes (Python)@22.6.0"

// handsOnMalformed: Watch.stream hands the user every event's object as
// the watched type, whatever it holds.
func handsOnMalformed(check string, intermittent bool) checkkit.Divergence {
	return checkkit.Divergence{Check: check, Intermittent: intermittent,
		Guarantees: []string{wire.GHandlers, wire.GEarned, wire.GInitialAdds, wire.GSynced, wire.GConverge},
		Shape:      `^(handler calls are consistent|a reported version is earned|every object present at the first sync|synced is reported|after quiescence the cache)[^:]*: .*` + wire.MalformedShape,
		Reason: "Watch.stream deserializes every ADDED, MODIFIED and DELETED event's object as the watched type and yields it, whatever it holds: an object of another kind (a Secret in a ConfigMap watch) arrives as a V1ConfigMap of the same name, " +
			"an object whose resourceVersion is empty or not a number arrives with it (and becomes the version the stream resumes from, which the server then refuses), a null object arrives as None; " +
			"so an application that folds the events, as the adapter does, caches a Secret as a ConfigMap and hands on versions the server never issued (and code that reads e['object'].metadata raises on None, which the adapter survives by listing again)",
		Upstream: Version + "/watch/watch.py:96-117,171-193",
		Class:    checkkit.ClassDefect,
		Evidence: "Watch.stream's docstring promises 'object': \"A model representation of raw_object. The name of model will be determined based on the func's doc string\" (watch.py:131-136), yet unmarshal_event (watch.py:96-117) never compares the object's kind with the model's and records any resourceVersion as the one to resume from; " +
			"traces/findings/python/watch-yields-other-kinds-as-the-watched-type reproduces it; no upstream issue found (searched kubernetes-client/python: 'watch stream wrong kind object deserialized', 'watch event object None null')"}
}

// Divergences are the Python client's declared differences from the wire
// checks.
var Divergences = []checkkit.Divergence{
	handsOnMalformed(wire.CheckMalformed, false),
	// The random schedules carry a malformed event only now and then.
	handsOnMalformed(wire.CheckSchedules, true),
}
