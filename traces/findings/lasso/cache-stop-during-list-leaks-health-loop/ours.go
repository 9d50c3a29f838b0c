//go:build kverify_ours

package main

import (
	"context"

	"github.com/kverify/kverify/impl/informer"
	"github.com/kverify/kverify/impl/reflector"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// startCache starts kverify's informer of ConfigMaps over client-go's
// REST client, listing rather than streaming, until ctx ends.
func startCache(ctx context.Context, url string) error {
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: url})
	if err != nil {
		return err
	}
	lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "configmaps", "", fields.Everything())
	inf, err := informer.NewInformer(lw, informer.InformerOptions{Reflector: reflector.Options{
		Name: "repro", ExpectedType: &corev1.ConfigMap{}, WatchList: reflector.WatchListOff}})
	if err != nil {
		return err
	}
	go inf.Run(ctx)
	return nil
}
