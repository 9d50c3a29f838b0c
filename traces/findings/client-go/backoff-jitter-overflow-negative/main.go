// Command backoff-jitter-overflow-negative shows that wait.Backoff.Step (and
// wait.Jitter under it) returns a negative delay for a large Duration.
// wait.Jitter's doc (k8s.io/apimachinery@v0.37.2 pkg/util/wait/wait.go:87-88)
// says it "returns a time.Duration between duration and duration + maxFactor *
// duration", and Backoff.Jitter's (backoff.go:38-40) "The sleep at each
// iteration is the duration plus an additional amount chosen uniformly at
// random from the interval between zero and jitter*duration"; but Jitter adds
// duration + time.Duration(rand*maxFactor*duration) in int64 without a guard
// (wait.go:96), so the sum wraps around. Sequence:
// b := wait.Backoff{Duration: math.MaxInt64, Jitter: 1}; b.Step(): a negative
// delay for any random number above about 2e-19 (every draw in practice; the
// program tries three).
package main

import (
	"fmt"
	"math"
	"os"
	"time"
)

// backoff is the part of wait.Backoff the sequence uses.
type backoff interface {
	Step() time.Duration
}

func main() {
	b := newBackoff(time.Duration(math.MaxInt64), 1.0)
	for i := 1; i <= 3; i++ {
		if d := b.Step(); d < 0 {
			fmt.Printf("DEFECT: Step #%d of Backoff{Duration: math.MaxInt64, Jitter: 1} returned %v (%dns), a negative delay\n", i, d, int64(d))
			os.Exit(1)
		}
	}
	fmt.Println("OK: 3 Steps of Backoff{Duration: math.MaxInt64, Jitter: 1} returned no negative delay")
}
