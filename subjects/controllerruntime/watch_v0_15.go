//go:build controllerruntime_before_v0_18 && !controllerruntime_before_v0_15

package controllerruntime

import (
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// watch attaches h to inf before v0.18: Watch takes the source and the
// handler.
func watch(ctrl controller.Controller, inf cache.SharedIndexInformer, h handler.Funcs) error {
	return ctrl.Watch(&source.Informer{Informer: inf}, h)
}
