//go:build controllerruntime_before_v0_19 && !controllerruntime_before_v0_18

package controllerruntime

import (
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// watch attaches h to inf on v0.18: the source carries its handler.
func watch(ctrl controller.Controller, inf cache.SharedIndexInformer, h handler.Funcs) error {
	return ctrl.Watch(&source.Informer{Informer: inf, Handler: h})
}
