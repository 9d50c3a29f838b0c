package kubectl

import (
	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/wire"
)

// Source is the kubectl source the declarations' file:line refer to:
// k8s.io/kubectl and k8s.io/cli-runtime v0.37.2 (kubectl 1.37), the newest
// the Go module proxy serves; the behaviour was observed on kubectl
// v1.20.2 (Debian bookworm's kubernetes-client) and v1.32.4.
const Source = "k8s.io/kubectl@v0.37.2"

// pageShape is how a run meets the page finding: the first broken
// guarantee is either an object of the first list that never got its add
// or, when a write of the schedule comes first, an update or delete of an
// object the handler never got.
const pageShape = `^(every object present at the first sync gets its add: default/o\d+@\d+ was in the first sync \(version \d+\) and never got an add|handler calls are consistent per key .*: call \d+, (update|delete) default/o\d+@\d+: the handler does not hold default/o\d+\b)`

// chunkedListAsEvents: with more objects than --chunk-size (500 by
// default), kubectl get -w prints each page of its list as one ADDED
// event whose object is the whole page.
var chunkedListAsEvents = checkkit.Divergence{
	Check: wire.CheckSchedules, Intermittent: true,
	Guarantees: []string{wire.GInitialAdds, wire.GHandlers},
	Shape:      pageShape + `.* \[schedule (50[1-9]|5[1-9]\d|[6-9]\d\d|\d{4,}) objects`,
	Reason: "with more objects than --chunk-size (500 by default) the list comes in pages, and the resource builder makes one Info per page; Result.Object wraps the pages in a v1.List, whose items are the pages, " +
		"so get's watch (which prints meta.ExtractList of that object, each item wrapped in an ADDED WatchEvent under --output-watch-events) prints each page as one ADDED event whose object is a ConfigMapList, not one event per object: " +
		"a reader of the events (the adapter, as any program that consumes -o json --output-watch-events) gets no object of the initial list; the watch that follows is right",
	Upstream: Source + "/pkg/cmd/get/get.go:646-682; k8s.io/cli-runtime@v0.37.2/pkg/resource/result.go:141-172",
	Class:    checkkit.ClassDefect,
	Evidence: "--output-watch-events promises \"Existing objects are output as initial ADDED events\" (" + Source + "/pkg/cmd/get/get.go, the flag's help), and with fewer objects than a page it does; " +
		"traces/findings/kubectl/get-watch-prints-list-pages-as-events reproduces it with --chunk-size 2 and three objects; " +
		"no upstream issue found (searched kubernetes/kubernetes and kubernetes/kubectl: 'kubectl get watch output-watch-events chunk list', 'get -w -o json prints List'); the page-per-Info shape dates from kubernetes/kubernetes#59506 (2018, 'fix --watch on multiple requests', which let get -w accept one Info per chunk)",
}

// printsWhatItGets: kubectl get -w prints each watch event's object as the
// server sent it, a version that is not a number or an object of another
// kind included.
var printsWhatItGets = checkkit.Divergence{
	Check: wire.CheckSchedules, Intermittent: true,
	Guarantees: []string{wire.GHandlers},
	Shape:      `^handler calls are consistent[^:]*: .*` + wire.MalformedShape,
	Reason: "get's watch hands each event's object to the printer unchecked (UntilWithoutRetry's condition wraps e.Object in a WatchEvent and prints it): kubectl is a printer of the server's answers, its one watch is never resumed, so it never reads a version and has no reason to judge one; " +
		"a reader of its events (the adapter) gets an object whose version is not a number, or of another kind under a key it holds, as the server sent it",
	Upstream: Source + "/pkg/cmd/get/get.go:692-716",
	Class:    checkkit.ClassDesign,
	Evidence: "the flag's help promises the events, not their validity (" + Source + "/pkg/cmd/get/get.go: --output-watch-events \"Output watch event objects when --watch or --watch-only is used\"); " +
		"wire/malformed's fixed schedule does not deliver such an event to kubectl's one watch (its faults are placed by request number), so only wire/schedules meets it, now and then (an exploration met an ADDED at \"not-a-number\", rapid seed 11157215620871131141); no upstream issue found",
}

// Divergences are kubectl's declared differences from the wire checks:
// the page finding on every run of wire/pages (1,203 objects at the first
// list), and on the runs of wire/schedules that draw more than 500; and,
// on those that serve a malformed event to its watch, the event printed.
var Divergences = []checkkit.Divergence{chunkedListAsEvents.Or(printsWhatItGets), pagesAsEvents}

// pagesAsEvents is chunkedListAsEvents on wire/pages, whose first list is
// always three pages.
var pagesAsEvents = func() checkkit.Divergence {
	d := chunkedListAsEvents
	d.Check, d.Intermittent = wire.CheckPages, false
	d.Shape = pageShape
	return d
}()
