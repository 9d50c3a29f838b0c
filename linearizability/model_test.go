package linearizability

import (
	"slices"
	"testing"

	"github.com/anishathalye/porcupine"
	wq "github.com/kverify/kverify/spec/workqueue"
)

// Tiny histories, written by hand. Each op is (client, call, return).

func opOf(c int, call, ret int64, in Input, out Output) porcupine.Operation {
	return porcupine.Operation{ClientId: c, Call: call, Return: ret, Input: in, Output: out}
}
func add(c int, call, ret int64, k string) porcupine.Operation {
	return opOf(c, call, ret, Input{Op: wq.Add, Key: k}, Output{})
}
func done(c int, call, ret int64, k string) porcupine.Operation {
	return opOf(c, call, ret, Input{Op: wq.Done, Key: k}, Output{})
}

// get returns k; k == "" means Get reported shutdown.
func get(c int, call, ret int64, k string) porcupine.Operation {
	return opOf(c, call, ret, Input{Op: wq.Get}, Output{Key: k, Shutdown: k == ""})
}
func length(c int, call, ret int64, n int) porcupine.Operation {
	return opOf(c, call, ret, Input{Op: wq.Len}, Output{N: n})
}
func shutDown(c int, call, ret int64) porcupine.Operation {
	return opOf(c, call, ret, Input{Op: wq.ShutDown}, Output{})
}

const (
	ok      = porcupine.Ok
	illegal = porcupine.Illegal
)

var modelCases = []struct {
	name         string
	fifo, perKey porcupine.CheckResult
	h            []porcupine.Operation
}{
	{"fifo order", ok, ok, []porcupine.Operation{
		add(0, 1, 2, "a"), add(0, 3, 4, "b"), get(1, 5, 6, "a"), get(1, 7, 8, "b")}},
	{"lifo", illegal, ok, []porcupine.Operation{
		add(0, 1, 2, "a"), add(0, 3, 4, "b"), get(1, 5, 6, "b")}},
	{"concurrent adds take either order", ok, ok, []porcupine.Operation{
		add(0, 1, 4, "a"), add(1, 2, 3, "b"), get(2, 5, 6, "b")}},
	{"duplicate get", illegal, illegal, []porcupine.Operation{
		add(0, 1, 2, "a"), get(1, 3, 4, "a"), get(2, 5, 6, "a")}},
	{"concurrent duplicate get", illegal, illegal, []porcupine.Operation{
		add(0, 1, 2, "a"), get(1, 3, 6, "a"), get(2, 4, 5, "a")}},
	{"adds collapse", illegal, illegal, []porcupine.Operation{
		add(0, 1, 2, "a"), add(0, 3, 4, "a"), get(1, 5, 6, "a"), get(1, 7, 8, "a")}},
	{"adds collapse, then shutdown", ok, ok, []porcupine.Operation{
		add(0, 1, 2, "a"), add(0, 3, 4, "a"), shutDown(0, 5, 6), get(1, 7, 8, "a"), get(1, 9, 10, "")}},
	{"re-add while processing comes back after Done", ok, ok, []porcupine.Operation{
		add(0, 1, 2, "a"), get(1, 3, 4, "a"), add(0, 5, 6, "a"), get(2, 7, 12, "a"), done(1, 9, 10, "a")}},
	{"re-add while processing handed out before Done", illegal, illegal, []porcupine.Operation{
		add(0, 1, 2, "a"), get(1, 3, 4, "a"), add(0, 5, 6, "a"), get(2, 7, 8, "a"), done(1, 9, 10, "a")}},
	{"requeue after Done goes to the back", illegal, ok, []porcupine.Operation{
		add(0, 1, 2, "a"), get(1, 3, 4, "a"), add(0, 5, 6, "a"), add(0, 7, 8, "b"), done(1, 9, 10, "a"),
		get(2, 11, 12, "a")}},
	{"requeue after Done, in order", ok, ok, []porcupine.Operation{
		add(0, 1, 2, "a"), get(1, 3, 4, "a"), add(0, 5, 6, "a"), add(0, 7, 8, "b"), done(1, 9, 10, "a"),
		get(2, 11, 12, "b"), get(2, 13, 14, "a")}},
	{"blocked get returns with a later add", ok, ok, []porcupine.Operation{
		get(1, 1, 6, "a"), add(0, 3, 4, "a")}},
	{"get returns an item before it is added", illegal, illegal, []porcupine.Operation{
		get(1, 1, 2, "a"), add(0, 3, 4, "a")}},
	{"get reports shutdown before ShutDown", illegal, illegal, []porcupine.Operation{
		get(1, 1, 2, ""), shutDown(0, 3, 4)}},
	{"get reports shutdown during ShutDown", ok, ok, []porcupine.Operation{
		get(1, 1, 4, ""), shutDown(0, 2, 3)}},
	{"get reports shutdown with an item queued", illegal, illegal, []porcupine.Operation{
		add(0, 1, 2, "a"), shutDown(0, 3, 4), get(1, 5, 6, "")}},
	{"add after shutdown is ignored", ok, ok, []porcupine.Operation{
		shutDown(0, 1, 2), add(0, 3, 4, "a"), get(1, 5, 6, "")}},
	{"len counts the fifo", ok, ok, []porcupine.Operation{
		add(0, 1, 2, "a"), add(0, 3, 4, "b"), get(1, 5, 6, "a"), add(0, 7, 8, "a"), length(1, 9, 10, 1)}}, // a is processing, not queued
	{"len miscounts", illegal, ok, []porcupine.Operation{
		add(0, 1, 2, "a"), add(0, 3, 4, "b"), length(1, 5, 6, 1)}},
	{"len zero with an item queued", illegal, illegal, []porcupine.Operation{
		add(0, 1, 2, "a"), length(1, 3, 4, 0)}},
	{"len zero while the item is processed", ok, ok, []porcupine.Operation{
		add(0, 1, 2, "a"), get(1, 3, 4, "a"), add(0, 5, 6, "a"), length(1, 7, 8, 0)}},
	{"done of an item not processed is a no-op", illegal, illegal, []porcupine.Operation{
		add(0, 1, 2, "a"), done(0, 3, 4, "a"), get(1, 5, 6, "a"), get(1, 7, 8, "a")}},
	{"drain is not supported", illegal, illegal, []porcupine.Operation{
		opOf(0, 1, 2, Input{Op: wq.ShutDownWithDrain}, Output{})}},
}

func TestModels(t *testing.T) {
	for _, c := range modelCases {
		t.Run(c.name, func(t *testing.T) {
			for _, m := range []struct {
				name  string
				model porcupine.Model
				want  porcupine.CheckResult
			}{{"fifo", QueueModel(), c.fifo}, {"per-key", PerKeyModel(), c.perKey}} {
				if got, _ := CheckSteps(m.model, c.h, DefaultSteps); got != m.want {
					t.Errorf("%s model: %s, want %s", m.name, got, m.want)
				}
			}
		})
	}
}

func TestPartitionByKey(t *testing.T) {
	h := []porcupine.Operation{
		add(0, 1, 2, "a"), add(0, 3, 4, "b"), get(1, 5, 6, "a"), length(1, 7, 8, 1), length(1, 9, 10, 0),
		done(1, 11, 12, "a"), shutDown(0, 13, 14), get(1, 15, 16, "b"), get(1, 17, 18, ""),
	}
	parts := partitionByKey(h)
	calls := func(p []porcupine.Operation) []int64 {
		var cs []int64
		for _, op := range p {
			cs = append(cs, op.Call)
		}
		slices.Sort(cs)
		return cs
	}
	// global: Len 0 (9), ShutDown (13), Get -> shutdown (17); Len 1 dropped.
	want := [][]int64{{1, 5, 9, 11, 13, 17}, {3, 9, 13, 15, 17}}
	if len(parts) != len(want) {
		t.Fatalf("%d partitions, want %d", len(parts), len(want))
	}
	for i := range want {
		if got := calls(parts[i]); !slices.Equal(got, want[i]) {
			t.Errorf("partition %d: calls %v, want %v", i, got, want[i])
		}
	}
	if parts := partitionByKey([]porcupine.Operation{shutDown(0, 1, 2)}); len(parts) != 1 || len(parts[0]) != 1 {
		t.Errorf("a history without keys: %v, want one partition", parts)
	}
}

// The per-key model describes its state by key.
func TestDescribePerKey(t *testing.T) {
	m := wq.Model{}
	m, _ = m.Step(wq.Op{Kind: wq.Add, Key: "a"})
	if got := describePerKey(newState(m)); got != "a: dirty" {
		t.Errorf("after Add: %q", got)
	}
	m, _ = m.Step(wq.Op{Kind: wq.Get})
	m, _ = m.Step(wq.Op{Kind: wq.Add, Key: "a"})
	m, _ = m.Step(wq.Op{Kind: wq.ShutDown})
	if got := describePerKey(newState(m)); got != "a: processing+dirty, shut down" {
		t.Errorf("after Get, Add, ShutDown: %q", got)
	}
	if got := describePerKey(newState(wq.Model{})); got != "clean" {
		t.Errorf("initial: %q", got)
	}
}
