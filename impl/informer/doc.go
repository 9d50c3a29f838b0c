// Package informer is our shared informer's fan-out: a Processor
// distributes notifications to Listeners, each of which relays them to one
// handler through one goroutine that calls the handler serially. An
// ordinary notification is stored once, in the processor's log, which every
// listener reads from its own position; a listener's own notifications
// (its initial list, sync notifications for the handlers due in a resync
// round) wait in its pump (one in hand, the rest in an unbounded chunked
// buffer, under the listener's lock), each marked with the log position
// it follows, so that a listener delivers everything in the order it was
// handed out. It follows client-go's tools/cache/shared_informer.go (v0.37.2)
// except where a decision below says otherwise.
//
// # Handler faults
//
// A handler call that panics is contained by its listener: the panic is
// recovered in that call, reported through ListenerOptions.OnPanic (by
// default utilruntime.HandleErrorWithContext, with the stack), the
// notification is skipped, and the next one is delivered at once. Other
// handlers are not affected, and the listener's goroutines stay alive and
// exit on Close (RemoveListener, the processor's shutdown) as usual. A
// panicking initial-list add still counts as returned, so the handler
// syncs once its other initial adds return.
//
// client-go differs in three ways: its utilruntime.HandleCrash
// re-panics unless utilruntime.ReallyCrash is false (by default a handler
// panic kills the process); when it does not, the listener sleeps one
// second before the next notification (shared_informer.go:1488-1491); and a
// panicking initial add never counts as finished, so the handler never
// syncs (kubernetes#129024, shared_informer_test.go:1307). We contain
// regardless of utilruntime.ReallyCrash: a controller's handler bug should
// cost one notification, not the process or the informer's sync.
//
// A handler blocked forever stalls only its own listener: Distribute and the
// other listeners go on (its backlog grows in the log), RemoveListener
// returns at once, and the listener's Done closes only once the blocked
// call returns. A slow handler gets everything, in order, eventually.
//
// # Slow-handler warning
//
// ListenerOptions.SlowHandler is called after a handler call that started
// with strictly more than SlowHandlerThreshold (1024) notifications
// waiting behind it and took strictly longer than SlowCallThreshold
// (100 ms). The backlog is counted under the listener's lock at the moment
// the notification is taken for the handler, so the threshold is exact. client-go traces the same
// condition, but its utiltrace LogIfLong fires at 100 ms already
// (k8s.io/utils/trace/trace.go:262), only with klog verbosity 2 or more,
// and reads the backlog racing with its pump (shared_informer.go:1496 vs
// :1458), so its count is the backlog or one less, at random.
//
// # What a listener keeps
//
// A listener's own notification is referenced from Add until the handler
// call that receives it returns: in the buffer (a chunked ring whose slots
// are cleared when read and whose chunks are released as it drains), then
// in the pump's hand, which is emptied when the pump goes idle; Close
// drops everything undelivered at once. An entry of the processor's log is
// referenced until every listener has delivered it and one of them
// reclaims: a listener that leaves a chunk of the log, the last listener
// to fall idle, and a listener that closes each clear what all have
// delivered and release the chunks all have left. So under load a
// delivered notification may stay referenced until the slowest listener
// reaches the end of its chunk (at most 1024 of them), and once every
// listener is idle, or the slow one is removed, none is. Each listener owns one goroutine
// from Start until Close (RemoveListener or the processor's shutdown) and
// a handler call in progress; a processor runs once (a second Run returns
// at once), so it never starts a second set. The suite checks this: listener/retention, informer/lifecycle.
//
// # Resync
//
// An informer resyncs (RunResync) every check period: the listeners due
// then (at or after their next resync time: inclusive, as client-go) get a
// sync notification for every object in the store and are rescheduled one
// effective period after that round, other listeners get nothing; ordinary
// notifications reach every listener. JoinResync applies client-go's rules
// for a handler's requested period. A new listener starts in the resync
// round, as in client-go (shared_informer.go:1198), so a sync distribution
// made before the first round (a relist's unchanged objects, in client-go)
// reaches it; an informer that takes the resync decision and distributes
// the round under one lock (RunResync) never lets a listener that joined
// after the decision see that round's notifications, so a handler added
// after a round is first resynced one period after it joined.
package informer
