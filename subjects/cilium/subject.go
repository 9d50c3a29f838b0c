// Package cilium puts github.com/cilium/cilium's pkg/k8s/resource (the
// Resource[T] every cilium agent and operator watches Kubernetes through)
// behind two subject interfaces: the proposed resource component's
// (proposed/resource: level-triggered delivery, which no component of
// props can express) and the wire component's (wire.go: the resource over
// client-go's REST stack, against the model server served over HTTP).
//
// A Resource is built as cilium builds one, with resource.New on a hive
// lifecycle (hive's own cell.DefaultLifecycle, started and stopped by the
// adapter as hive.Run does), an informer it makes itself (client-go's
// controller and DeltaFIFO with cilium's Process, resource.go:737-816) and
// one subscriber queue per Events call (resource.go:403-480). The adapters
// only convert cilium's Event[T] to the check's and call Done as the check
// says.
//
// It is a module of its own: cilium brings some 900 packages into the
// build, and it builds on client-go v0.36.4, kverify's packages included
// (clientGo: cilium v1.20.2 does not compile on the main module's v0.37.2).
package cilium

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/cilium/cilium/pkg/k8s/resource"
	"github.com/cilium/hive/cell"
	presource "github.com/kverify/kverify/subjects/cilium/proposed/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
)

// Name is the subject's name in kverify's registry.
const Name = "cilium"

// Version is the cilium release under test.
const Version = "github.com/cilium/cilium@v1.20.2"

// clientGo is the client-go this module builds cilium with: cilium
// v1.20.2's own (its go.mod requires k8s.io/* v0.36.4). Go's minimal
// version selection would lift it to the main module's v0.37.2, on which
// cilium does not compile: client-go v0.37 changed kubernetes.Interface's
// Discovery() to return discovery.DiscoveryInterfaces, while cilium's
// generated clientsets (and apiextensions' and mcs-api's) return
// discovery.DiscoveryInterface, so cilium's composite Clientset, which
// embeds them all, has two Discovery methods
// (pkg/k8s/client/cell.go:80-81), and pkg/k8s/resource imports it through
// pkg/k8s/synced (resource.go:26, synced/cell.go:15). go.mod replaces
// k8s.io/api, apimachinery and client-go with v0.36.4.
const clientGo = "k8s.io/client-go@v0.36.4"

// discard is the lifecycle's logger.
var discard = slog.New(slog.DiscardHandler)

// Level is cilium's Resource[*metav1.PartialObjectMetadata] over the
// check's source, with the default options (no transform, no indexers; a
// subscription's errors always retried with workqueue's default
// controller rate limiter, resource.go:407-410).
func Level() presource.Subject {
	return presource.Subject{New: func(s presource.Setup) (presource.Resource, error) {
		quiet()
		lc := cell.NewDefaultLifecycle(nil, 0, time.Hour)
		r := resource.New[*metav1.PartialObjectMetadata](lc, s.Source, nil, resource.WithName("kverify"))
		return &levelResource{lc: lc, r: r}, nil
	}}
}

// TransformName prefixes the checks of LevelTransformed
// (with-transform/resource/level) in cilium's resource entry.
const TransformName = "with-transform"

// LevelTransformed is Level's resource built with resource.WithTransform,
// the option cilium documents for transforming objects before they are
// stored (resource.go:172-191), here a projection that keeps the
// metadata the check reads and drops the rest, as a memory-saving
// transform does.
func LevelTransformed() presource.Subject {
	project := func(o *metav1.PartialObjectMetadata) (*metav1.PartialObjectMetadata, error) {
		return &metav1.PartialObjectMetadata{TypeMeta: o.TypeMeta, ObjectMeta: metav1.ObjectMeta{
			Name: o.Name, Namespace: o.Namespace, UID: o.UID, ResourceVersion: o.ResourceVersion}}, nil
	}
	return presource.Subject{Name: TransformName, New: func(s presource.Setup) (presource.Resource, error) {
		quiet()
		lc := cell.NewDefaultLifecycle(nil, 0, time.Hour)
		r := resource.New[*metav1.PartialObjectMetadata](lc, s.Source, nil, resource.WithName("kverify"), resource.WithTransform(project))
		return &levelResource{lc: lc, r: r}, nil
	}}
}

// levelResource is a cilium Resource on its lifecycle.
type levelResource struct {
	lc *cell.DefaultLifecycle
	r  resource.Resource[*metav1.PartialObjectMetadata]
}

func (l *levelResource) Start() error { return l.lc.Start(discard, context.Background()) }
func (l *levelResource) Stop() error  { return l.lc.Stop(discard, context.Background()) }

// Subscribe is Events, each event converted as it comes.
func (l *levelResource) Subscribe(ctx context.Context) <-chan presource.Event {
	in := l.r.Events(ctx)
	out := make(chan presource.Event)
	go func() {
		defer close(out)
		for ev := range in {
			out <- convert(ev)
		}
	}()
	return out
}

func convert(ev resource.Event[*metav1.PartialObjectMetadata]) presource.Event {
	out := presource.Event{Key: ev.Key.String(), Object: ev.Object, Done: ev.Done}
	switch ev.Kind {
	case resource.Upsert:
		out.Kind = presource.Upsert
	case resource.Delete:
		out.Kind = presource.Delete
	case resource.Sync:
		out.Kind, out.Key = presource.Sync, ""
	default:
		out.Kind = presource.Kind(255)
	}
	return out
}

var quietOnce sync.Once

// quiet removes apimachinery's HandleError throttle, once per process, as
// the other subjects do: it sleeps minPeriod minus the time since the last
// error, measured from a time.Now() taken at package init
// (k8s.io/apimachinery@v0.36.4/pkg/util/runtime/runtime.go:150-158,255-289),
// which inside a synctest bubble (its clock starts in 2000)
// is a sleep of decades at the informer's first error. Logging policy, not
// the resource's behaviour.
func quiet() {
	quietOnce.Do(func() {
		if len(utilruntime.ErrorHandlers) > 1 {
			utilruntime.ErrorHandlers = utilruntime.ErrorHandlers[:1]
		}
	})
}

// tombstone unwraps client-go's DeletedFinalStateUnknown.
func tombstone(obj any) (any, bool) {
	t, ok := obj.(cache.DeletedFinalStateUnknown)
	return t.Obj, ok
}
