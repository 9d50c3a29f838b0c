package usermodule

import (
	"os"
	"testing"

	"github.com/kverify/kverify/props"
	"github.com/kverify/kverify/props/workqueue"
)

// TestConformance is the README's snippet. USERMODULE_BROKEN=1 checks the
// broken queue instead (TestReplayCommand does, in a child process).
func TestConformance(t *testing.T) {
	newQueue := New
	if os.Getenv("USERMODULE_BROKEN") == "1" {
		newQueue = NewBroken
	}
	subject := workqueue.Subject{
		New: func(d workqueue.Deps) workqueue.Queue { return newQueue() },
	}
	props.Run(t, workqueue.Checks(subject))
}
