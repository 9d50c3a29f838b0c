package traces

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// VectorFormat is the version of the language-neutral vector format: JSON
// Lines, a header line then one line per operation, documented by
// vector.schema.json (next to this file). A change that breaks a reader
// bumps it.
const VectorFormat = "kverify-vector/v1"

// Limits of the vector decoder: a line longer than MaxVectorLine bytes or
// a vector of more than MaxVectorSteps steps is rejected, not read.
const (
	MaxVectorLine  = 64 << 10
	MaxVectorSteps = 100_000
)

// Vector is one golden vector: operations on a fresh instance of a
// component and the outcomes its model expects, for any implementation in
// any language to replay.
type Vector struct {
	Header Header
	Steps  []VStep
}

// Header opens a vector.
type Header struct {
	Format    string `json:"format"`
	Component string `json:"component"`
	// Profile names the semantics the outcomes follow (client-go's, or a
	// declared variation), Params the instance's parameters (a ring's
	// initial size, a limiter's base delay in ns, ...).
	Profile string             `json:"profile"`
	Params  map[string]float64 `json:"params,omitempty"`
	// Seed made the vector's operations; Check and Guarantees say which
	// check's guarantees it exercises.
	Seed       uint64   `json:"seed"`
	Check      string   `json:"check"`
	Guarantees []string `json:"guarantees"`
	// Steps is how many step lines follow: fewer is a truncated vector.
	Steps int `json:"steps"`
}

// VStep is one operation of a vector: Op with its inputs, and Want, the
// outcome the model expects (nil for an operation that returns nothing).
type VStep struct {
	Op    string  `json:"op"`
	Key   *string `json:"key,omitempty"`
	Value *string `json:"value,omitempty"`
	// Objects is a FIFO Replace's list (or the list a reflector vector's
	// Run is answered with), RV the resource version of a Replace or
	// Bookmark (a reflector step's: the list's, the write's, the
	// server's). Known is what a FIFO made with known objects
	// knows when the step runs: the model takes it as an input of the
	// operations that consult it, so a replayer sets its store to it
	// rather than reproducing an informer's processing. An empty list is
	// written as no field.
	Objects []VObject `json:"objects,omitempty"`
	RV      *string   `json:"rv,omitempty"`
	Known   []VObject `json:"known,omitempty"`
	NS      *int64    `json:"ns,omitempty"` // a duration in nanoseconds
	// Events are the watch events a reflector vector's step makes the
	// server deliver, in order: an input, so that a replayer without a
	// model API server can serve them from a scripted watch (a replayer
	// with one checks that its server delivered exactly these). Type is
	// the watch event type (ADDED, MODIFIED, DELETED, BOOKMARK), Key and
	// Value the object's key and resourceVersion, RV a bookmark's.
	Events []VDelta `json:"events,omitempty"`
	Want   *Want    `json:"want,omitempty"`
}

// Want is an expected outcome; a component uses the fields its
// operations return.
type Want struct {
	Key      *string `json:"key,omitempty"`
	Value    *string `json:"value,omitempty"`
	OK       *bool   `json:"ok,omitempty"`
	Shutdown *bool   `json:"shutdown,omitempty"`
	Flag     *bool   `json:"flag,omitempty"`
	N        *int64  `json:"n,omitempty"`
	NS       *int64  `json:"ns,omitempty"`
	// Deltas is what a FIFO's Pop or PopBatch handed its process func,
	// Initial the isInInitialList it passed along, and Synced whether
	// the FIFO reported synced while that process func ran (only in
	// vectors that check it: the outcome client-go's DeltaFIFO declares
	// a divergence for).
	Deltas  []VDelta `json:"deltas,omitempty"`
	Initial *bool    `json:"initial,omitempty"`
	Synced  *bool    `json:"synced,omitempty"`
	// Calls is what an informer's handlers received during the step and
	// the quiescence after it (N says how many, so that a step that
	// delivers nothing still has an outcome).
	Calls []VCall `json:"calls,omitempty"`
	// Objects is a reflector's store after the step (in key order; absent:
	// empty), RVs the versions the reflector passed to the store's
	// UpdateResourceVersion during the step, in order. In a reflector
	// vector every want states the store, so an absent objects means an
	// empty store, not an unstated one.
	Objects []VObject `json:"objects,omitempty"`
	RVs     []string  `json:"rvs,omitempty"`
}

// VCall is one call an informer made to a handler. Call is "init" (OnAdd
// with isInInitialList true), "add", "update" (OnUpdate, old and new
// object of key Key: an Update event or a resync) or "delete"; At is the
// fake time the call started, in nanoseconds since the vector began (the
// informer was made). A step's calls are grouped by handler, in the order
// the handlers were added, each handler's ordered by At, then Key: the
// calls one handler gets at one instant within one step are an initial
// list or a resync round, whose order is not part of the contract.
type VCall struct {
	Handler string `json:"handler"`
	Call    string `json:"call"`
	Key     string `json:"key"`
	At      int64  `json:"at"`
}

// empty reports whether w expects nothing: a want with no field is a
// malformed step, not an operation that returns nothing (that has no
// want).
func (w *Want) empty() bool {
	return w.Key == nil && w.Value == nil && w.OK == nil && w.Shutdown == nil && w.Flag == nil &&
		w.N == nil && w.NS == nil && len(w.Deltas) == 0 && w.Initial == nil && w.Synced == nil &&
		len(w.Calls) == 0 && len(w.Objects) == 0 && len(w.RVs) == 0
}

// VObject is an object of a FIFO vector. Value is its version (its
// resourceVersion: every event of a vector carries a fresh one, so a
// version names one state of the object); Gen counts the times a FIFO's
// transformer touched it, so that a popped object shows whether it was
// transformed exactly once.
type VObject struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	Gen   int64  `json:"gen,omitempty"`
}

// VDelta is one delta a FIFO popped. Type is client-go's spelling
// ("Added", "Deleted", "ReplacedAll", ...). Key, Value and Gen are the
// object's (Key only, for a tombstone that carries no last state);
// Tombstone marks a DeletedFinalStateUnknown. ReplacedAll carries RV and
// Objects, Bookmark RV; they and SyncAll have no key. A reflector
// vector's step events are VDeltas too, of watch event types (ADDED,
// MODIFIED, DELETED, BOOKMARK): one shape for both, since a watch event
// carries no more than a delta does.
type VDelta struct {
	Type      string    `json:"type"`
	Key       *string   `json:"key,omitempty"`
	Value     *string   `json:"value,omitempty"`
	Gen       int64     `json:"gen,omitempty"`
	Tombstone bool      `json:"tombstone,omitempty"`
	RV        *string   `json:"rv,omitempty"`
	Objects   []VObject `json:"objects,omitempty"`
}

// EncodeVectors writes vs in the vector format.
func EncodeVectors(w io.Writer, vs []Vector) error {
	bw := bufio.NewWriter(w)
	for i, v := range vs {
		h := v.Header
		h.Format, h.Steps = VectorFormat, len(v.Steps)
		h.normalise()
		if err := writeLine(bw, h); err != nil {
			return fmt.Errorf("vector %d: %w", i, err)
		}
		for j, s := range v.Steps {
			if err := writeLine(bw, s); err != nil {
				return fmt.Errorf("vector %d step %d: %w", i, j, err)
			}
		}
	}
	return bw.Flush()
}

func writeLine(w *bufio.Writer, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(data) > MaxVectorLine {
		return fmt.Errorf("line of %d bytes exceeds %d", len(data), MaxVectorLine)
	}
	w.Write(data)
	return w.WriteByte('\n')
}

// DecodeVectors reads every vector of a vector file. It rejects, with an
// error naming the line and the field, a line that is not a JSON object of
// the expected shape (unknown fields included, also in a want, a delta or
// an object: want.deltas[2].colour), a wrong format version, a missing
// required field, a line longer than MaxVectorLine, a vector
// claiming more than MaxVectorSteps steps, and a truncated file (a vector
// with fewer step lines than its header says). It never panics.
func DecodeVectors(r io.Reader) ([]Vector, error) {
	br := bufio.NewReaderSize(r, 4096)
	var vs []Vector
	line := 0
	var cur *Vector
	headerLine := 0
	for {
		data, err := readLine(br)
		if err == io.EOF {
			break
		}
		line++
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if len(bytes.TrimSpace(data)) == 0 {
			return nil, fmt.Errorf("line %d: empty line", line)
		}
		if cur == nil {
			var h Header
			if err := strictDecode(data, &h, headerFields, headerRequired); err != nil {
				return nil, fmt.Errorf("line %d (header): %w", line, err)
			}
			if err := h.validate(); err != nil {
				return nil, fmt.Errorf("line %d (header): %w", line, err)
			}
			h.normalise()
			vs = append(vs, Vector{Header: h, Steps: make([]VStep, 0, min(h.Steps, 1024))})
			cur, headerLine = &vs[len(vs)-1], line
		} else {
			var s VStep
			if err := strictDecode(data, &s, stepFields, nil); err != nil {
				return nil, fmt.Errorf("line %d (step %d of the vector at line %d): %w", line, len(cur.Steps), headerLine, err)
			}
			if err := s.validate(); err != nil {
				return nil, fmt.Errorf("line %d (step %d of the vector at line %d): %w", line, len(cur.Steps), headerLine, err)
			}
			cur.Steps = append(cur.Steps, s)
		}
		if len(cur.Steps) == cur.Header.Steps {
			cur = nil
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: truncated: the vector at line %d promises %d steps, the file ends after %d", line, headerLine, cur.Header.Steps, len(cur.Steps))
	}
	return vs, nil
}

// readLine returns the next line without its newline; a line longer than
// MaxVectorLine is an error (the rest of it is not read into memory).
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		if err != nil {
			if err == io.EOF && buf != nil {
				return buf, nil
			}
			return nil, err
		}
		buf = append(buf, chunk...)
		if len(buf) > MaxVectorLine {
			return nil, fmt.Errorf("longer than %d bytes", MaxVectorLine)
		}
		if !isPrefix {
			if buf == nil {
				buf = []byte{}
			}
			return buf, nil
		}
	}
}

// The exact field names of each object: encoding/json matches names
// without regard to case, which a language-neutral format must not.
var (
	headerFields   = []string{"format", "component", "profile", "params", "seed", "check", "guarantees", "steps"}
	headerRequired = []string{"format", "component", "profile", "seed", "check", "guarantees", "steps"}
	stepFields     = []string{"op", "key", "value", "objects", "rv", "known", "ns", "events", "want"}
	wantFields     = []string{"key", "value", "ok", "shutdown", "flag", "n", "ns", "deltas", "initial", "synced", "calls", "objects", "rvs"}
	callFields     = []string{"handler", "call", "key", "at"}
	objectFields   = []string{"key", "value", "gen"}
	objectRequired = []string{"key", "value"}
	deltaFields    = []string{"type", "key", "value", "gen", "tombstone", "rv", "objects"}
	deltaRequired  = []string{"type"}
)

// strictDecode decodes one JSON object into v, rejecting fields not named
// exactly as in fields (and in a step's want, objects, known objects,
// events, deltas and calls), missing required ones, trailing data and
// wrong types, with the field named.
func strictDecode(data []byte, v any, fields, required []string) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	if raw == nil {
		return errors.New("not a JSON object: null")
	}
	if err := exactFields(raw, fields, ""); err != nil {
		return err
	}
	if err := requiredFields(raw, required, ""); err != nil {
		return err
	}
	for _, f := range []string{"objects", "known"} {
		if err := exactArray(raw, f, "", objectFields, objectRequired, nil); err != nil {
			return err
		}
	}
	// A delta's objects (a ReplacedAll's) are objects too.
	objects := func(d map[string]json.RawMessage, prefix string) error {
		return exactArray(d, "objects", prefix, objectFields, objectRequired, nil)
	}
	if err := exactArray(raw, "events", "", deltaFields, deltaRequired, objects); err != nil {
		return err
	}
	if w, ok := raw["want"]; ok && !isNull(w) {
		var rw map[string]json.RawMessage
		if err := json.Unmarshal(w, &rw); err != nil {
			return fmt.Errorf("field \"want\": not a JSON object: %v", err)
		}
		if err := exactFields(rw, wantFields, "want."); err != nil {
			return err
		}
		if err := exactArray(rw, "deltas", "want.", deltaFields, deltaRequired, objects); err != nil {
			return err
		}
		// Every field of a call is required: at 0 is the vector's first
		// instant, not an unknown time.
		if err := exactArray(rw, "calls", "want.", callFields, callFields, nil); err != nil {
			return err
		}
		if err := exactArray(rw, "objects", "want.", objectFields, objectRequired, nil); err != nil {
			return err
		}
		if err := stringArray(rw, "rvs", "want."); err != nil {
			return err
		}
	}
	if err := json.Unmarshal(data, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("field %q: want %s, got JSON %s", te.Field, te.Type, te.Value)
		}
		return fmt.Errorf("not a JSON object of the expected shape: %v", err)
	}
	return nil
}

func exactFields(raw map[string]json.RawMessage, fields []string, prefix string) error {
	// Sorted, so that of several unknown fields the error names the same
	// one every time.
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(fields, k) {
			return fmt.Errorf("field %q: unknown (fields: %s)", prefix+k, strings.Join(fields, ", "))
		}
	}
	return nil
}

func requiredFields(raw map[string]json.RawMessage, required []string, prefix string) error {
	for _, f := range required {
		if _, ok := raw[f]; !ok {
			return fmt.Errorf("field %q: missing", prefix+f)
		}
	}
	return nil
}

func isNull(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }

// exactArray checks raw[name], if present and not null, as an array of
// objects with exactly fields and at least required, naming the element
// in errors (want.deltas[2].colour); nested, if set, checks each element
// further.
func exactArray(raw map[string]json.RawMessage, name, prefix string, fields, required []string, nested func(map[string]json.RawMessage, string) error) error {
	elems, err := arrayField(raw, name, prefix)
	if err != nil {
		return err
	}
	for i, e := range elems {
		at := fmt.Sprintf("%s%s[%d]", prefix, name, i)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(e, &m); err != nil || m == nil {
			return fmt.Errorf("field %q: not a JSON object", at)
		}
		if err := exactFields(m, fields, at+"."); err != nil {
			return err
		}
		if err := requiredFields(m, required, at+"."); err != nil {
			return err
		}
		if nested != nil {
			if err := nested(m, at+"."); err != nil {
				return err
			}
		}
	}
	return nil
}

// arrayField returns the elements of raw[name], none when it is absent or
// null, or an error naming the field when it is not an array.
func arrayField(raw map[string]json.RawMessage, name, prefix string) ([]json.RawMessage, error) {
	v, ok := raw[name]
	if !ok || isNull(v) {
		return nil, nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(v, &elems); err != nil {
		return nil, fmt.Errorf("field %q: not a JSON array: %v", prefix+name, err)
	}
	return elems, nil
}

// stringArray checks raw[name], if present and not null, as an array of
// strings: encoding/json would take a null element as "", which would
// re-encode as a different line.
func stringArray(raw map[string]json.RawMessage, name, prefix string) error {
	elems, err := arrayField(raw, name, prefix)
	if err != nil {
		return err
	}
	for i, e := range elems {
		var s string
		if isNull(e) || json.Unmarshal(e, &s) != nil {
			return fmt.Errorf("field \"%s%s[%d]\": not a JSON string", prefix, name, i)
		}
	}
	return nil
}

// normalise makes the header's empty collections canonical, so that a
// vector decodes to the value its encoding came from.
func (h *Header) normalise() {
	if len(h.Params) == 0 {
		h.Params = nil
	}
	if h.Guarantees == nil {
		h.Guarantees = []string{}
	}
}

// validate checks what strictDecode cannot: required values that are
// present but empty. It normalises s first (empty lists become absent, as
// the encoder writes them), so that a want holding only an empty list is
// rejected as empty, and what decodes re-encodes to itself.
func (s *VStep) validate() error {
	if s.Op == "" {
		return errors.New("field \"op\": missing")
	}
	s.normalise()
	for i, e := range s.Events {
		if e.Type == "" {
			return fmt.Errorf("field \"events[%d].type\": empty", i)
		}
	}
	if s.Want == nil {
		return nil
	}
	if s.Want.empty() {
		return errors.New("field \"want\": empty")
	}
	for i, d := range s.Want.Deltas {
		if d.Type == "" {
			return fmt.Errorf("field \"want.deltas[%d].type\": empty", i)
		}
	}
	for i, c := range s.Want.Calls {
		switch {
		case c.Handler == "":
			return fmt.Errorf("field \"want.calls[%d].handler\": empty", i)
		case c.Call == "":
			return fmt.Errorf("field \"want.calls[%d].call\": empty", i)
		}
	}
	return nil
}

func (s *VStep) normalise() {
	if len(s.Objects) == 0 {
		s.Objects = nil
	}
	if len(s.Known) == 0 {
		s.Known = nil
	}
	s.Events = normaliseDeltas(s.Events)
	if s.Want == nil {
		return
	}
	s.Want.Deltas = normaliseDeltas(s.Want.Deltas)
	if len(s.Want.Calls) == 0 {
		s.Want.Calls = nil
	}
	if len(s.Want.Objects) == 0 {
		s.Want.Objects = nil
	}
	if len(s.Want.RVs) == 0 {
		s.Want.RVs = nil
	}
}

// normaliseDeltas makes empty lists in ds (and ds itself) absent.
func normaliseDeltas(ds []VDelta) []VDelta {
	if len(ds) == 0 {
		return nil
	}
	for i := range ds {
		if len(ds[i].Objects) == 0 {
			ds[i].Objects = nil
		}
	}
	return ds
}

func (h Header) validate() error {
	switch {
	case h.Format != VectorFormat:
		return fmt.Errorf("field \"format\": got %q, want %q", h.Format, VectorFormat)
	case h.Component == "":
		return errors.New("field \"component\": missing")
	case h.Check == "":
		return errors.New("field \"check\": missing")
	case h.Steps < 1:
		return fmt.Errorf("field \"steps\": got %d, want at least 1", h.Steps)
	case h.Steps > MaxVectorSteps:
		return fmt.Errorf("field \"steps\": %d exceeds %d", h.Steps, MaxVectorSteps)
	}
	return nil
}
