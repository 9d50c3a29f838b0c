package traces

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

const goodVector = `{"format":"kverify-vector/v1","component":"ring","profile":"doubling","params":{"initial":0},"seed":3,"check":"ring/fifo","guarantees":["FIFO"],"steps":2}
{"op":"Write","value":"v0"}
{"op":"Read","want":{"value":"v0","ok":true}}
`

// goodFIFOVector has every list-valued field: a Replace's objects and
// known objects, and popped deltas with a tombstone (one without a last
// state too), a ReplacedAll's objects, a Bookmark and a SyncAll.
const goodFIFOVector = `{"format":"kverify-vector/v1","component":"realfifo","profile":"client-go","params":{"atomic":0,"known":1},"seed":5,"check":"realfifo/replace","guarantees":["Deltas","HasSynced"],"steps":4}
{"op":"Add","key":"k0","value":"1"}
{"op":"Replace","objects":[{"key":"k1","value":"2"}],"rv":"2","known":[{"key":"k2","value":"0","gen":1}]}
{"op":"Pop","want":{"ok":true,"deltas":[{"type":"Deleted","key":"k0","value":"1","tombstone":true},{"type":"Deleted","key":"k3","tombstone":true},{"type":"Replaced","key":"k1","value":"2","gen":1},{"type":"ReplacedAll","rv":"2","objects":[{"key":"k1","value":"2"}]},{"type":"Bookmark","rv":"3"},{"type":"SyncAll"}],"initial":true,"synced":false}}
{"op":"HasSynced","want":{"flag":true}}
`

// goodInformerVector has handler calls in its wants, and a step whose
// want says nothing was delivered.
const goodInformerVector = `{"format":"kverify-vector/v1","component":"informer","profile":"client-go","params":{"check_ns":1000000000},"seed":1,"check":"resync/sync-only","guarantees":["Resync"],"steps":3}
{"op":"AddHandler","key":"h0","ns":2000000000,"want":{"n":0}}
{"op":"Start","want":{"n":1,"calls":[{"handler":"h0","call":"init","key":"k0","at":0}]}}
{"op":"Sleep","ns":2500000000,"want":{"n":2,"calls":[{"handler":"h0","call":"update","key":"k0","at":2000000000},{"handler":"h0","call":"update","key":"k1","at":2000000000}]}}
`

// goodReflectorVector has watch events as a step's input and a store and
// notified versions in its wants.
const goodReflectorVector = `{"format":"kverify-vector/v1","component":"reflector","profile":"client-go","params":{"objects":1,"watch_list":0,"zero_rv":1},"seed":2,"check":"reflector/withholding","guarantees":["a watch from \"\" or \"0\" publishes nothing before its first MODIFIED, DELETED or BOOKMARK"],"steps":2}
{"op":"Run","objects":[{"key":"default/o000","value":"2"}],"rv":"0","events":[{"type":"ADDED","key":"default/o000","value":"2"}],"want":{"value":"0","objects":[{"key":"default/o000","value":"2"}]}}
{"op":"Bookmark","rv":"2","events":[{"type":"BOOKMARK","rv":"2"}],"want":{"value":"2","objects":[{"key":"default/o000","value":"2"}],"rvs":["2"]}}
`

func TestDecodeVectorsRoundTrip(t *testing.T) {
	for _, in := range []string{goodVector, goodFIFOVector, goodInformerVector, goodReflectorVector} {
		vs, err := DecodeVectors(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 1 || len(vs[0].Steps) != vs[0].Header.Steps {
			t.Fatalf("decoded %+v", vs)
		}
		var b bytes.Buffer
		if err := EncodeVectors(&b, vs); err != nil {
			t.Fatal(err)
		}
		if b.String() != in {
			t.Errorf("re-encoded:\n%s\nwant:\n%s", b.String(), in)
		}
	}
	vs, _ := DecodeVectors(strings.NewReader(goodVector))
	if *vs[0].Steps[1].Want.Value != "v0" {
		t.Errorf("decoded %+v", vs[0].Steps[1].Want)
	}
	vs, _ = DecodeVectors(strings.NewReader(goodFIFOVector))
	replace, pop := vs[0].Steps[1], vs[0].Steps[2].Want
	if len(replace.Objects) != 1 || *replace.RV != "2" || replace.Known[0] != (VObject{Key: "k2", Value: "0", Gen: 1}) {
		t.Errorf("decoded Replace %+v", replace)
	}
	if len(pop.Deltas) != 6 || !pop.Deltas[0].Tombstone || pop.Deltas[1].Value != nil || pop.Deltas[2].Gen != 1 ||
		pop.Deltas[3].Key != nil || len(pop.Deltas[3].Objects) != 1 || *pop.Deltas[4].RV != "3" || !*pop.Initial || *pop.Synced {
		t.Errorf("decoded Pop %+v", pop)
	}
	vs, _ = DecodeVectors(strings.NewReader(goodInformerVector))
	if w := vs[0].Steps[2].Want; *w.N != 2 || len(w.Calls) != 2 || w.Calls[1] != (VCall{Handler: "h0", Call: "update", Key: "k1", At: 2e9}) ||
		*vs[0].Steps[0].Want.N != 0 || vs[0].Steps[0].Want.Calls != nil || vs[0].Header.Params["check_ns"] != 1e9 {
		t.Errorf("decoded informer steps %+v", vs[0].Steps)
	}
	vs, _ = DecodeVectors(strings.NewReader(goodReflectorVector))
	run, bm := vs[0].Steps[0], vs[0].Steps[1]
	if len(run.Events) != 1 || *run.Events[0].Value != "2" || *run.Want.Value != "0" || run.Want.RVs != nil ||
		*bm.Events[0].RV != "2" || bm.Want.Objects[0] != (VObject{Key: "default/o000", Value: "2"}) || len(bm.Want.RVs) != 1 {
		t.Errorf("decoded reflector steps %+v", vs[0].Steps)
	}
}

// TestDecodeVectorsEmptyLists: an empty list decodes as no list, as the
// encoder writes it, so that what decodes re-encodes to itself; a want
// that holds only an empty list is empty.
func TestDecodeVectorsEmptyLists(t *testing.T) {
	header := strings.SplitN(goodFIFOVector, "\n", 2)[0]
	header = strings.Replace(header, `"steps":4`, `"steps":1`, 1)
	vs, err := DecodeVectors(strings.NewReader(header + "\n" + `{"op":"Replace","objects":[],"known":[],"want":{"ok":true,"deltas":[{"type":"ReplacedAll","objects":[]}]}}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := vs[0].Steps[0]
	if s.Objects != nil || s.Known != nil || s.Want.Deltas[0].Objects != nil {
		t.Errorf("empty lists decoded as %+v", s)
	}
	var b bytes.Buffer
	if err := EncodeVectors(&b, vs); err != nil {
		t.Fatal(err)
	}
	if want := `{"op":"Replace","want":{"ok":true,"deltas":[{"type":"ReplacedAll"}]}}`; !strings.Contains(b.String(), want) {
		t.Errorf("re-encoded as %s, want %s", b.String(), want)
	}
	for _, w := range []string{`{"deltas":[]}`, `{"calls":[]}`, `{"objects":[]}`, `{"rvs":[]}`, `{"calls":[],"objects":[],"rvs":[]}`} {
		if _, err := DecodeVectors(strings.NewReader(header + "\n" + `{"op":"Pop","want":` + w + `}` + "\n")); err == nil || !strings.Contains(err.Error(), `"want": empty`) {
			t.Errorf("a want of empty lists %s: %v, want it rejected as empty", w, err)
		}
	}
	vs, err = DecodeVectors(strings.NewReader(header + "\n" + `{"op":"Run","events":[],"want":{"n":0,"calls":[],"objects":[],"rvs":[]}}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s := vs[0].Steps[0]; s.Events != nil || s.Want.Calls != nil || s.Want.Objects != nil || s.Want.RVs != nil {
		t.Errorf("empty lists decoded as %+v %+v", s, *s.Want)
	}
}

// TestDecodeVectorsRejects: every malformation is an error naming the
// line (and the field, where there is one), never a panic.
func TestDecodeVectorsRejects(t *testing.T) {
	header := strings.SplitN(goodVector, "\n", 2)[0]
	for _, c := range []struct {
		name, in string
		want     []string
	}{
		{"wrong version", strings.Replace(goodVector, "kverify-vector/v1", "kverify-vector/v2", 1), []string{"line 1", `"format"`}},
		{"truncated", strings.Join(strings.Split(goodVector, "\n")[:2], "\n"), []string{"line 2", "truncated", "promises 2 steps"}},
		{"unknown field", strings.Replace(goodVector, `"value":"v0"}`, `"value":"v0","colour":1}`, 1), []string{"line 2", `"colour"`}},
		{"wrong type", strings.Replace(goodVector, `"seed":3`, `"seed":"three"`, 1), []string{"line 1", `"seed"`}},
		{"missing op", strings.Replace(goodVector, `{"op":"Write","value":"v0"}`, `{"value":"v0"}`, 1), []string{"line 2", `"op"`}},
		{"missing component", strings.Replace(goodVector, `"component":"ring",`, ``, 1), []string{"line 1", `"component"`}},
		{"too many steps", strings.Replace(goodVector, `"steps":2`, `"steps":100001`, 1), []string{"line 1", `"steps"`}},
		{"no steps", strings.Replace(goodVector, `"steps":2`, `"steps":0`, 1), []string{"line 1", `"steps"`}},
		{"not JSON", header + "\n{op: Write}\n", []string{"line 2"}},
		{"trailing data", header + "\n{\"op\":\"Len\"} {}\n{\"op\":\"Len\"}\n", []string{"line 2", "after"}},
		{"empty line", header + "\n\n", []string{"line 2", "empty"}},
		{"oversized line", header + "\n{\"op\":\"" + strings.Repeat("x", MaxVectorLine) + "\"}\n", []string{"line 2", "longer than"}},
		{"unknown field in a delta", strings.Replace(goodFIFOVector, `"type":"SyncAll"`, `"type":"SyncAll","colour":1`, 1), []string{"line 4", `"want.deltas[5].colour"`}},
		{"unknown field in a delta's object", strings.Replace(goodFIFOVector, `"objects":[{"key":"k1","value":"2"}]}`, `"objects":[{"key":"k1","value":"2","Gen":1}]}`, 1), []string{"line 4", `"want.deltas[3].objects[0].Gen"`}},
		{"unknown field in a known object", strings.Replace(goodFIFOVector, `"gen":1}]}`, `"gen":1,"version":2}]}`, 1), []string{"line 3", `"known[0].version"`}},
		{"field named in another case", strings.Replace(goodFIFOVector, `"deltas":`, `"Deltas":`, 1), []string{"line 4", `"want.Deltas"`}},
		{"delta without a type", strings.Replace(goodFIFOVector, `{"type":"SyncAll"}`, `{"key":"k9"}`, 1), []string{"line 4", `"want.deltas[5].type"`, "missing"}},
		{"delta with an empty type", strings.Replace(goodFIFOVector, `{"type":"SyncAll"}`, `{"type":""}`, 1), []string{"line 4", `"want.deltas[5].type"`, "empty"}},
		{"object without a value", strings.Replace(goodFIFOVector, `"objects":[{"key":"k1","value":"2"}],"rv"`, `"objects":[{"key":"k1"}],"rv"`, 1), []string{"line 3", `"objects[0].value"`, "missing"}},
		{"objects not a list", strings.Replace(goodFIFOVector, `"objects":[{"key":"k1","value":"2"}],"rv"`, `"objects":{"key":"k1"},"rv"`, 1), []string{"line 3", `"objects"`, "array"}},
		{"a delta not an object", strings.Replace(goodFIFOVector, `{"type":"SyncAll"}`, `"SyncAll"`, 1), []string{"line 4", `"want.deltas[5]"`, "not a JSON object"}},
		{"a null delta", strings.Replace(goodFIFOVector, `{"type":"SyncAll"}`, `null`, 1), []string{"line 4", `"want.deltas[5]"`, "not a JSON object"}},
		{"wrong type in a delta", strings.Replace(goodFIFOVector, `"tombstone":true},{"type":"Deleted","key":"k3"`, `"tombstone":"yes"},{"type":"Deleted","key":"k3"`, 1), []string{"line 4", "tombstone"}},
		{"wrong type of gen", strings.Replace(goodFIFOVector, `"gen":1}]}`, `"gen":"1"}]}`, 1), []string{"line 3", "gen"}},
		{"unknown field in a call", strings.Replace(goodInformerVector, `"key":"k1","at":2000000000}`, `"key":"k1","at":2000000000,"late":true}`, 1), []string{"line 4", `"want.calls[1].late"`}},
		{"call without a time", strings.Replace(goodInformerVector, `"key":"k0","at":0}`, `"key":"k0"}`, 1), []string{"line 3", `"want.calls[0].at"`, "missing"}},
		{"call without a handler", strings.Replace(goodInformerVector, `{"handler":"h0","call":"init",`, `{"call":"init",`, 1), []string{"line 3", `"want.calls[0].handler"`, "missing"}},
		{"call with an empty handler", strings.Replace(goodInformerVector, `{"handler":"h0","call":"init",`, `{"handler":"","call":"init",`, 1), []string{"line 3", `"want.calls[0].handler"`, "empty"}},
		{"call with an empty kind", strings.Replace(goodInformerVector, `"call":"init"`, `"call":""`, 1), []string{"line 3", `"want.calls[0].call"`, "empty"}},
		{"a null call", strings.Replace(goodInformerVector, `[{"handler":"h0","call":"init","key":"k0","at":0}]`, `[null]`, 1), []string{"line 3", `"want.calls[0]"`, "not a JSON object"}},
		{"wrong type of a call's time", strings.Replace(goodInformerVector, `"at":0}`, `"at":"0"}`, 1), []string{"line 3", "at"}},
		{"unknown field in an event", strings.Replace(goodReflectorVector, `{"type":"BOOKMARK","rv":"2"}`, `{"type":"BOOKMARK","rv":"2","annotations":{}}`, 1), []string{"line 3", `"events[0].annotations"`}},
		{"event without a type", strings.Replace(goodReflectorVector, `{"type":"BOOKMARK","rv":"2"}`, `{"rv":"2"}`, 1), []string{"line 3", `"events[0].type"`, "missing"}},
		{"event with an empty type", strings.Replace(goodReflectorVector, `{"type":"BOOKMARK","rv":"2"}`, `{"type":"","rv":"2"}`, 1), []string{"line 3", `"events[0].type"`, "empty"}},
		{"unknown field in a stored object", strings.Replace(goodReflectorVector, `"want":{"value":"0","objects":[{"key":"default/o000","value":"2"}]`, `"want":{"value":"0","objects":[{"key":"default/o000","value":"2","rv":"2"}]`, 1), []string{"line 2", `"want.objects[0].rv"`}},
		{"a null notified version", strings.Replace(goodReflectorVector, `"rvs":["2"]`, `"rvs":[null]`, 1), []string{"line 3", `"want.rvs[0]"`, "string"}},
		{"a number as a notified version", strings.Replace(goodReflectorVector, `"rvs":["2"]`, `"rvs":[2]`, 1), []string{"line 3", `"want.rvs[0]"`, "string"}},
		{"notified versions not a list", strings.Replace(goodReflectorVector, `"rvs":["2"]`, `"rvs":"2"`, 1), []string{"line 3", `"want.rvs"`, "array"}},
	} {
		_, err := DecodeVectors(strings.NewReader(c.in))
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not name %s", c.name, err, w)
			}
		}
	}
}

// FuzzDecodeVectors: the decoder never panics; what it accepts
// round-trips, and what it rejects it rejects naming a line.
func FuzzDecodeVectors(f *testing.F) {
	f.Add([]byte(goodVector))
	f.Add([]byte(goodVector + goodVector))
	f.Add([]byte(strings.Split(goodVector, "\n")[0]))
	f.Add([]byte(`{"format":"kverify-vector/v1","component":"workqueue","profile":"client-go","seed":0,"check":"queue/model","guarantees":[],"steps":1}` + "\n" + `{"op":"Get","want":{"key":"a","shutdown":false}}`))
	f.Add([]byte(goodFIFOVector))
	f.Add([]byte(goodInformerVector))
	f.Add([]byte(goodReflectorVector))
	f.Add([]byte("{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		vs, err := DecodeVectors(bytes.NewReader(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		var b bytes.Buffer
		if err := EncodeVectors(&b, vs); err != nil {
			t.Fatalf("accepted vectors do not encode: %v", err)
		}
		back, err := DecodeVectors(&b)
		if err != nil {
			t.Fatalf("re-encoded vectors do not decode: %v", err)
		}
		if len(back) != len(vs) || (len(vs) > 0 && !reflect.DeepEqual(back, vs)) {
			t.Fatalf("round trip changed the vectors:\n%+v\n%+v", vs, back)
		}
	})
}
