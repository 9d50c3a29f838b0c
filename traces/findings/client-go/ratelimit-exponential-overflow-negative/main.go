// Command ratelimit-exponential-overflow-negative shows that
// ItemExponentialFailureRateLimiter returns a negative delay when
// baseDelay*2^failures is exactly 2^63ns. When computes the product in
// float64 and guards only backoff > math.MaxInt64 (k8s.io/client-go@v0.37.2
// util/workqueue/default_rate_limiters.go:123-128, commented "The backoff is
// capped such that 'calculated' value never overflows"); float64(MaxInt64)
// is 2^63, so a product of exactly 2^63 passes the guard and
// time.Duration(2^63) is math.MinInt64 on amd64, which is below maxDelay and
// returned. The limiter's doc (:82) promises "baseDelay*2^<num-failures>"
// limited by maxDelay. Sequence: l := workqueue.NewItemExponentialFailureRateLimiter(time.Nanosecond, 1000*time.Second);
// l.When("a") 64 times: the 64th returns -2562047h47m16.854775808s.
package main

import (
	"fmt"
	"os"
	"time"
)

// limiter is the part of workqueue.RateLimiter the sequence uses.
type limiter interface {
	When(item interface{}) time.Duration
}

func main() {
	const max = 1000 * time.Second
	l := newLimiter(time.Nanosecond, max)
	for i := 1; i <= 64; i++ {
		d := l.When("a")
		if d < 0 || d > max {
			fmt.Printf("DEFECT: When #%d of ItemExponentialFailureRateLimiter(1ns, 1000s) returned %v (%dns), outside [0, 1000s]\n", i, d, int64(d))
			os.Exit(1)
		}
		if i == 64 && d != max {
			fmt.Printf("DEFECT: When #64 returned %v, want the max delay 1000s\n", d)
			os.Exit(1)
		}
	}
	fmt.Println("OK: all 64 delays of ItemExponentialFailureRateLimiter(1ns, 1000s) were in [0, 1000s], the 64th the max")
}
