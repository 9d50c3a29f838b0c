package vectors

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/kverify/kverify/spec/apiserver"
	"github.com/kverify/kverify/traces"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// The reflector's vectors (component reflector): which resource version a
// reflector publishes (LastSyncResourceVersion), which versions it hands
// the store's UpdateResourceVersion, and what its store holds, after each
// step of a server history, with no fault and no time passing: one list
// (or one watch-list stream) and one watch that stays open.
//
// The server is spec/apiserver's model, asked exactly what client-go's
// reflector asks it (a LIST from "0" with limit 500, then a WATCH from
// the list's version with bookmarks; or, streaming, a watch-list from ""
// with sendInitialEvents and NotOlderThan), so every step lists the watch
// events it makes the server deliver: a replayer without the model serves
// them from a scripted watch. The outcomes are client-go's rule, the
// contract props/reflector holds a subject to: a list publishes its
// version; a watch from "" or "0" (whose initial ADDED events come in key
// order, not by version) publishes nothing until its first MODIFIED,
// DELETED or BOOKMARK, then every event's version, each also handed to
// UpdateResourceVersion; a watch from a version the reflector synced at
// publishes every event's; a watch-list stream publishes nothing until
// its initial-events-end bookmark, whose version comes with the store's
// Replace, and then goes on as such a watch.
//
// Steps:
//
//   - Run: the reflector starts and syncs. Listing, its LIST is answered
//     with objects (key order) at version rv, which the header's blank_rv
//     or zero_rv may replace by "" or "0" (a server that does not version
//     its lists), and the WATCH from that version delivers events; with
//     params.stream its watch-list delivers events and no list is made.
//     A BOOKMARK among a Run's events is the initial-events-end bookmark
//     (annotation k8s.io/initial-events-end: "true"); later ones are
//     plain.
//   - Create, Update, Delete of key: a write at version rv (the server's
//     versions count writes, from 1); events is what the open watch
//     delivers (the write's ADDED, MODIFIED or DELETED, carrying the
//     object at version rv).
//   - Progress: the server's version moves to rv without an event.
//   - Bookmark: a bookmark is due at the server's version rv; the watch
//     delivers it only if it started below rv.
//
// Every step's want: value, the published version; rvs, the versions
// passed to UpdateResourceVersion during the step; objects, the store
// (absent: empty).
//
// Params: objects (created before Run: default/o000, ... at versions 2,
// 3, ...), watch_list (the server's WatchList gate is on: a watch from ""
// or "0" gets initial events and their end bookmark), stream (the
// reflector streams its sync), blank_rv and zero_rv (how the list
// answers its version), reverse (the initial ADDED events come in
// reverse key order).

// The checks and guarantees the vectors exercise (props/reflector's
// names, verbatim).
const (
	reflWithholding = "reflector/withholding"
	reflMachine     = "reflector/machine"
	gWithhold       = "a watch from \"\" or \"0\" publishes nothing before its first MODIFIED, DELETED or BOOKMARK"
	gEarned         = "earned resource version (the store holds the server's state at the published version, which never goes back)"
	gPublish        = "every published version reaches the store (Replace or UpdateResourceVersion)"
)

// reflectorVector makes vector seed: even seeds have a list answered ""
// or "0" (reflector/withholding), odd ones a list at its true version or
// a watch-list stream (the earned-version part of reflector/machine, on a
// healthy server).
func reflectorVector(seed uint64) traces.Vector {
	r := rng(seed)
	withhold := seed%2 == 0
	stream := !withhold && r.IntN(2) == 0
	gate := stream || r.IntN(2) == 0
	blank := withhold && r.IntN(2) == 0
	zero := withhold && !blank
	reverse := (withhold || stream) && r.IntN(2) == 0
	n := r.IntN(7)
	if seed%5 == 0 {
		n = 0
	}
	bit := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	params := map[string]float64{"objects": float64(n), "watch_list": bit(gate), "stream": bit(stream),
		"blank_rv": bit(blank), "zero_rv": bit(zero), "reverse": bit(reverse)}

	g := &reflectorGen{m: apiserver.New(apiserver.Config{NoWatchList: !gate}), gate: gate, store: map[string]string{}}
	keys := make([]string, 8)
	for i := range keys {
		keys[i] = fmt.Sprintf("default/o%03d", i)
	}
	for _, k := range keys[:n] {
		must(g.m.Create(k))
	}
	g.run(stream, blank, zero, reverse)
	// Withholding vectors open with creates (and progress), whose ADDED
	// events a watch from "" or "0" must not publish either: the initial
	// events are not the only ADDED events it withholds.
	if withhold {
		for range r.IntN(5) {
			if free := g.absent(keys); len(free) > 0 && r.IntN(4) > 0 {
				g.write("Create", free[r.IntN(len(free))])
			} else {
				g.progress()
			}
		}
	}
	for range 4 + r.IntN(24) {
		k := keys[r.IntN(len(keys))]
		present := !slices.Contains(g.absent(keys), k)
		switch p := r.IntN(100); {
		case p < 55 && !present:
			g.write("Create", k)
		case p < 55 && r.IntN(3) == 0:
			g.write("Delete", k)
		case p < 55:
			g.write("Update", k)
		case p < 75:
			g.bookmark()
		default:
			g.progress()
		}
	}
	check, guarantees := reflMachine, []string{gEarned, gPublish}
	if withhold {
		check, guarantees = reflWithholding, []string{gWithhold}
	}
	return traces.Vector{Header: traces.Header{Profile: "client-go", Params: params, Check: check, Guarantees: guarantees}, Steps: g.steps}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err) // a bug in the generator
	}
	return v
}

// reflectorGen is one vector in the making: the model server, its one
// open watch, and what the reflector has done with it.
type reflectorGen struct {
	m         *apiserver.Server
	gate      bool // the server's WatchList gate (the model keeps its configuration to itself)
	w         *apiserver.Watch
	delivered int // events of w already handed to the reflector
	// The reflector: its store (key -> version), published version, and
	// whether its watch publishes (it started at a synced version, or an
	// event other than ADDED came); streaming: whether the initial-events
	// end bookmark came (before it, events go to a temporary store).
	store     map[string]string
	temp      map[string]string
	published string
	publishes bool
	streaming bool
	steps     []traces.VStep
}

// run is the Run step: the sync, and the watch opened after it.
func (g *reflectorGen) run(stream, blank, zero, reverse bool) {
	s := traces.VStep{Op: "Run"}
	var order []string
	if reverse {
		objs := must(g.m.Snapshot(g.m.RV()))
		for i := len(objs) - 1; i >= 0; i-- {
			order = append(order, objs[i].Key)
		}
	}
	yes := true
	if stream {
		g.w = must(g.m.Watch(metav1.ListOptions{AllowWatchBookmarks: true, SendInitialEvents: &yes,
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, apiserver.WatchChoice{Order: order}))
		g.streaming, g.temp = true, map[string]string{}
	} else {
		// The reflector's first list: "0" with limit 500, served by the
		// adapter from the current state (no staleness).
		list := must(g.m.List(metav1.ListOptions{ResourceVersion: "0", Limit: 500}, apiserver.ListChoice{At: g.m.RV()}))
		rv := list.ResourceVersion
		switch {
		case blank:
			rv = ""
		case zero:
			rv = "0"
		}
		for _, o := range list.Items {
			k := key(&o)
			g.store[k] = o.ResourceVersion
			s.Objects = append(s.Objects, traces.VObject{Key: k, Value: o.ResourceVersion})
		}
		s.RV, g.published = str(rv), rv
		// The adapter serves a watch from "0", and a legacy watch from ""
		// (gate off), from the current state too.
		c := apiserver.WatchChoice{Order: order}
		if rv == "0" || (rv == "" && !g.gate) {
			c.At = g.m.RV()
		}
		g.w = must(g.m.Watch(metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}, c))
		g.publishes = rv != "" && rv != "0"
	}
	g.deliver(&s)
}

// absent is the keys of ks the server does not hold.
func (g *reflectorGen) absent(ks []string) []string {
	objs := must(g.m.Snapshot(g.m.RV()))
	return slices.DeleteFunc(slices.Clone(ks), func(k string) bool {
		return slices.ContainsFunc(objs, func(o apiserver.Object) bool { return o.Key == k })
	})
}

// key is the object's key as the server and client-go key it.
func key(m *metav1.PartialObjectMetadata) string {
	if m.Namespace == "" {
		return m.Name
	}
	return m.Namespace + "/" + m.Name
}

// deliver hands the watch's new events to the reflector, lists them in
// s, and appends s with the reflector's outcome.
func (g *reflectorGen) deliver(s *traces.VStep) {
	evs, _ := g.w.Events()
	var notified []string
	for _, e := range evs[g.delivered:] {
		m := e.Object.(*metav1.PartialObjectMetadata)
		rv := m.ResourceVersion
		d := traces.VDelta{Type: string(e.Type)}
		if e.Type == watch.Bookmark {
			d.RV = str(rv)
		} else {
			d.Key, d.Value = str(key(m)), str(rv)
		}
		s.Events = append(s.Events, d)
		if g.streaming {
			// The watch-list's initial events fill a temporary store; its
			// end bookmark replaces the store with it at its version.
			switch {
			case e.Type == watch.Added:
				g.temp[key(m)] = rv
			case e.Type == watch.Bookmark && m.Annotations[metav1.InitialEventsAnnotationKey] == "true":
				g.store, g.temp, g.streaming = g.temp, nil, false
				g.published, g.publishes = rv, true
			}
			continue
		}
		switch e.Type {
		case watch.Added, watch.Modified:
			g.store[key(m)] = rv
		case watch.Deleted:
			delete(g.store, key(m))
		}
		if e.Type != watch.Added {
			g.publishes = true
		}
		if g.publishes {
			g.published = rv
			notified = append(notified, rv)
		}
	}
	g.delivered = len(evs)
	w := &traces.Want{Value: str(g.published), RVs: notified}
	for _, k := range slices.Sorted(maps.Keys(g.store)) {
		w.Objects = append(w.Objects, traces.VObject{Key: k, Value: g.store[k]})
	}
	s.Want = w
	g.steps = append(g.steps, *s)
}

// write is a Create, Update or Delete of k.
func (g *reflectorGen) write(op, k string) {
	var rv int64
	switch op {
	case "Create":
		rv = must(g.m.Create(k))
	case "Update":
		rv = must(g.m.Update(k))
	default:
		rv = must(g.m.Delete(k))
	}
	g.deliver(&traces.VStep{Op: op, Key: str(k), RV: str(strconv.FormatInt(rv, 10))})
}

func (g *reflectorGen) progress() {
	rv := g.m.Progress()
	g.deliver(&traces.VStep{Op: "Progress", RV: str(strconv.FormatInt(rv, 10))})
}

func (g *reflectorGen) bookmark() {
	g.m.Bookmark()
	g.deliver(&traces.VStep{Op: "Bookmark", RV: str(strconv.FormatInt(g.m.RV(), 10))})
}
