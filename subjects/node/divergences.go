package node

import (
	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/wire"
)

// The pinned versions the findings' file:line refer to (js/package.json).
const (
	ClientNodeVersion = "@kubernetes/client-node@2.0.1"
	FluentVersion     = "kubernetes-fluent-client@3.11.11"
)

// clientNodeCrash is client-node's crash on a watch event without an
// object, as the wire checks see it: the process is gone when asked for
// its state, or when stopped.
var clientNodeCrash = checkkit.Divergence{
	Guarantees: []string{wire.GStart},
	Shape: `(?s)^the client starts and speaks kverify-client/v1: .*TypeError: Cannot read properties of null \(reading '(metadata|code)'\)` +
		`\s+at (addOrUpdateObject|deleteObject|ListWatch\.watchHandler).*` + wire.MalformedShape,
	Reason:   "a watch event whose object is null (an ADDED, MODIFIED or DELETED event with \"object\": null) crashes the process: ListWatch.watchHandler is async and reads obj.metadata (obj.code for ERROR), and the watch's line handler calls it inside a try/catch meant for JSON errors without awaiting it, so the TypeError becomes an unhandled rejection and Node exits with status 1; the application loses its informer and everything else in the process",
	Upstream: ClientNodeVersion + "/dist/cache.js:160-175,231; dist/watch.js:81-86",
	Class:    checkkit.ClassDefect,
	Evidence: ClientNodeVersion + "/dist/watch.js:81-88: the line handler's try/catch is there to \"ignore parse errors\" and the informer's documented error channel is on('error') (dist/informer.d.ts:22), yet a null object exits the process; " +
		"no upstream issue found (nearest: https://github.com/kubernetes-client/javascript/issues/447, an unhandled rejection from a failed list, closed as rotten)",
}

// fluentMalformed is what kubernetes-fluent-client does with malformed
// events: it hands them on.
var fluentMalformed = checkkit.Divergence{
	Guarantees: []string{wire.GHandlers, wire.GEarned, wire.GConverge, wire.GInitialAdds},
	Shape: `^(handler calls are consistent .*: call \d+, (add|update|delete) default/o\d+@(|not-a-number): not a version the server issues` +
		`|after quiescence the cache .*|every object present at the first sync .*)` + wire.MalformedShape,
	Reason:   "the Watcher calls the application's callback with every ADDED, MODIFIED and DELETED event's object and then caches it by metadata.uid, without looking at its kind or its resourceVersion: an object whose version is empty or not a number, or an object of another kind (a Secret in a ConfigMap watch), reaches the handler and the cache",
	Upstream: FluentVersion + "/dist/fluent/watch.js:309-325",
	Class:    checkkit.ClassDefect,
	Evidence: FluentVersion + "/dist/fluent/shared-types.d.ts:21 types the Watch callback as taking the watched model's instance (WatchAction<T, K = InstanceType<T>>), but watch.js:309-325 passes it every event object unchecked; no upstream issue found",
}

// fluentNoListAfterFailure: after its first list fails, the Watcher
// watches from no version, gets every object as an ADDED event and
// announces no completed list until its relist timer.
var fluentNoListAfterFailure = `|after quiescence the cache .*: not converged after the bound: server at \d+ \{[^}]*\}; cache equal; handlers equal; reported version ""; synced never reported; `

// fluentRelistOrder: a relist adds the objects it has not cached by uid
// before it deletes the cached uids it did not list, so an object deleted
// and created again under its name while the watch was down is added
// (new uid) while the handler still holds it, then deleted (old uid).
// Only the add shows: it is the first violation.
var fluentRelistOrder = checkkit.Divergence{
	Guarantees: []string{wire.GHandlers},
	Shape:      `^handler calls are consistent .*: call \d+, add default/o\d+@\d+: the handler holds default/o\d+@\d+ \[schedule `,
	Reason:     "a relist calls the callback with ADDED for every uid it has not cached before it calls it with DELETED for the cached uids it did not list, so an object deleted and created again under its name while the watch was down reaches the callback as ADDED (new uid) before DELETED (old uid), the reverse of the server's order: an application keyed by namespace/name ends without the object the server holds",
	Upstream:   FluentVersion + "/dist/fluent/watch.js:231-291",
	Class:      checkkit.ClassDefect,
	Evidence:   "the relist's order reverses the server's: the delete of the old object happened first (traces/findings/fluent/relist-adds-new-uid-before-deleting-old); no upstream issue found",
}

// fluent2 is kubernetes-fluent-client 2.6.5 (the last 2.x), whose code
// the fluent@2.6.5 declarations quote.
const fluent2 = "kubernetes-fluent-client@2.6.5"

// fluent2RelistOrder is fluentRelistOrder in 2.6.5's #list, the same
// order (adds first, then the deletes of the uids not listed). 2.x waits
// for its resync tick (5 s) before it lists again after a cut, so the
// deletes and creates of wire/restart always come before its relist: not
// intermittent there.
var fluent2RelistOrder = checkkit.Divergence{Check: wire.CheckRestart,
	Guarantees: fluentRelistOrder.Guarantees,
	Shape:      fluentRelistOrder.Shape,
	Reason:     fluentRelistOrder.Reason,
	Upstream:   fluent2 + "/dist/fluent/watch.js:185-242",
	Class:      checkkit.ClassDefect,
	Evidence:   "the same order as 3.11.11's (" + fluentRelistOrder.Evidence + "); in 2.6.5, #list calls #process(item, Added) for each uid it has not cached (watch.js:207-216) and #process(item, Deleted) for the cached uids it did not list only after the last page (watch.js:233-236)",
}

// fluent2NoListAfterFailure: 2.6.5's #watch goes on to watch from no
// version after its list failed, as 3.11.11's does: the shape names the
// failed list and the watch from no version as the last requests.
var fluent2NoListAfterFailure = checkkit.Divergence{Check: wire.CheckSchedules, Intermittent: true,
	Guarantees: []string{wire.GConverge},
	Shape: `^after quiescence the cache .*: not converged after the bound: server at \d+ \{[^}]*\}; cache equal; handlers equal; reported version ""; synced never reported; ` +
		`last requests: (#\d+ [^;]*; )*#\d+ list rv="" -> (0|[45]\d\d); #\d+ watch rv="" -> 200[^;]* \[schedule `,
	Reason: "after its first list fails (refused, or answered with an error), #list emits list_error and returns, and #watch goes on to watch from #resourceVersion, still undefined: from no version. The server's initial ADDED events fill the cache and the stream stays healthy (each event refreshes lastSeenTime), so the resync check never relists, and no list completes until the relist timer (relistIntervalSec: 1800 s in the code, watch.js:87; the type docs say 600): " +
		"the cache is right, but the application is never told its initial list is done (no list event; start() has resolved after the list_error)",
	Upstream: fluent2 + "/dist/fluent/watch.js:83-97,185-242,274-338",
	Class:    checkkit.ClassDefect,
	Evidence: "the maintainers' own later code says a failed list should \"trigger a faster resync so items aren't permanently missed\" (kubernetes-fluent-client@3.11.11/dist/fluent/watch.js:370-373, added by https://github.com/defenseunicorns/kubernetes-fluent-client/pull/1105, 3.11.7), which 2.6.5 lacks; 3.11.11 still watches from no version after a failed list (the fluent subject declares it on wire/schedules; reproducer: traces/findings/fluent/failed-first-list-never-completes); no upstream issue found",
}

// fluent2StuckReconnect: 2.6.5 sets #pendingReconnect when its resync
// check reconnects and clears it only when a watch request is answered;
// a watch request that fails outright (refused, reset) leaves it set, and
// every later resync check only reports reconnect_pending.
var fluent2StuckReconnect = checkkit.Divergence{Check: wire.CheckOutage,
	Guarantees: []string{wire.GConverge},
	Shape:      `^after quiescence the cache .*: not converged after the bound: .*; synced never reported; last requests: (#\d+ [^;]*; )*#\d+ watch rv="\d*" -> 0 \[schedule `,
	Reason: "#checkResync sets #pendingReconnect before it calls #watch (watch.js:358-362), and only an answered watch request clears it (watch.js:287-289): a watch request that fails at the connection (refused, reset: node-fetch rejects) goes to the catch (watch.js:335-337) and #errHandler marks the watch stale (OVERRIDE) but leaves #pendingReconnect set, so every later resync check emits reconnect_pending and returns (watch.js:354-357): " +
		"after the first reconnect whose watch request fails outright, the Watcher never makes another request (here: the first list and watch refused, the resync's list and watch refused, then nothing), its cache stays as it was and it never converges",
	Upstream: fluent2 + "/dist/fluent/watch.js:274-338,340-371",
	Class:    checkkit.ClassDefect,
	Evidence: "fixed upstream by https://github.com/defenseunicorns/kubernetes-fluent-client/pull/1043 (\"fix: ensure reconnect pending does not get stuck\", in 3.11.4: \"the watch appears to get stuck in some scenarios and does not ever recover\"; it clears #pendingReconnect when the watch request fails or is not OK); and the Watcher's doc promises retries without limit by default (" + fluent2 + "/dist/fluent/watch.d.ts:30, WatchCfg.retryMax: \"Unlimited retries if not specified\")",
}

// fluent2EndedStream: on 2.6.5 a watch stream the server ends (after an
// ERROR event, or with none) is cleaned up, not reconnected; the Watcher
// watches again only when its resync check finds no event for
// resyncIntervalSec (600 s by default), far beyond the checks' bound.
var fluent2EndedStream = checkkit.Divergence{Check: wire.CheckSchedules, Intermittent: true,
	Guarantees: []string{wire.GConverge},
	// Either a watch from the list's version, or (fluent2NoListAfterFailure)
	// the watch from no version after a failed first list, ended by the
	// server (a fault that ends it) after its events, if any.
	Shape: `^after quiescence the cache .*: not converged after the bound: .*; (synced reported; last requests: (#\d+ [^;]*; )*#\d+ watch rv="\d+" -> 200( \[ERROR \d+\])? \[schedule ` +
		`|synced never reported; last requests: (#\d+ [^;]*; )*#\d+ list rv="" -> (0|[45]\d\d); #\d+ watch rv="" -> 200( \[[^\]]*\])? \[schedule \d+ objects, faults \[.*end-after)`,
	Reason:   "the stream's close and finish only run #streamCleanup, which destroys the stream (watch.js:323-326,398-403); an ERROR event other than 410 is handed to #process as data and sets #lastSeenTime (watch.js:297-312); #checkResync rewatches only when no event came for resyncIntervalSec, 600 s by default (watch.js:89-91,338-363): after a stream the server ends, the cache stays as it was for up to ten minutes",
	Upstream: fluent2 + "/dist/fluent/watch.js:89-91,297-330,338-363,398-403",
	Class:    checkkit.ClassDefect,
	Evidence: "the maintainers called the node-fetch watch brittle, \"silently missing watch events\" (https://github.com/defenseunicorns/kubernetes-fluent-client/issues/364), and 3.x reconnects when a stream ends or closes; met by wire/schedules in CI runs (a list, then a watch ended by an ERROR 500 event, then no request; and a refused first list, then the watch from no version ended at once, then no request: the cache empty)"}

// fluent1 is kubernetes-fluent-client 1.10.0 (the last 1.x), whose code
// the fluent@1.10.0 declarations quote: its Watch is ExecWatch, a bare
// watch from no version (dist/fluent/watch.js).
const fluent1 = "kubernetes-fluent-client@1.10.0"

// fluent1Promise is what 1.10.0's README says of its watch.
const fluent1Promise = fluent1 + "/README.md:22-23 (\"You can use watch to monitor resources in the cluster and react to changes. This will run until the process is terminated or the watch is aborted\")"

// fluent1Rewatch: every watch 1.x makes, the first and each retry, is
// from no version; a retry's initial ADDED events replay every object the
// application holds and never say which it lost.
var fluent1Rewatch = checkkit.Divergence{Check: wire.CheckRestart,
	Guarantees: []string{wire.GHandlers},
	Shape:      `^handler calls are consistent .*: call \d+, add default/o\d+@\d+: the handler holds default/o\d+@\d+ \[schedule `,
	Reason: "ExecWatch keeps no version: its URL never carries a resourceVersion (watch.js:24-33), so after a stream error it watches again from no version (reload, watch.js:130-146), and the server's initial ADDED events for that watch reach the callback for every object, those the application already holds included (an ADDED for a key the handler holds), " +
		"while an object deleted while the watch was down gets no DELETED: the application's view keeps it for ever",
	Upstream: fluent1 + "/dist/fluent/watch.js:24-33,63-147",
	Class:    checkkit.ClassDesign,
	Evidence: "the maintainers chose a watch from no version over list/watch and said so: https://github.com/defenseunicorns/kubernetes-fluent-client/issues/122 (\"Controller runtime uses a list/watch vs empty resourceVersion watch to perform the initial watch startup, need to investigate the pros/cons\"); " +
		"the replay was reported against Pepr in October 2023, when the library was at 1.x: https://github.com/defenseunicorns/pepr/issues/295 (\"Watch() will get replayed events if kubernetes closes the connection to the underlying REST API call\", closed); " +
		"2.0.0 replaced it by a Watcher that lists and resumes from versions (https://github.com/defenseunicorns/kubernetes-fluent-client/pull/113, \".Watch() rewrite with EventEmitter, better recovery & automatic resource versioning\")",
}

// fluent1Ghost is fluent1Rewatch's other half, as the convergence check
// words it: an object deleted while the watch was down is never DELETED,
// so after the retry's watch from no version the application still holds
// it (only ghosts, the last request a watch from no version answered).
var fluent1Ghost = checkkit.Divergence{Check: wire.CheckSchedules, Intermittent: true,
	Guarantees: []string{wire.GConverge},
	Shape:      `^after quiescence the cache .*: not converged after the bound: server at \d+ \{[^}]*\}; cache ghost \[[^\]]*\]; handlers ghost \[[^\]]*\]; reported version ""; synced reported; last requests: (#\d+ [^;]*; )+#\d+ watch rv="" -> 200[^;]* \[schedule `,
	Reason:     fluent1Rewatch.Reason,
	Upstream:   fluent1Rewatch.Upstream,
	Class:      checkkit.ClassDesign,
	Evidence:   fluent1Rewatch.Evidence + "; met by wire/schedules in a CI run (a watch cut by a restart, an object deleted before the next watch from no version, which gave no DELETED for it)",
}

// fluent1GivesUp: after retryMax (5) failed watches in a row, 1.x calls
// retryFail and never watches again.
var fluent1GivesUp = checkkit.Divergence{Check: wire.CheckOutage,
	Guarantees: []string{wire.GConverge},
	Shape:      `^after quiescence the cache .*: not converged after the bound: .*; synced never reported; last requests: (#\d+ watch rv="" -> (0|[45]\d\d); ){3}#\d+ watch rv="" -> (0|[45]\d\d) \[schedule `,
	Reason: "a failed watch request is retried retryDelaySec (5 s) later, and after retryMax failures in a row (5 unless configured, watch.js:41; the count is reset only when a watch is answered) reload calls WatchCfg.retryFail and returns (watch.js:130-146): " +
		"no request is made again, the application's view stays as it was (here: empty, the first watch and its 5 retries refused) and never converges",
	Upstream: fluent1 + "/dist/fluent/watch.js:39-43,130-146",
	Class:    checkkit.ClassDesign,
	Evidence: "the limit is configurable and its end has a hook (" + fluent1 + "/dist/fluent/watch.d.ts:24-41: WatchCfg.retryMax, \"The maximum number of times to retry the watch\", and retryFail, \"A function to call when the watch fails after the maximum number of retries\"), from https://github.com/defenseunicorns/kubernetes-fluent-client/pull/10 (\"add K8s().Watch() reconnect on failure logic\"); " +
		"though " + fluent1Promise + "; 2.x made retries unlimited by default (kubernetes-fluent-client@2.6.5/dist/fluent/watch.d.ts:30: \"Unlimited retries if not specified\")",
}

// fluent1NoEndBookmark: a watch from no version whose initial events end
// with no initial-events-end bookmark leaves 1.x nothing to know its view
// complete by.
var fluent1NoEndBookmark = checkkit.Divergence{Check: wire.CheckStall,
	Guarantees: []string{wire.GConverge},
	Shape:      `^after quiescence the cache .*: not converged after the bound: server at \d+ \{[^}]*\}; cache equal; handlers equal; reported version ""; synced never reported; last requests: (#\d+ [^;]*; )*#\d+ watch rv="" -> 200[^;]* \[schedule \d+ objects, faults \[.*drop-end-bookmark`,
	Reason:     "ExecWatch never lists; the only end of its initial state a 1.x application can see is the bookmark annotated k8s.io/initial-events-end that an API server with the WatchList feature ends a watch's initial ADDED events with (the callback gets it as a BOOKMARK): when the server sends none (here: dropped; any API server without WatchList), the view is right but nothing ever says it is complete, and the watch, which sets no timeout, is never renewed",
	Upstream:   fluent1 + "/dist/fluent/watch.js:24-33,101-111",
	Class:      checkkit.ClassDesign,
	Evidence:   fluent1Rewatch.Evidence,
}

// fluent1Malformed: 1.x hands every watch event's object to the callback
// and goes on with the stream.
var fluent1Malformed = checkkit.Divergence{
	Guarantees: []string{wire.GHandlers, wire.GEarned, wire.GConverge, wire.GInitialAdds},
	Shape: `^(handler calls are consistent .*: call \d+, (add|update|delete) default/o\d+@(|not-a-number): not a version the server issues` +
		`|after quiescence the cache .*|every object present at the first sync .*)` + wire.MalformedShape,
	Reason:   "the stream's line handler parses each event and calls the callback with its object and type, whatever they are (watch.js:101-111): an event with no object reaches the callback as null (the object it stood for is lost: the stream goes on, no retry, so that object is missing from the application's view until its next write), an object of another kind or with a version that is empty or not a number reaches it as the watched kind",
	Upstream: fluent1 + "/dist/fluent/watch.js:101-111",
	Class:    checkkit.ClassDefect,
	Evidence: fluent1 + "/dist/fluent/types.d.ts:55 types the Watch callback as taking the watched model's instance ((payload: K, phase: WatchPhase) => void, K the model's), but watch.js:101-111 passes it every event's object unchecked; the same pass-through as 3.11.11's (the fluent subject's wire/malformed); no upstream issue found",
}

// fluent1EndedForGood: a watch stream the server ends (its timeout, an
// ERROR event) is never watched again by 1.x: only errors retry.
var fluent1EndedForGood = checkkit.Divergence{Check: wire.CheckSchedules, Intermittent: true,
	Guarantees: []string{wire.GConverge},
	Shape:      `^after quiescence the cache .*: not converged after the bound: .*; synced (reported|never reported); last requests: (#\d+ [^;]*; )*#\d+ watch rv="" -> 200( \[[^\]]*\])? \[schedule \d+ objects, faults \[.*end-after`,
	Reason:     "the stream's 'close' and 'finish' handlers only detach its listeners (cleanup, watch.js:83-88, 98-99, 113-114); only an 'error' reloads (watch.js:68-81): a watch the server ends without an error (its request timeout, or after an ERROR event, which the callback gets as phase ERROR) is never watched again, and every later write is missed for good, with no error and no retryFail",
	Upstream:   fluent1 + "/dist/fluent/watch.js:63-124",
	Class:      checkkit.ClassDefect,
	Evidence:   fluent1Promise + "; the maintainers called the node-fetch watch brittle, \"silently missing watch events\" (https://github.com/defenseunicorns/kubernetes-fluent-client/issues/364), and 3.1.2 reconnects when a stream ends or closes (https://github.com/defenseunicorns/kubernetes-fluent-client/pull/425: #cleanupAndReconnect on 'end' and 'close')",
}

// clientNode0ListFailure: on 0.x a failed list rejects informer.start()
// (or, when a watch ended, the unawaited doneHandler) without an 'error'
// event, so the restart that the library's example hangs on 'error'
// never comes.
func clientNode0ListFailure(check string, intermittent bool) checkkit.Divergence {
	return checkkit.Divergence{Check: check, Intermittent: intermittent,
		Guarantees: []string{wire.GConverge},
		Shape:      `^after quiescence the cache .*: not converged after the bound: .*synced never reported; last requests: #1 list rv="" (limit=\d+ )?-> (0|4\d\d|5\d\d) \[schedule `,
		Reason:     "ListWatch.doneHandler awaits the list function outside any try (0.22.3 dist/cache.js:113-118; 1.0.0-rc6 :96-98): a list that fails rejects informer.start() and calls no 'error' callback, so an application that restarts its informer on 'error', as the library's example does, is left with an informer that never lists again",
		Upstream:   "@kubernetes/client-node@0.22.3/dist/cache.js:98-118",
		Class:      checkkit.ClassDefect,
		Evidence:   "reported as https://github.com/kubernetes-client/javascript/issues/447 (\"if the listFn throws an error, this should be reported using informer.on('error', ...)\", closed as rotten) and https://github.com/kubernetes-client/javascript/issues/2222 (\"List/Watch fails without error if the list function fails\", closed); 1.x catches it (1.4.0 dist/cache.js:106-114: the error callbacks, then return)"}
}

// rc6 is client-node 1.0.0-rc6, whose code the rc6 declarations quote.
const rc6 = "@kubernetes/client-node@1.0.0-rc6"

// rc6Storm: 1.0.0-rc6's watchHandler has no case for ERROR, so a 410
// sent as an ERROR event is dropped and the informer watches the same
// expired version again at once, for ever.
func rc6Storm(check string, intermittent bool, malformed bool) checkkit.Divergence {
	shape := `^a bounded request rate .*: (\d+ requests in the schedule \(at most 400\)|\d+ requests within a second \(at most 10\)).*(#\d+ watch rv="\d+" -> 200 \[ERROR 410\]; ){2,}`
	if malformed {
		shape = `^a bounded request rate .*: (\d+ requests in the schedule \(at most 400\)|\d+ requests within a second \(at most 10\)).*(#\d+ watch rv="\d+" -> 200 \[ERROR 410\]; ){2,}.*` + wire.MalformedShape
	}
	return checkkit.Divergence{Check: check, Intermittent: intermittent,
		Guarantees: []string{wire.GRate},
		Shape:      shape,
		Reason: "ListWatch.watchHandler has no case for ERROR and takes the resume version from the event envelope's metadata, which a watch event never has (1.0.0-rc6 dist/cache.js:136-160): an ERROR 410 is dropped, the server ends the stream, doneHandler(null) keeps the expired resourceVersion and watches from it again at once, and every answer is the same 410: " +
			"a tight loop of watch requests without end (the checks stop it at 400); the same envelope read leaves latestResourceVersion() at the list's version while the cache moves on",
		Upstream: rc6 + "/dist/cache.js:82-118,136-160",
		Class:    checkkit.ClassDefect,
		Evidence: "reported for 1.0.0-rc6 as https://github.com/kubernetes-client/javascript/issues/1933 (\"Informer sends tens of watch requests per second to the cluster after the connection has been lost then re-established\", closed); " +
			"fixed by 1.4.0, whose watchHandler resets the version on ERROR 410 and reads it from the object (1.4.0 dist/cache.js:138-157)"}
}

// rc6StaleVersion: 1.0.0-rc6 reports the list's version while its cache
// has moved on with the watch (the resume version is read from the event
// envelope's metadata, which a watch event never has).
var rc6StaleVersion = checkkit.Divergence{Check: wire.CheckStall,
	Guarantees: []string{wire.GConverge},
	Shape:      `^after quiescence the cache .*: not converged after the bound: .*; cache equal; handlers equal; reported version "\d+" \(not the server's state: `,
	Reason:     "ListWatch.watchHandler sets resourceVersion from watchObj.metadata, the event envelope's, which a watch event never has (1.0.0-rc6 dist/cache.js:158-160): latestResourceVersion() stays at the list's version while the cache holds later events, and a watch that ends is resumed from that old version (every event since the list again)",
	Upstream:   rc6 + "/dist/cache.js:158-160",
	Class:      checkkit.ClassDefect,
	Evidence:   "the informer promises latestResourceVersion() as the version its cache holds (dist/cache.d.ts: ObjectCache), and 1.4.0 reads it from the object (dist/cache.js:157); the same line is behind https://github.com/kubernetes-client/javascript/issues/1933"}

// Divergences are each client's declared findings, by subject.
var Divergences = map[string][]checkkit.Divergence{
	ClientNode + "@0.22.3": {
		with(clientNodeCrash, wire.CheckMalformed, false),
		with(clientNodeCrash, wire.CheckSchedules, true).Or(clientNode0ListFailure(wire.CheckSchedules, true)),
		clientNode0ListFailure(wire.CheckOutage, false),
	},
	ClientNode + "@1.0.0-rc6": {
		rc6Storm(wire.CheckRestart, false, false),
		// wire/pages restarts the server after its first sync, as
		// wire/restart does: the same storm.
		rc6Storm(wire.CheckPages, false, false),
		rc6Storm(wire.CheckMalformed, false, true),
		rc6StaleVersion,
		clientNode0ListFailure(wire.CheckOutage, false),
		rc6Storm(wire.CheckSchedules, true, false).Or(clientNode0ListFailure(wire.CheckSchedules, true)).Or(with(rc6StaleVersion, wire.CheckSchedules, true)),
	},
	ClientNode + "@1.4.0": {
		with(clientNodeCrash, wire.CheckMalformed, false),
		with(clientNodeCrash, wire.CheckSchedules, true),
	},
	ClientNode: {
		with(clientNodeCrash, wire.CheckMalformed, false),
		// The random schedules carry a null object only now and then.
		with(clientNodeCrash, wire.CheckSchedules, true),
	},
	Fluent + "@1.10.0": {
		fluent1GivesUp,
		fluent1Rewatch,
		// wire/pages restarts the server after its 1,203-object first sync.
		with(fluent1Rewatch, wire.CheckPages, false),
		fluent1NoEndBookmark,
		// The malformed schedule restarts the server: the retry's replay
		// comes first (after the malformed events), or the events handed on.
		withShape(fluent1Rewatch, wire.CheckMalformed, `^handler calls are consistent .*: call \d+, add default/o\d+@\d+: the handler holds default/o\d+@\d+`+wire.MalformedShape).
			Or(with(fluent1Malformed, wire.CheckMalformed, false)),
		// The random schedules meet each of them now and then.
		with(fluent1Malformed, wire.CheckSchedules, true).Or(fluent1EndedForGood).Or(with(fluent1Rewatch, wire.CheckSchedules, true)).
			Or(with(fluent1GivesUp, wire.CheckSchedules, true)).Or(with(fluent1NoEndBookmark, wire.CheckSchedules, true)).
			Or(fluent1Ghost),
	},
	Fluent + "@2.6.5": {
		fluent2StuckReconnect,
		fluent2RelistOrder,
		// The random schedules meet a refused first list now and then, and
		// may meet the relist order or the stuck reconnect.
		fluent2NoListAfterFailure.Or(with(fluent2RelistOrder, wire.CheckSchedules, true)).Or(with(fluent2StuckReconnect, wire.CheckSchedules, true)).Or(fluent2EndedStream),
	},
	Fluent: {
		with(fluentMalformed, wire.CheckMalformed, false),
		// wire/restart deletes and recreates an object while the client is
		// cut off; in real time the Watcher's reconnect may, rarely, come
		// before those writes and see them as watch events.
		with(fluentRelistOrder, wire.CheckRestart, true),
		{Check: wire.CheckSchedules, Intermittent: true,
			Guarantees: append(fluentMalformed.Guarantees, wire.GSynced),
			Shape:      `^((handler calls are consistent .*: call \d+, (add|update|delete) default/o\d+@(|not-a-number): not a version the server issues|after quiescence the cache .*|every object present at the first sync .*)` + wire.MalformedShape + fluentNoListAfterFailure + "|" + fluentRelistOrder.Shape[1:] + `)`,
			Reason:     fluentMalformed.Reason + "; and after its first list fails (refused, or answered with an error), #watch goes on to watch from no version: the server's initial ADDED events fill the cache, the stream stays healthy, so the Watcher's 5 s staleness check never forces a relist and no list completes until the relist timer (600 s): the cache is right, but the application is never told its initial list is done (no list event, start() resolved without one); and " + fluentRelistOrder.Reason,
			Upstream:   fluentMalformed.Upstream + "; dist/fluent/watch.js:88-109,355-375,231-291",
			Class:      checkkit.ClassDefect,
			Evidence: fluentMalformed.Evidence + "; and watch.js:370-373 says a failed list should \"trigger a faster resync so items aren't permanently missed\", " +
				"but the next event resets lastSeenTime (watch.js:333), cancelling that resync (traces/findings/fluent/failed-first-list-never-completes); and " + fluentRelistOrder.Evidence},
	},
}

// with returns d declared for check.
func with(d checkkit.Divergence, check string, intermittent bool) checkkit.Divergence {
	d.Check, d.Intermittent = check, intermittent
	return d
}

// withShape returns d declared for check, for the shape a run of that
// check gives the same behaviour.
func withShape(d checkkit.Divergence, check, shape string) checkkit.Divergence {
	d.Check, d.Shape = check, shape
	return d
}
