package workqueue

import (
	"fmt"
	"slices"
	"sync"

	"github.com/kverify/kverify/props/checkkit"
)

// CheckOrder checks a queue's use of its pluggable storage.
const CheckOrder = "queue/order"

// Order is a queue's pluggable storage, client-go's Queue[T] interface
// (TypedQueueConfig.Queue) and our Order[T]: the queue keeps in it the
// items waiting to be handed out. It calls Push for an item that becomes
// queued, Touch when an Add finds the item already queued (an Add that
// collapses), Pop for Get and Len to see whether anything waits. All calls
// are made with the queue's lock held.
type Order interface {
	Touch(item string)
	Push(item string)
	Len() int
	Pop() string
}

// orderCalls counts the calls of a recordingOrder.
type orderCalls struct {
	push, pop int
	touched   []string
}

// recordingOrder is a FIFO that records every call and flags calls that no
// queue may make: Touch or Pop of an item it does not hold, Push of one it
// holds, Pop when empty.
type recordingOrder struct {
	mu      sync.Mutex
	items   []string
	calls   orderCalls
	misuses []string
}

func (o *recordingOrder) Touch(item string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls.touched = append(o.calls.touched, item)
	if !slices.Contains(o.items, item) {
		o.misuses = append(o.misuses, fmt.Sprintf("Touch(%s) of an item that is not queued", item))
	}
}

func (o *recordingOrder) Push(item string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls.push++
	if slices.Contains(o.items, item) {
		o.misuses = append(o.misuses, fmt.Sprintf("Push(%s) of an item that is already queued", item))
	}
	o.items = append(o.items, item)
}

func (o *recordingOrder) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.items)
}

func (o *recordingOrder) Pop() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls.pop++
	if len(o.items) == 0 {
		o.misuses = append(o.misuses, "Pop of an empty order")
		return ""
	}
	item := o.items[0]
	o.items = o.items[1:]
	return item
}

// take returns the calls and misuses since the last take.
func (o *recordingOrder) take() (orderCalls, []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	c, m := o.calls, o.misuses
	o.calls, o.misuses = orderCalls{}, nil
	return c, m
}

// expectOrder is what a queue machine expects of the order hook across
// one step.
type expectOrder struct {
	push, pop int
	touched   []string
}

// checkOrder compares the calls the order saw during a step with what the
// model says: a Push for every item that became queued (Add of a clean
// item, Done of a re-added one), a Touch exactly for every Add that
// collapsed into a queued item, a Pop for every item handed out.
func (x *machine) checkOrder(step string) error {
	if x.order == nil {
		return nil
	}
	got, misuses := x.order.take()
	want := x.wantOrder
	x.wantOrder = expectOrder{}
	if len(misuses) > 0 {
		return checkkit.Broke(GOrder, "during %s: %s", step, misuses[0])
	}
	switch {
	case !slices.Equal(got.touched, want.touched):
		return checkkit.Broke(GOrder, "during %s: Touch called for %v, want %v (exactly the Adds that found their item queued)", step, got.touched, want.touched)
	case got.push != want.push:
		return checkkit.Broke(GOrder, "during %s: %d Push call(s), want %d (one per item that became queued)", step, got.push, want.push)
	case got.pop != want.pop:
		return checkkit.Broke(GOrder, "during %s: %d Pop call(s), want %d (one per item handed out)", step, got.pop, want.pop)
	}
	return nil
}
