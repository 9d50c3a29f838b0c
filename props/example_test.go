package props_test

import (
	"errors"
	"fmt"

	impl "github.com/kverify/kverify/impl/workqueue"
	"github.com/kverify/kverify/props"
	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/workqueue"
)

// A test in your module runs a component's checks on your implementation:
//
//	func TestConformance(t *testing.T) {
//		props.Run(t, workqueue.Checks(subject))
//	}
//
// Each check is a subtest named after its guarantee; a check the subject
// cannot take part in is skipped with the reason, never failed.
func Example() {
	subject := workqueue.Subject{
		New: func(d workqueue.Deps) workqueue.Queue { return impl.New(impl.Config[string]{Clock: d.Clock}) },
	}
	var checks []props.Check = workqueue.Checks(subject)
	for _, c := range checks[:4] {
		fmt.Printf("%s (%s), not offered: %q\n", c.Name, c.Family, c.NotOffered)
	}
	// Output:
	// queue/drain (model), not offered: ""
	// queue/done-unheld (model), not offered: ""
	// queue/exhaustive (exhaustive), not offered: ""
	// queue/metrics (model), not offered: "the queue does not declare metrics (Subject.Metrics is false; set it when the factories give Deps.Recorder to the queue's metrics provider)"
}

// A subject that breaks a check on purpose declares it, with the reason
// and the source line the behaviour comes from. The declared check must
// then fail (it is reported as a declared divergence, not a failure); a
// declaration that no longer fails is reported stale. Guarantees narrows
// the declaration, so that another bug the same check finds still fails.
func ExampleWithDivergences() {
	d := props.Divergence{
		Check:    "queue/done-unheld",
		Reason:   "Done of an item never handed out requeues it if it was added meanwhile",
		Upstream: "k8s.io/client-go/util/workqueue/queue.go:289-302",
	}
	opt := props.WithDivergences(d) // props.Run(t, checks, opt)
	fmt.Println(opt != nil, d.Check)
	// Output: true queue/done-unheld
}

// A failing check's error is a Violation: the guarantee it broke, the
// detail, and where its shortest counterexample was saved.
func ExampleViolation() {
	err := checkkit.Broke("Fair", "Get returned %q, the model's head is %q", "b", "a")
	var v *props.Violation
	if errors.As(err, &v) {
		fmt.Println(v.Guarantee)
		fmt.Println(v.Detail)
	}
	// Output:
	// Fair
	// Get returned "b", the model's head is "a"
}
