// Package retrywatcher is the reference model of a watch that resumes
// across failures: client-go's tools/watch.RetryWatcher (under
// gitops-engine's cluster cache, kubectl wait and UntilWithSync).
//
// Its promise, in client-go's words (tools/watch/retrywatcher.go:43-48): in
// case the underlying watch is closed "it will get restarted from the last
// point without the consumer even knowing about it", by "keeping track of
// resourceVersion"; and it "is not resilient to etcd cache not having the
// resource version anymore". So:
//
//   - every watch it opens starts from the version of the last event it
//     took in, a bookmark included, or the initial version before any:
//     never from a version it has not seen, never from an older one;
//   - the consumer receives every Added, Modified and Deleted event of
//     every stream, in order, once: across restarts nothing is lost or
//     repeated (the server resends nothing after the version asked for);
//     bookmarks move the version and are not passed on;
//   - what it cannot recover from ends it, after one Error event naming
//     why: a 410 Gone in the stream (passed on as it came), Forbidden or
//     Unauthorized from the watch call, an event without a version or of
//     an unknown type; what it can recover from (a closed stream, an
//     error from the watch call, a 500, a 504, any other Status in the
//     stream) it recovers from without a word to the consumer;
//   - a restart waits for the Status's RetryAfterSeconds after the failed
//     stream ends, and comes no sooner than the restart period (1 s)
//     after the previous watch started (wait.NonSlidingUntil);
//   - Stop, or the end, closes the result channel and then Done.
//
// The model is pure: a Model is a state, Watch says what the next watch
// request must be, Step takes in what the server did and returns what the
// consumer must receive. Time is a number of nanoseconds since the start,
// supplied by the caller.
package retrywatcher

import (
	"errors"
	"fmt"
	"time"
)

// RestartPeriod is the least time between the starts of two watches
// (client-go's minRestartDelay, retrywatcher.go:71).
const RestartPeriod = time.Second

// EventType is a watch event's type.
type EventType string

// The watch event types.
const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
	Bookmark EventType = "BOOKMARK"
	Error    EventType = "ERROR"
)

// Kind names what the server did, one step of a run.
type Kind uint8

// What the server can do while a RetryWatcher runs.
const (
	// Event: the open stream carries an event of Type with version RV
	// (for Error: Code and RetryAfter, or NotStatus for an Error event
	// whose object is not a Status).
	Event Kind = iota
	// Closed: the open stream ends (the server closed it, or the
	// connection dropped).
	Closed
	// Refused: the watch call fails with a status of Code (0 for an
	// error that is not a Status: EOF, a timeout, a reset connection).
	Refused
	// StopCalled: the consumer calls Stop.
	StopCalled
)

// Step is one thing the server (or the consumer, Stop) did.
type Step struct {
	Kind Kind
	// Event: Type and RV; Code, RetryAfter and NotStatus for an Error.
	Type       EventType
	RV         string
	Code       int
	RetryAfter time.Duration
	NotStatus  bool
}

// Out is what the consumer receives for a step: an event passed on as it
// came (Passed), or an Error event the watcher made (Code: 500 for an
// internal error, 403 or 401 for a refused watch), or nothing.
type Out struct {
	Passed bool
	Type   EventType
	RV     string
	Code   int
}

// Phase is where the watcher is.
type Phase uint8

// The phases of a RetryWatcher.
const (
	Watching Phase = iota // a stream is open (or being opened)
	Waiting               // between two streams: Next says when the next opens
	Ended                 // stopped: the result channel closes, then Done
)

// Model is the state of a RetryWatcher.
type Model struct {
	// RV is the version the next watch starts from: the last event's or
	// bookmark's, or the initial one.
	RV     string
	Phase  Phase
	Opened bool // the current stream's watch call succeeded (Watching)
	// Started is when the current (or last) watch was requested; Next,
	// while Waiting, is the earliest the next may be.
	Started, Next time.Duration
	// Why says what ended it (Ended).
	Why string
}

// ErrInitialRV is New's error for a version a watch cannot resume from.
var ErrInitialRV = errors.New(`retrywatcher: the initial version must be neither "" nor "0"`)

// New returns a watcher about to open its first watch, from rv, at time 0.
// "" and "0" are refused (retrywatcher.go:75-78: "not supported due to
// issues with underlying WATCH").
func New(rv string) (Model, error) {
	if rv == "" || rv == "0" {
		return Model{}, fmt.Errorf("%w: got %q", ErrInitialRV, rv)
	}
	return Model{RV: rv}, nil
}

// Request is the watch request the watcher must make next: from RV, with
// bookmarks asked for.
type Request struct {
	RV        string
	Bookmarks bool
}

// Watch returns the request a watch opened at time now must be, after a
// wait if the watcher is Waiting (now must not be before Next), and the
// state once it is made. It is an error to call it while a stream is open
// or after the end.
func (m Model) Watch(now time.Duration) (Model, Request, error) {
	switch {
	case m.Phase == Ended:
		return m, Request{}, errors.New("retrywatcher: a watch after the end")
	case m.Phase == Watching && m.Opened:
		return m, Request{}, errors.New("retrywatcher: a second watch while a stream is open")
	case m.Phase == Waiting && now < m.Next:
		return m, Request{}, fmt.Errorf("retrywatcher: a watch at %v, before %v (the restart period after the last start, and the server's retry-after)", now, m.Next)
	}
	m.Phase, m.Opened, m.Started = Watching, true, now
	return m, Request{RV: m.RV, Bookmarks: true}, nil
}

// Apply takes in step s at time now (for a stream's end, when it ended)
// and returns the next state and what the consumer must receive, if
// anything. Event and Closed need an open stream; Refused needs a watch
// call made (Watch) whose stream is not open yet: call Watch, then
// Refused in its place.
func (m Model) Apply(s Step, now time.Duration) (Model, *Out, error) {
	if m.Phase == Ended {
		if s.Kind == StopCalled {
			return m, nil, nil // a second Stop does nothing
		}
		return m, nil, fmt.Errorf("retrywatcher: %v after the end", s.Kind)
	}
	switch s.Kind {
	case StopCalled:
		return m.end("stopped"), nil, nil
	case Refused:
		if m.Phase != Watching || !m.Opened {
			return m, nil, errors.New("retrywatcher: a refused watch with no watch call")
		}
		switch s.Code {
		case 401, 403:
			return m.end(fmt.Sprintf("watch refused (%d)", s.Code)), &Out{Type: Error, Code: s.Code}, nil
		}
		return m.restart(now, 0), nil, nil
	case Closed:
		if m.Phase != Watching || !m.Opened {
			return m, nil, errors.New("retrywatcher: a stream closed with none open")
		}
		return m.restart(now, 0), nil, nil
	case Event:
		if m.Phase != Watching || !m.Opened {
			return m, nil, errors.New("retrywatcher: an event with no stream open")
		}
		switch s.Type {
		case Added, Modified, Deleted, Bookmark:
			if s.RV == "" {
				return m.end("an event without a version"), &Out{Type: Error, Code: 500}, nil
			}
			m.RV = s.RV
			if s.Type == Bookmark {
				return m, nil, nil
			}
			return m, &Out{Passed: true, Type: s.Type, RV: s.RV}, nil
		case Error:
			if s.NotStatus {
				return m.restart(now, 0), nil, nil
			}
			if s.Code == 410 {
				return m.end("410 Gone"), &Out{Passed: true, Type: Error, Code: 410}, nil
			}
			return m.restart(now, s.RetryAfter), nil, nil
		}
		return m.end("an event of unknown type " + string(s.Type)), &Out{Type: Error, Code: 500}, nil
	}
	return m, nil, fmt.Errorf("retrywatcher: unknown step kind %d", s.Kind)
}

// restart is the state after a recoverable failure at now: the next watch
// waits for retryAfter from now and for the restart period from the last
// start, whichever is later.
func (m Model) restart(now, retryAfter time.Duration) Model {
	m.Phase, m.Opened = Waiting, false
	m.Next = max(now+max(0, retryAfter), m.Started+RestartPeriod)
	return m
}

func (m Model) end(why string) Model {
	m.Phase, m.Opened, m.Why = Ended, false, why
	return m
}

func (k Kind) String() string {
	switch k {
	case Event:
		return "an event"
	case Closed:
		return "a closed stream"
	case Refused:
		return "a refused watch"
	case StopCalled:
		return "Stop"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}
