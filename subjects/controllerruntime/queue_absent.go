//go:build controllerruntime_before_v0_20

package controllerruntime

import (
	pwq "github.com/kverify/kverify/props/workqueue"
	"github.com/kverify/kverify/subjects/suite"
)

// queueEntries: before v0.20.0 controller-runtime has no queue of its own
// (pkg/controller/priorityqueue arrived in v0.20.0): its controllers use
// client-go's rate-limiting queue, which the client-go matrix judges.
func queueEntries() []suite.Entry {
	return absentEntries("controller-runtime has no queue of its own before v0.20.0 (pkg/controller/priorityqueue arrived in v0.20.0): its controllers use client-go's rate-limiting queue, judged by the client-go matrix at the release this one requires",
		pwq.Component, pwq.ComponentDelaying, pwq.ComponentRateLimit)
}
