package realapi

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kverify/kverify/spec/apiserver"
	"github.com/kverify/kverify/traces"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
)

// Scenarios are the fidelity scenarios: the behaviours a reflector relies
// on, run against the real stack and recorded as traces in
// spec/apiserver/testdata/realapi, where spec/apiserver's fidelity test
// replays them against the model without etcd. Keys are namespaced
// (ConfigMaps are), and created so that key order and version order
// differ.
var Scenarios = []struct {
	Name string
	Ops  []string
}{
	{"initial-events", []string{
		"Create(ns/c)", "Create(ns/b)", "Create(ns/a)", "Update(ns/c)",
		"Watch(rv= sie=true bookmarks)",                    // sendInitialEvents needs match=NotOlderThan
		"Watch(rv= sie=true match=NotOlderThan bookmarks)", // a watch-list stream: key order, then the end bookmark
		"Watch(rv=0 bookmarks)",                            // defaulted to a watch-list by the gate
		"Watch(rv=)",                                       // defaulted too, but no bookmark without bookmarks
		"Watch(rv=3 sie=true match=NotOlderThan bookmarks)",
		"Watch(rv=3)",                     // a replay in version order
		"Watch(rv=0 sie=false bookmarks)", // no initial events
	}},
	{"gate-off", []string{
		"WatchListGate(false)",
		"Create(ns/c)", "Create(ns/b)", "Create(ns/a)",
		"Watch(rv=0 bookmarks)",                            // legacy: the state in key order, no end bookmark
		"Watch(rv= sie=true match=NotOlderThan bookmarks)", // refused
		"List(rv=0)",
	}},
	{"deletes", []string{
		"Create(ns/a)", "Create(ns/b)", "Delete(ns/a)", "Create(ns/a)", "Delete(ns/b)",
		"Watch(rv=1)", "Watch(rv=3)", "List(rv=)",
	}},
	{"expired", []string{
		"Create(ns/a)", "Create(ns/b)", "Update(ns/a)", "Compact", "Update(ns/b)",
		"Watch(rv=2)",            // older than the restarted watch cache: 410
		"List(rv=2 match=Exact)", // an exact read at a compacted version: 410
		"List(rv=2 match=NotOlderThan)",
		"Watch(rv=4)",
		"Watch(rv=2 sie=true match=NotOlderThan bookmarks)",
	}},
	{"paging", []string{
		"Create(ns/e)", "Create(ns/d)", "Create(ns/c)", "Create(ns/b)", "Create(ns/a)",
		"List(rv=0 limit=2)", // the watch cache ignores the limit at "0"
		"List(rv= limit=2)", "List(rv= limit=2 continue)", "Update(ns/a)", "List(rv= limit=2 continue)",
		"List(rv=3 limit=2)", "List(rv=3 match=NotOlderThan limit=2)",
	}},
	{"too-large", []string{
		"Create(ns/a)",
		"List(rv=100)", "List(rv=100 match=NotOlderThan)", "List(rv=100 match=Exact)",
		"Watch(rv=100 sie=true match=NotOlderThan bookmarks)",
		"Watch(rv=100)",
	}},
	{"invalid", []string{
		"Create(ns/a)",
		"List(rv= match=Exact)", "List(rv=0 match=Exact)", "List(rv= sie=true)",
		"Watch(rv=2 sie=true bookmarks)", "List(rv=x)",
		"Watch(rv=x)", "List(rv=-1)", "Watch(rv=-1)", // 400 on a LIST, 500 on a WATCH (kubernetes#139485)
	}},
}

// fidelityDir is where the recordings live, in the main module.
const fidelityDir = "../spec/apiserver/testdata/realapi"

// TestFidelityRecordings runs every scenario against the real stack. With
// REALAPI_RECORD=1 it writes the answers as traces; otherwise it fails when
// the real stack no longer answers as recorded (so the committed
// recordings, which the model is checked against, stay true).
func TestFidelityRecordings(t *testing.T) {
	record := os.Getenv("REALAPI_RECORD") == "1"
	for _, sc := range Scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			steps, err := apiserver.ParseScript(sc.Ops)
			if err != nil {
				t.Fatal(err)
			}
			got := runReal(t, steps)
			tr := &traces.Trace{Component: "apiserver", Check: "fidelity/" + sc.Name,
				Subject: "kube-apiserver v0.37.2 storage (etcd3 store, watch cache) over etcd v3.7.0"}
			for i, s := range steps {
				tr.Steps = append(tr.Steps, traces.Step{Op: s.String(), Got: got[i]})
			}
			path := filepath.Join(fidelityDir, sc.Name+".json")
			if record {
				if err := os.MkdirAll(fidelityDir, 0o755); err != nil {
					t.Fatal(err)
				}
				data, err := traces.Encode(tr)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, data, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := traces.Read(path)
			if err != nil {
				t.Fatalf("%v (record with REALAPI_RECORD=1 go test -run TestFidelityRecordings)", err)
			}
			for i := range tr.Steps {
				if i >= len(want.Steps) || want.Steps[i] != tr.Steps[i] {
					t.Errorf("the real stack's answers changed since %s was recorded:\nrecorded %+v\nnow      %+v", path, want.Steps, tr.Steps)
					break
				}
			}
		})
	}
}

// runReal runs steps against a fresh etcd and stack and returns the
// normalised answers, in spec/apiserver's notation.
func runReal(t *testing.T, steps []apiserver.Step) []string {
	gate := true
	if len(steps) > 0 && steps[0].Kind == apiserver.GateStep {
		gate = steps[0].Gate
	}
	v := newEnv(t, gate)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out := make([]string, len(steps))
	prev, updates := "", 0
	for i, st := range steps {
		ns, name, _ := strings.Cut(st.Key, "/")
		switch st.Kind {
		case apiserver.GateStep:
			out[i] = fmt.Sprintf("WatchList=%t", gate)
		case apiserver.CreateStep:
			rv, err := v.stack.Create(ctx, ns, name, nil)
			out[i] = rvOr(rv, err)
		case apiserver.UpdateStep:
			updates++
			rv, err := v.stack.Update(ctx, ns, name, "n", strconv.Itoa(updates))
			out[i] = rvOr(rv, err)
		case apiserver.DeleteStep:
			rv, err := v.stack.DeleteRV(ctx, ns, name)
			out[i] = rvOr(rv, err)
		case apiserver.CompactStep:
			rev, err := v.stack.Compact(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// The watch cache forgets history by restarting after the
			// compaction, as an apiserver restart does.
			v.stack.Close()
			s, err := NewStack(ctx, v.etcd.Endpoint())
			if err != nil {
				t.Fatal(err)
			}
			v.stack = s
			v.lw.SetStack(s)
			out[i] = fmt.Sprintf("compacted at %d", rev)
		case apiserver.ListStep:
			v.fresh(ctx)
			opts := st.Opts
			if st.ContinuePrev {
				opts.Continue = prev
			}
			list, err := v.lw.ListWithContext(ctx, opts)
			if err != nil {
				out[i] = apiserver.Outcome(err)
				continue
			}
			prev = list.(*corev1.ConfigMapList).Continue
			out[i] = apiserver.ListOutcome(list)
		case apiserver.WatchStep:
			v.fresh(ctx)
			w, err := v.lw.WatchWithContext(ctx, st.Opts)
			if err != nil {
				out[i] = apiserver.Outcome(err)
				continue
			}
			out[i] = apiserver.WatchOutcome(readQuiet(w))
			w.Stop()
		}
	}
	return out
}

func rvOr(rv string, err error) string {
	if err != nil {
		return apiserver.Outcome(err)
	}
	return "rv=" + rv
}

// fresh waits until the watch cache has every write: a consistent LIST
// from the cache waits for it (not recorded).
func (v *env) fresh(ctx context.Context) {
	v.t.Helper()
	if err := v.stack.deleg.GetList(ctx, Prefix, storage.ListOptions{Recursive: true, Predicate: storage.Everything}, newCMList()); err != nil {
		v.t.Fatalf("consistent read: %v", err)
	}
}

// Reading a watch until it is quiet: the real stack has no end of stream
// for a watch, so a reader waits for the first event for up to
// firstEvent (past the watch cache's 3 s wait for a too-large version),
// and after each event for up to quiet; an end bookmark or an ERROR ends
// the read after one more quiet period.
const (
	firstEvent = 4500 * time.Millisecond
	quiet      = 500 * time.Millisecond
)

func readQuiet(w watch.Interface) []watch.Event {
	var events []watch.Event
	wait := firstEvent
	for {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				return events
			}
			events = append(events, e)
			wait = quiet
		case <-time.After(wait):
			return events
		}
	}
}
