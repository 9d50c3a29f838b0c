package linearizability

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/anishathalye/porcupine"
	wq "github.com/kverify/kverify/spec/workqueue"
)

// Queue is the part of a work queue the workload uses. The queues of
// props/workqueue and client-go satisfy it as they are.
type Queue interface {
	Add(item string)
	Get() (item string, shutdown bool)
	Done(item string)
	Len() int
	ShutDown()
}

// Recorder records a concurrent history. Timestamps come from one atomic
// logical clock, read just before a call and just after it returns, so an
// operation's [Call, Return] interval contains the moment it took effect,
// and an operation that returned before another was called has a smaller
// Return than the other's Call. A Recorder is safe for concurrent use; its
// zero value is ready.
type Recorder struct {
	callLog[Input, Output]

	// Observe, if set before the first call, is called after every
	// recorded call returns (from the caller's goroutine): a heartbeat
	// for a watchdog.
	Observe func(porcupine.Operation)
}

// Record runs call on behalf of client and records it with input in.
func (r *Recorder) Record(client int, in Input, call func() Output) Output {
	return r.record(client, in, call, r.Observe)
}

// InFlight describes the calls that have started and not returned, one
// per client: "client 3: Get()", in client order.
func (r *Recorder) InFlight() []string { return r.inFlight() }

// History returns a copy of the operations recorded so far, ordered by
// call time.
func (r *Recorder) History() []porcupine.Operation { return r.history() }

// callLog is the core of Recorder and FIFORecorder: a logical clock and
// the calls, with inputs I and outputs O, recorded and in flight. Its zero
// value is ready; it is safe for concurrent use.
type callLog[I fmt.Stringer, O any] struct {
	clk      atomic.Int64
	mu       sync.Mutex
	ops      []porcupine.Operation
	inflight map[int]I // client -> the call it is in
}

// record runs call on behalf of client, records it with input in, and
// then, if observe is not nil, passes the operation to it.
func (l *callLog[I, O]) record(client int, in I, call func() O, observe func(porcupine.Operation)) O {
	l.mu.Lock()
	if l.inflight == nil {
		l.inflight = map[int]I{}
	}
	l.inflight[client] = in
	l.mu.Unlock()
	start := l.clk.Add(1)
	out := call()
	end := l.clk.Add(1)
	op := porcupine.Operation{ClientId: client, Input: in, Call: start, Output: out, Return: end}
	l.mu.Lock()
	delete(l.inflight, client)
	l.ops = append(l.ops, op)
	l.mu.Unlock()
	if observe != nil {
		observe(op)
	}
	return out
}

// inFlight describes the calls in flight, "client 3: <input>", in client
// order.
func (l *callLog[I, O]) inFlight() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	cs := make([]int, 0, len(l.inflight))
	for c := range l.inflight {
		cs = append(cs, c)
	}
	slices.Sort(cs)
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = fmt.Sprintf("client %d: %s", c, l.inflight[c])
	}
	return out
}

// history returns a copy of the operations recorded so far, by call time.
func (l *callLog[I, O]) history() []porcupine.Operation {
	l.mu.Lock()
	h := slices.Clone(l.ops)
	l.mu.Unlock()
	slices.SortFunc(h, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	return h
}

// Client returns q as seen by one client: every call through it is
// recorded under client id. Use one Client per goroutine.
func (r *Recorder) Client(q Queue, id int) *Client { return &Client{r: r, q: q, id: id} }

// Client is a recording view of a queue for one goroutine.
type Client struct {
	r  *Recorder
	q  Queue
	id int
}

// Add calls Add(key) and records it.
func (c *Client) Add(key string) {
	c.r.Record(c.id, Input{Op: wq.Add, Key: key}, func() Output { c.q.Add(key); return Output{} })
}

// Get calls Get and records it.
func (c *Client) Get() (string, bool) {
	o := c.r.Record(c.id, Input{Op: wq.Get}, func() Output {
		k, shut := c.q.Get()
		return Output{Key: k, Shutdown: shut}
	})
	return o.Key, o.Shutdown
}

// Done calls Done(key) and records it.
func (c *Client) Done(key string) {
	c.r.Record(c.id, Input{Op: wq.Done, Key: key}, func() Output { c.q.Done(key); return Output{} })
}

// Len calls Len and records it.
func (c *Client) Len() int {
	return c.r.Record(c.id, Input{Op: wq.Len}, func() Output { return Output{N: c.q.Len()} }).N
}

// ShutDown calls ShutDown and records it.
func (c *Client) ShutDown() {
	c.r.Record(c.id, Input{Op: wq.ShutDown}, func() Output { c.q.ShutDown(); return Output{} })
}

// Now is the recorder's logical clock: every call recorded later has a
// larger Call, every call that returned before has a smaller Return.
func (r *Recorder) Now() int64 { return r.clk.Load() }
