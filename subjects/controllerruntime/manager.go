//go:build controllerruntime_before_v0_21 && !controllerruntime_before_v0_15

package controllerruntime

import (
	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// managerStub is the manager NewUnmanaged takes before v0.21.0. It reads
// only GetLogger and GetControllerOptions (v0.15.3 to v0.20.4
// pkg/controller/controller.go NewUnmanaged: the logger for the
// controller's log, the manager-wide defaults for options left unset), so
// the stub answers those two, with a discarding logger and no defaults;
// any other method would panic on the nil embedded Manager, which no
// release here calls.
type managerStub struct{ manager.Manager }

func (managerStub) GetLogger() logr.Logger                  { return logr.Discard() }
func (managerStub) GetControllerOptions() config.Controller { return config.Controller{} }
