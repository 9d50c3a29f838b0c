// Command backoff-step-overflow-negative shows that an uncapped
// wait.Backoff's Duration turns negative once Duration*Factor passes
// math.MaxInt64, and Step then returns negative delays. Backoff's doc
// (k8s.io/apimachinery@v0.37.2 pkg/util/wait/backoff.go:33-34) says "Duration
// is multiplied by factor each iteration, if factor is not zero and the
// limits imposed by Steps and Cap have not been reached" and the Duration
// "Should not be negative" (:35); but delay computes
// time.Duration(float64(duration) * factor) without a guard (backoff.go:110):
// on amd64 the conversion of a float64 >= 2^63 gives math.MinInt64, a
// negative Duration that no positive Cap catches (next > cap is false).
// Sequence: b := wait.Backoff{Duration: time.Second, Factor: 2, Steps: 40};
// b.Step() 35 times: the 35th returns -2562047h47m16.854775808s. (On arm64
// the conversion saturates and the program prints OK.)
package main

import (
	"fmt"
	"os"
	"time"
)

// backoff is the part of wait.Backoff the sequence uses.
type backoff interface {
	Step() time.Duration
}

func main() {
	b := newBackoff(time.Second, 2, 40)
	for i := 1; i <= 40; i++ {
		if d := b.Step(); d < 0 {
			fmt.Printf("DEFECT: Step #%d of Backoff{Duration: 1s, Factor: 2, Steps: 40} returned %v (%dns), a negative delay\n", i, d, int64(d))
			os.Exit(1)
		}
	}
	fmt.Println("OK: 40 Steps of Backoff{Duration: 1s, Factor: 2, Steps: 40} returned no negative delay")
}
