package ours

import (
	"context"

	"github.com/kverify/kverify/impl/retrywatcher"
	prw "github.com/kverify/kverify/props/retrywatcher"
)

// RetryWatcher is impl/retrywatcher as a subject, with its default restart
// period (spec/retrywatcher's) and the real clock, which inside the
// check's bubble is fake.
func RetryWatcher() prw.Subject {
	return prw.Subject{New: func(ctx context.Context, rv string, w prw.Watcher) (prw.Watch, error) {
		return retrywatcher.New(ctx, retrywatcher.Config{InitialRV: rv, Watcher: retrywatcher.WatchFunc(w)})
	}}
}
