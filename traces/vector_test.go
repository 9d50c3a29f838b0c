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

func TestDecodeVectorsRoundTrip(t *testing.T) {
	for _, in := range []string{goodVector, goodFIFOVector} {
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
	if _, err := DecodeVectors(strings.NewReader(header + "\n" + `{"op":"Pop","want":{"deltas":[]}}` + "\n")); err == nil || !strings.Contains(err.Error(), `"want": empty`) {
		t.Errorf("a want of an empty list: %v, want it rejected as empty", err)
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
