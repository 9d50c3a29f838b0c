package vectors

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kverify/kverify/traces"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

var update = flag.Bool("update", false, "rewrite data/*.jsonl from the models (make vectors)")

// File is where a component's vectors are committed, relative to this
// package.
func file(component string) string { return filepath.Join("data", component+".jsonl") }

// TestCurrent regenerates every component's vectors from the spec models
// and compares them with the committed files byte for byte: a model
// transition that changes fails here until make vectors rewrites them
// (and the change is reviewed in the diff).
func TestCurrent(t *testing.T) {
	for _, c := range Components() {
		vs, err := Generate(c)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := traces.EncodeVectors(&b, vs); err != nil {
			t.Fatal(err)
		}
		if *update {
			if err := os.WriteFile(file(c), b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		have, err := os.ReadFile(file(c))
		if err != nil {
			t.Fatalf("%v (make vectors writes it)", err)
		}
		if !bytes.Equal(have, b.Bytes()) {
			t.Errorf("%s differs from what the models give now (first difference at byte %d): the models changed; review, then make vectors", file(c), firstDiff(have, b.Bytes()))
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestCommitted: every committed file decodes, has at least PerComponent
// vectors, covers each kind of the component, and round-trips.
func TestCommitted(t *testing.T) {
	for _, c := range Components() {
		data, err := os.ReadFile(file(c))
		if err != nil {
			t.Fatal(err)
		}
		vs, err := traces.DecodeVectors(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", file(c), err)
		}
		if len(vs) < PerComponent {
			t.Errorf("%s: %d vectors, want at least %d", file(c), len(vs), PerComponent)
		}
		checks := map[string]int{}
		for _, v := range vs {
			checks[v.Header.Check]++
		}
		if len(checks) < 2 {
			t.Errorf("%s: vectors of %v only", file(c), checks)
		}
		var b bytes.Buffer
		if err := traces.EncodeVectors(&b, vs); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b.Bytes(), data) {
			t.Errorf("%s does not round-trip", file(c))
		}
		back, _ := traces.DecodeVectors(bytes.NewReader(b.Bytes()))
		if !reflect.DeepEqual(back, vs) {
			t.Errorf("%s: decode(encode(v)) != v", file(c))
		}
	}
}

// TestSchema validates every line of the committed files against
// traces/vector.schema.json, and checks that the schema rejects a wrong
// version, an unknown field, an empty want, and malformed informer calls
// and reflector events, notified versions and stored objects.
func TestSchema(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "vector.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("vector.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("vector.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	valid := func(line []byte) error {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
		if err != nil {
			return err
		}
		return s.Validate(v)
	}
	for _, comp := range Components() {
		data, err := os.ReadFile(file(comp))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
			if err := valid(line); err != nil {
				t.Fatalf("%s:%d: %v", file(comp), i+1, err)
			}
		}
	}
	for _, bad := range []string{
		`{"format":"kverify-vector/v0","component":"ring","profile":"doubling","seed":0,"check":"ring/fifo","guarantees":[],"steps":1}`,
		`{"op":"Write","value":"v","colour":"red"}`,
		`{"op":"Len","want":{}}`,
		`{"op":"Start","want":{"n":1,"calls":[{"handler":"h0","call":"init","key":"k0"}]}}`,
		`{"op":"Start","want":{"n":1,"calls":[{"handler":"h0","call":"init","key":"k0","at":0,"late":true}]}}`,
		`{"op":"Run","events":[{"rv":"1"}],"want":{"value":"1"}}`,
		`{"op":"Run","want":{"value":"1","rvs":[1]}}`,
		`{"op":"Run","want":{"value":"1","objects":[{"key":"a"}]}}`,
	} {
		if valid([]byte(bad)) == nil {
			t.Errorf("the schema accepts %s", bad)
		}
	}
}
