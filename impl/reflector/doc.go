// Package reflector keeps a store in step with an API server: it lists (or
// streams the initial state with watch-list), replaces the store's content
// once per sync, then watches from the version it synced at and applies
// every event, relisting when the watch cannot go on.
//
// It follows client-go's Reflector (tools/cache/reflector.go, v0.37.2) in
// every request it makes and every resource version it publishes; where
// client-go hangs, leaks or loses an error, it does better:
//
//   - A watch-list stream that never delivers its initial-events-end
//     bookmark ends within Options.InitialEventsTimeout, or as soon as it
//     closes, and the reflector falls back to LIST in the same
//     ListAndWatch. client-go retries the stream forever
//     (reflector.go:838-862) and waits on a stream that never closes.
//   - Every watch it starts is stopped exactly once, on every path: the
//     stream handed over by watch-list is stopped when the store's Replace
//     fails or the context ends.
//   - Cancelling the context never waits out a backoff; client-go's
//     watch-list retry blocks on clock.After without the context
//     (reflector.go:817).
//   - A malformed event (nil or wrongly typed object, an object without a
//     numeric resource version, an unknown event type) is never stored: it
//     ends the watch with a MalformedEventError, reported to OnWatchError,
//     and the reflector relists. client-go logs and skips such events but
//     stores an object whose version is missing or not a number and
//     publishes that version (reflector.go:1015-1080).
//   - Watch errors are reported to OnWatchError; client-go logs them and
//     passes only list and watch-start errors to its handler
//     (reflector.go:644-668).
//
// The backoff between attempts is impl/backoff's Delay with the reset rule
// documented there.
package reflector
