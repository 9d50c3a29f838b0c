package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("report.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("report.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("report.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validate(t *testing.T, s *jsonschema.Schema, data []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// sampleResults are suite results of every kind, with the output each
// kind carries.
func sampleResults() []*result {
	mk := func(check, status, out string) *result {
		r := &result{Component: "workqueue", Subject: "ours", Check: check, Status: status, Elapsed: 1500 * time.Millisecond}
		r.Output.WriteString(out)
		return r
	}
	return []*result{
		mk("queue/drain", "pass", ""),
		mk("queue/model", "fail", "    model check queue/model: broke Fair FIFO order: got b, want a\ncounterexample (steps)\nsaved: /tmp/kv/workqueue-queue-model-ours.json (replay: kverify replay /tmp/kv/workqueue-queue-model-ours.json)\n"),
		mk("queue/metrics", "not-offered", "    props.go:1: "+checkkit.NotOfferedPrefix+": the queue does not declare metrics\n"),
		mk("queue/race", "divergence", "    "+checkkit.DivergencePrefix+": queue/race\n  reason: client-go does X\n  upstream: queue.go:1\n  observed: broke Linearizable: history\n"),
		mk("queue/leak", "not-run", "kverify: the check got no result\n"),
	}
}

// TestReportSchema: a report with every kind of result and a mutant
// matrix validates against report.schema.json, and the schema rejects
// what it must (an unknown result, a missing field). With
// KVERIFY_VALIDATE_REPORT=FILE it validates that report instead (.ci/run
// does, for the gate's own --json output).
func TestReportSchema(t *testing.T) {
	s := compileSchema(t)
	if path := os.Getenv("KVERIFY_VALIDATE_REPORT"); path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(t, s, data); err != nil {
			t.Fatalf("%s does not validate against report.schema.json: %v", path, err)
		}
		return
	}
	rep := newReport("verify", []string{"--subject", "ours"}, true, "/tmp/kv")
	info := map[string]checkkit.Check{"workqueue/queue/model": {Family: checkkit.FamilyModel, Guarantee: "fair FIFO"}}
	for _, r := range sampleResults() {
		rep.Checks = append(rep.Checks, checkFrom(r, info))
	}
	rep.Mutants = append(rep.Mutants,
		mutantReport{ID: "wq-lifo", Component: "workqueue", File: "impl/ring/growing.go", Bug: "pops the newest", Result: "killed", Kills: 1, Runs: 1, MedianTTK: 0.1, WorstTTK: 0.1, KilledBy: []string{"queue/drain"}},
		mutantReport{ID: "wq-x", Component: "workqueue", File: "impl/workqueue/queue.go", Bug: "b", Result: "broken", Runs: 0, KilledBy: []string{}, Error: "build failed"})
	rep.TimeToKill = &ttkReport{Median: 0.1, P90: 0.2, Worst: 0.3}
	rep.Problems = append(rep.Problems, "queue/model failed")
	dir := t.TempDir()
	jsonPath, mdPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.md")
	rf := reportFlags{json: jsonPath, markdown: mdPath}
	if !rf.save(rep, os.Stderr) {
		t.Fatal("save failed")
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(t, s, data); err != nil {
		t.Fatalf("the report does not validate: %v\n%s", err, data)
	}
	var back report
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	want := map[string]checkReport{
		"queue/model":   {Result: "fail", Broke: "Fair FIFO order", Trace: "/tmp/kv/workqueue-queue-model-ours.json", Family: checkkit.FamilyModel},
		"queue/metrics": {Result: "not-offered", Reason: "the queue does not declare metrics"},
		"queue/race":    {Result: "divergence", Reason: "client-go does X", Broke: "Linearizable"},
		"queue/leak":    {Result: "not-run"},
	}
	for _, c := range back.Checks {
		w, ok := want[c.Check]
		if !ok {
			continue
		}
		if c.Result != w.Result || c.Reason != w.Reason || c.Broke != w.Broke || c.Trace != w.Trace || (w.Family != "" && c.Family != w.Family) {
			t.Errorf("%s: got result=%q reason=%q broke=%q trace=%q family=%q, want %+v", c.Check, c.Result, c.Reason, c.Broke, c.Trace, c.Family, w)
		}
	}
	md, err := os.ReadFile(mdPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, frag := range []string{"## kverify verify: FAILED", "| workqueue | ours | 1 | 1 | 1 | 1 | 1 |", "### FAIL workqueue/queue/model (ours)", "kverify replay /tmp/kv/workqueue-queue-model-ours.json", "declared divergence workqueue/queue/race", "2 mutants: 1 killed, 0 survived, 0 flaky, 1 broken."} {
		if !strings.Contains(string(md), frag) {
			t.Errorf("the Markdown summary lacks %q:\n%s", frag, md)
		}
	}

	// The schema is not vacuous.
	for name, mutate := range map[string]func(m map[string]any){
		"unknown result": func(m map[string]any) { m["checks"].([]any)[0].(map[string]any)["result"] = "ok" },
		"no passed":      func(m map[string]any) { delete(m, "passed") },
		"wrong format":   func(m map[string]any) { m["format"] = "kverify-report/v0" },
		"extra field":    func(m map[string]any) { m["verdict"] = "pass" },
	} {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		mutate(m)
		bad, _ := json.Marshal(m)
		if validate(t, s, bad) == nil {
			t.Errorf("the schema accepts a report with %s", name)
		}
	}
}
