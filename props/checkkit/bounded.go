package checkkit

import (
	"errors"
	"fmt"
)

// DrainLimit bounds a check's own loop over what a subject reports (drain
// while Len > 0, pop until closed): a subject whose Len never reaches 0,
// or whose Get hands out items for ever, must not make the check spin,
// since the watchdog would then report the check's loop as the subject's
// hang. No check's scenario queues more than a few thousand items.
const DrainLimit = 100_000

// Unfinished is the error of a check that gave up on one of its own loops:
// it could not finish, so it has no verdict, and the report says so rather
// than that the subject hung (every call of the subject returned). No
// declared divergence covers it.
type Unfinished struct {
	// What the check was doing, and what the subject kept reporting.
	What string
}

func (u *Unfinished) Error() string {
	return "the check could not finish: " + u.What + " (the check's own loop gave up after " + fmt.Sprint(DrainLimit) + " rounds; every call of the subject returned, so this is not a hang of the subject)"
}

// Bounded calls step until it reports done or fails, at most limit times;
// past that it returns an *Unfinished naming what.
func Bounded(limit int, what func() string, step func() (done bool, err error)) error {
	for range limit {
		done, err := step()
		if err != nil || done {
			return err
		}
	}
	return &Unfinished{What: what()}
}

// isUnfinished reports whether err is a check's give-up.
func isUnfinished(err error) bool {
	var u *Unfinished
	return errors.As(err, &u)
}
