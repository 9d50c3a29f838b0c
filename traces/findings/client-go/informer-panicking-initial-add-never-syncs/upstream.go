//go:build !kverify_ours

package main

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// newInformer is cache.NewSharedIndexInformer for
// *metav1.PartialObjectMetadata, without resync.
func newInformer(lw *fakeLW) informer {
	return upstreamInformer{cache.NewSharedIndexInformer(lw, &metav1.PartialObjectMetadata{}, 0, cache.Indexers{})}
}

// upstreamInformer returns AddEventHandler's registration as the local
// interface.
type upstreamInformer struct{ cache.SharedIndexInformer }

func (i upstreamInformer) AddEventHandler(h cache.ResourceEventHandler) (registration, error) {
	return i.SharedIndexInformer.AddEventHandler(h)
}
