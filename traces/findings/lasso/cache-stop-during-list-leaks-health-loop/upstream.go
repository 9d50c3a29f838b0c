//go:build !kverify_ours

package main

import (
	"context"

	"github.com/rancher/lasso/pkg/cache"
	"github.com/rancher/lasso/pkg/client"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// startCache starts a lasso cache of ConfigMaps, as a wrangler application
// does (through its SharedCacheFactory), listing rather than streaming.
func startCache(ctx context.Context, url string) error {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return err
	}
	clients, err := client.NewSharedClientFactory(&rest.Config{Host: url}, &client.SharedClientFactoryOptions{Scheme: scheme})
	if err != nil {
		return err
	}
	caches := cache.NewSharedCachedFactory(clients, &cache.SharedCacheFactoryOptions{DefaultDisableWatchList: true})
	if _, err := caches.ForResourceKind(corev1.SchemeGroupVersion.WithResource("configmaps"), "ConfigMap", true); err != nil {
		return err
	}
	return caches.Start(ctx)
}
