package workqueue_test

import (
	pwq "github.com/kverify/kverify/props/workqueue"
	"github.com/kverify/kverify/subjects/ours"
)

// Our queues for the internal reach tests (reach_test.go's reachSubject),
// which cannot import subjects/ours themselves: it imports this package.
func init() { pwq.SetReachSubject(ours.Workqueue) }
