// Package retrywatcher holds a watch that resumes across failures
// (client-go's tools/watch.RetryWatcher, impl/retrywatcher) to the
// reference model in spec/retrywatcher.
//
// A check plays the server from a script (a Script: the initial version,
// then events, closed streams, error statuses, refused watches and Stop)
// in fake time, and compares every watch request, every event the
// consumer receives, every restart's time and the end with the model's.
// retrywatcher/model draws its scripts at random (rapid shrinks a failure
// to the shortest script); retrywatcher/exhaustive runs every script of up
// to ExhaustiveLen steps over a fixed alphabet of what a server does. A
// failing script is saved as a trace whose steps are the script, so that
// Replay runs it again on any subject.
package retrywatcher

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// Component is the kverify component these checks run in.
const Component = "retrywatcher"

// Watch is what a RetryWatcher gives its consumer.
type Watch interface {
	ResultChan() <-chan watch.Event
	Stop()
	Done() <-chan struct{}
}

// Watcher opens a watch: the server side, which the check plays.
type Watcher func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)

// Subject makes the RetryWatcher under test.
type Subject struct {
	// New starts a watcher from version rv over w, with a restart period
	// of spec.RestartPeriod, in the caller's fake time (a synctest
	// bubble's: the subject's clock is the real one, which is fake there).
	New func(ctx context.Context, rv string, w Watcher) (Watch, error)
}
