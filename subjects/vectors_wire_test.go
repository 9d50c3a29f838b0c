package subjects

import (
	"fmt"
	"testing"

	"github.com/kverify/kverify/props/wire"
	"github.com/kverify/kverify/spec/apiserver"
	"github.com/kverify/kverify/subjects/upstream"
	"github.com/kverify/kverify/traces"
)

// replayWireVector drives the served model through the vector's script
// over HTTP, decoding the answers with newReader, and compares each
// step's normalised answer with the vector's.
func replayWireVector(t *testing.T, newReader wire.NewReader, v traces.Vector) error {
	ops := make([]string, len(v.Steps))
	for i, s := range v.Steps {
		ops[i] = s.Op
	}
	steps, err := apiserver.ParseScript(ops)
	if err != nil {
		return err
	}
	got, err := wire.RunScript(t, steps, newReader)
	if err != nil {
		return err
	}
	for i, s := range v.Steps {
		if s.Want != nil && s.Want.Value != nil && got[i] != *s.Want.Value {
			return fmt.Errorf("step %d %s: got %q, want %q", i, s.Op, got[i], *s.Want.Value)
		}
	}
	return nil
}

// TestVectorsWire replays the wire vectors over HTTP on the served model,
// decoded as plain JSON (ours: what a client in another language sees)
// and by client-go's REST client (upstream: the stock decoder).
func TestVectorsWire(t *testing.T) {
	checkVectorReplays(t, "wire", readVectors(t, "wire"), pinned(upstream.WireDivergences), nil, []vectorSubject{
		{name: Ours, replay: func(v traces.Vector) error { return replayWireVector(t, wire.PlainReader, v) }},
		{name: Upstream, replay: func(v traces.Vector) error { return replayWireVector(t, upstream.WireReader, v) }},
	})
}
