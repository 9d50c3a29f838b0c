// Package traces defines the replayable trace format: a failing check's
// shortest counterexample as data, saved as JSON, that a component's
// conformance package can run again against any subject.
package traces

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Version is the current trace format version.
const Version = 1

// Trace is a sequence of steps that drove a subject, and what broke. A
// trace with no steps is a probe trace: the check that saved it drives the
// subject with concurrent calls or a sweep of rounds that are not steps
// (a race, a lifecycle sweep, a linearizability history), and replaying
// it runs that check again; Message holds the counterexample it found.
type Trace struct {
	Version   int    `json:"version"`
	Component string `json:"component"`
	Check     string `json:"check"`
	Subject   string `json:"subject,omitempty"`
	// Guarantee is the broken guarantee, Message the violation.
	Guarantee string `json:"guarantee,omitempty"`
	Message   string `json:"message,omitempty"`
	Steps     []Step `json:"steps"`
	// Race, in a probe trace of a race probe, is the round that failed:
	// replaying it races the same pair of calls at the same offset again.
	Race *Race `json:"race,omitempty"`
}

// Race is the round of a race probe that failed: the pair of calls, the
// round's number, the offset (in spin iterations: one call was held back
// by that many after both were released; positive holds back the racer's,
// the second call) and the seed the probe's offsets were drawn from. The
// operating system's scheduling within the round is not recorded (it
// cannot be chosen); replaying the round tries the same pair at the same
// offset until the violation occurs again or the replay's rounds run out.
type Race struct {
	Seed   uint64 `json:"seed"`
	Pair   string `json:"pair"`
	Round  int    `json:"round"`
	Offset int    `json:"offset"`
}

// Step is one operation of a trace. Op is the operation in the component's
// own notation (e.g. "Add(a)", "w1:Get", "Sleep(3s)"); Want and Got are the
// expected and observed results, empty when the step returns nothing.
type Step struct {
	Op   string        `json:"op"`
	Want string        `json:"want,omitempty"`
	Got  string        `json:"got,omitempty"`
	At   time.Duration `json:"at,omitempty"` // fake time since the start, for timed components
}

// Ops returns the operations of the trace, in order.
func (t *Trace) Ops() []string {
	ops := make([]string, len(t.Steps))
	for i, s := range t.Steps {
		ops[i] = s.Op
	}
	return ops
}

// String renders the trace for a failure message: one step per line.
func (t *Trace) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d steps:", len(t.Steps))
	for i, s := range t.Steps {
		fmt.Fprintf(&b, "\n  %3d %s", i, s.Op)
		switch {
		case s.Want == s.Got && s.Got != "":
			fmt.Fprintf(&b, " -> %s", s.Got)
		case s.Want != s.Got && s.Got == "":
			fmt.Fprintf(&b, " -> (nothing; model: %s)", s.Want)
		case s.Want != s.Got && s.Want == "":
			fmt.Fprintf(&b, " -> %s (model: nothing)", s.Got)
		case s.Want != s.Got:
			fmt.Fprintf(&b, " -> %s (model: %s)", s.Got, s.Want)
		}
	}
	return b.String()
}

// Read loads a trace file.
func Read(path string) (*Trace, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var t Trace
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("trace %s: %w", path, err)
	}
	if t.Version != Version {
		return nil, fmt.Errorf("trace %s: version %d, want %d", path, t.Version, Version)
	}
	if t.Component == "" || t.Check == "" {
		return nil, fmt.Errorf("trace %s: component and check are required", path)
	}
	return &t, nil
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Write saves t as dir/<component>-<check>-<subject>.json and returns the path.
func Write(dir string, t *Trace) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	name := unsafeChars.ReplaceAllString(strings.Join([]string{t.Component, t.Check, t.Subject}, "-"), "_")
	path := filepath.Join(dir, name+".json")
	data, err := Encode(t)
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, data, 0o644)
}

// Encode returns t as Write saves it, at the current format version, for
// a caller that names the file itself.
func Encode(t *Trace) ([]byte, error) {
	t.Version = Version
	data, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}
