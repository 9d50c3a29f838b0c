//go:build !kverify_ours

package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/cilium/cilium/pkg/k8s/resource"
	"github.com/cilium/hive/cell"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// start runs a cilium Resource of PartialObjectMetadata over lw, built
// with WithTransform (a projection to the metadata it keeps, as a
// memory-saving transform does), on a hive lifecycle, and one
// subscription that calls onDelete with the key of every Delete.
func start(ctx context.Context, lw *server, onDelete func(key string)) (held func() bool, stop func(), err error) {
	project := func(o *metav1.PartialObjectMetadata) (*metav1.PartialObjectMetadata, error) {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Name: o.Name, Namespace: o.Namespace, UID: o.UID, ResourceVersion: o.ResourceVersion}}, nil
	}
	log := slog.New(slog.DiscardHandler)
	lc := cell.NewDefaultLifecycle(nil, 0, time.Hour)
	r := resource.New[*metav1.PartialObjectMetadata](lc, lw, nil, resource.WithTransform(project))
	events := r.Events(ctx)
	if err := lc.Start(log, ctx); err != nil {
		return nil, nil, err
	}
	go func() {
		for ev := range events {
			if ev.Kind == resource.Delete {
				onDelete(ev.Key.String())
			}
			ev.Done(nil)
		}
	}()
	held = func() bool {
		st, err := r.Store(ctx)
		if err != nil {
			return false
		}
		_, ok, _ := st.GetByKey(resource.Key{Namespace: "default", Name: "o1"})
		return ok
	}
	return held, func() { _ = lc.Stop(log, context.Background()) }, nil
}
