// Package resource is a proposed conformance component (to live at
// props/resource) for level-triggered resources: a cache of one Kubernetes
// resource that hands each subscriber the latest state of every key on a
// per-subscriber queue of keys, not every change, marks the end of its
// replay of the store with a Sync event, and retries a key whose event the
// subscriber marks failed. cilium's pkg/k8s/resource.Resource[T] is one;
// client-go's informer, which hands every delta to every handler, is not
// (its delivery is the informer component's).
//
// The check drives a subject against the model API server
// (props/modelserver) with its fault schedules, in synctest bubbles, and
// holds every subscription to what a level-triggered consumer relies on
// (see CheckLevel): one event per key at a time; every Upsert a state the
// server had, never older than the key's last event and never an object
// already deleted; a Delete only for an object the subscriber was given and
// only once the server deleted it; one Sync, after the server served a sync
// and after an Upsert of every object that stood through it; and, once
// writes and faults stop, every key's last event the server's state.
package resource

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Kind is an event's kind.
type Kind uint8

// The event kinds.
const (
	// Upsert: the key's object exists; Object is its latest state the
	// resource has.
	Upsert Kind = iota
	// Delete: the key's object the subscriber was given no longer exists;
	// Object is that object.
	Delete
	// Sync: the resource's store has synced and the subscriber has been
	// given every object in it; Key and Object are empty.
	Sync
)

func (k Kind) String() string {
	switch k {
	case Upsert:
		return "Upsert"
	case Delete:
		return "Delete"
	case Sync:
		return "Sync"
	}
	return "Kind(?)"
}

// Event is one event of a subscription.
type Event struct {
	Kind Kind
	// Key is the object's key, "namespace/name".
	Key string
	// Object is the object the event carries, as the server served it
	// (metadata only).
	Object *metav1.PartialObjectMetadata
	// Done marks the event handled; a non-nil error asks for the key to
	// be retried (the subject's default error handling). The subject
	// hands out no other event of the key before Done.
	Done func(err error)
}

// ListerWatcher is client-go's ListerWatcher and ListerWatcherWithContext
// method sets: what the subject's informer lists and watches.
type ListerWatcher interface {
	List(opts metav1.ListOptions) (runtime.Object, error)
	Watch(opts metav1.ListOptions) (watch.Interface, error)
	ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)
	WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// Setup is what the check asks the subject to build: a resource of
// *metav1.PartialObjectMetadata that lists and watches Source.
type Setup struct {
	// Source serves the model server's objects, each with the UID of its
	// incarnation. Without watch-list it also implements client-go's
	// IsWatchListSemanticsUnSupported (true).
	Source ListerWatcher
}

// Resource is a level-triggered resource under test, unstarted.
type Resource interface {
	// Subscribe starts a subscription with the subject's default options
	// (retry on error). Its events come on the channel, which is closed
	// once ctx ends or the resource stops. It may be called before
	// Start.
	Subscribe(ctx context.Context) <-chan Event
	// Start starts the resource. Stop stops it and returns once
	// everything it started has stopped; the check calls it once every
	// event it was handed is Done.
	Start() error
	Stop() error
}

// Subject is an implementation under test: New builds an unstarted
// resource inside the caller's synctest bubble.
type Subject struct {
	New func(s Setup) (Resource, error)
	// Name, when set, prefixes the check names (Name/resource/level): one
	// entry can then hold the checks of several configurations of a
	// subject.
	Name string
}

// check is check c's name for s.
func (s Subject) check(c string) string {
	if s.Name == "" {
		return c
	}
	return s.Name + "/" + c
}
