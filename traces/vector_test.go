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

func TestDecodeVectorsRoundTrip(t *testing.T) {
	vs, err := DecodeVectors(strings.NewReader(goodVector))
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || len(vs[0].Steps) != 2 || *vs[0].Steps[1].Want.Value != "v0" {
		t.Fatalf("decoded %+v", vs)
	}
	var b bytes.Buffer
	if err := EncodeVectors(&b, vs); err != nil {
		t.Fatal(err)
	}
	if b.String() != goodVector {
		t.Errorf("re-encoded:\n%s\nwant:\n%s", b.String(), goodVector)
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
