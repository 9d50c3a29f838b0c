package workqueue

import "github.com/kverify/kverify/props"

// delayingChecks returns the delaying queue checks; none without NewDelaying.
func delayingChecks(s Subject) []props.Check { return nil }
