package linearizability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	wq "github.com/kverify/kverify/spec/workqueue"
)

// Check is CheckSteps with DefaultSteps. Its last argument was once
// porcupine's wall-clock timeout and is ignored: a search that ran out of
// time gave a verdict that depended on the machine's load. It is kept so
// that callers not yet moved to CheckSteps compile; they get the step
// budget (and, as before, porcupine.Unknown for a search that runs out,
// which is not a verdict on the subject).
func Check(model porcupine.Model, history []porcupine.Operation, _ time.Duration) (porcupine.CheckResult, porcupine.LinearizationInfo) {
	return CheckSteps(model, history, DefaultSteps)
}

// SaveFailure writes dir/name.json, the history in the format LoadHistory
// reads, and, when info holds a search (Check's info for an Illegal
// history), dir/name.html, porcupine's visualisation: one row per client,
// the longest partial linearizations and the point where each fails. It
// returns the paths written; htmlPath is empty when there was nothing to
// draw. dir is created if needed.
func SaveFailure(dir, name string, model porcupine.Model, history []porcupine.Operation, info porcupine.LinearizationInfo) (htmlPath, jsonPath string, err error) {
	write := func(path string) error { return WriteHistory(path, &HistoryFile{Ops: Records(history)}) }
	return saveFailure(dir, name, write, model, info)
}

// FailureNote describes a failing history saved by SaveFailure or
// SaveFIFOFailure, for a violation message: htmlPath, jsonPath and err are
// what the save returned; load says how to read the history back (for
// example "linearizability.LoadHistory, then linearizability.Check");
// rerun says how to make the same calls again. It returns a line for each
// of the visualisation (if drawn), the history (if written), the error (if
// any) and rerun, each beginning with a newline and an indent of two.
func FailureNote(htmlPath, jsonPath string, err error, load, rerun string) string {
	var b strings.Builder
	if htmlPath != "" {
		fmt.Fprintf(&b, "\n  visualisation: %s (open in a browser; \"jump to first error\")", htmlPath)
	}
	if jsonPath != "" {
		fmt.Fprintf(&b, "\n  history: %s (%s)", jsonPath, load)
	}
	if err != nil {
		fmt.Fprintf(&b, "\n  could not save the history: %v", err)
	}
	b.WriteString("\n  " + rerun)
	return b.String()
}

// saveFailure creates dir, writes dir/name.json with write and, when info
// holds a search, dir/name.html, porcupine's visualisation of info under
// model; it returns the paths written (htmlPath empty when there was
// nothing to draw). It is the part SaveFailure, SaveFIFOFailure and
// SaveListenerFailure share.
func saveFailure(dir, name string, write func(jsonPath string) error, model porcupine.Model, info porcupine.LinearizationInfo) (htmlPath, jsonPath string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	base := filepath.Join(dir, sanitize(name))
	jsonPath = base + ".json"
	if err := write(jsonPath); err != nil {
		return "", "", err
	}
	if len(info.PartialLinearizations()) == 0 {
		return "", jsonPath, nil
	}
	htmlPath = base + ".html"
	if err := porcupine.VisualizePath(model, info, htmlPath); err != nil {
		return "", jsonPath, fmt.Errorf("visualize: %w", err)
	}
	return htmlPath, jsonPath, nil
}

func sanitize(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, name)
}

// HistoryFile is a history on disk, as JSON.
type HistoryFile struct {
	// Note says what the history shows; for people only.
	Note string `json:"note,omitempty"`
	// Expect maps a model name ("fifo" for QueueModel, "per-key" for
	// PerKeyModel) to the result the history must keep ("Ok" or
	// "Illegal"); the replay test holds saved histories to it.
	Expect map[string]porcupine.CheckResult `json:"expect,omitempty"`
	Ops    []Record                         `json:"ops"`
}

// Record is one operation of a HistoryFile.
type Record struct {
	Client int    `json:"client"`
	Call   int64  `json:"call"`
	Return int64  `json:"return"`
	Op     string `json:"op"`            // Add, Get, Done, Len or ShutDown
	Key    string `json:"key,omitempty"` // Add's and Done's argument
	// Get's results and Len's.
	Out      string `json:"out,omitempty"`
	Shutdown bool   `json:"shutdown,omitempty"`
	N        int    `json:"n,omitempty"`
}

// Records converts a history made of Input and Output values.
func Records(history []porcupine.Operation) []Record {
	rs := make([]Record, len(history))
	for i, op := range history {
		in, out := op.Input.(Input), op.Output.(Output)
		rs[i] = Record{Client: op.ClientId, Call: op.Call, Return: op.Return,
			Op: in.Op.String(), Key: in.Key, Out: out.Key, Shutdown: out.Shutdown, N: out.N}
	}
	return rs
}

// Operations converts records back into a history.
func (f *HistoryFile) Operations() ([]porcupine.Operation, error) {
	h := make([]porcupine.Operation, len(f.Ops))
	for i, r := range f.Ops {
		k, err := wq.ParseKind(r.Op)
		if err != nil {
			return nil, fmt.Errorf("op %d: %w", i, err)
		}
		if r.Return < r.Call {
			return nil, fmt.Errorf("op %d (%s): returns at %d before its call at %d", i, r.Op, r.Return, r.Call)
		}
		h[i] = porcupine.Operation{ClientId: r.Client, Call: r.Call, Return: r.Return,
			Input:  Input{Op: k, Key: r.Key},
			Output: Output{Key: r.Out, Shutdown: r.Shutdown, N: r.N}}
	}
	return h, nil
}

// WriteHistory writes f to path as JSON, one operation per line.
func WriteHistory(path string, f *HistoryFile) error {
	return writeHistoryJSON(path, HistoryFile{Note: f.Note, Expect: f.Expect}, f.Ops)
}

// writeHistoryJSON writes head, a history file without its ops, to path as
// indented JSON, with ops in place of its `"ops": null`, one a line. The
// ops field must be head's last.
func writeHistoryJSON[R any](path string, head any, ops []R) error {
	h, err := json.MarshalIndent(head, "", "  ")
	if err != nil {
		return err
	}
	prefix := string(h[:bytes.LastIndex(h, []byte(`"ops"`))]) + `"ops": [` // up to `"ops": null`
	return writeJSONLines(path, prefix, "\n    ", "\n  ]\n}\n", ops)
}

// writeJSONLines writes to path prefix, then rs as JSON, each on a line of
// its own after indent and separated by commas, then suffix.
func writeJSONLines[R any](path, prefix, indent, suffix string, rs []R) error {
	var b bytes.Buffer
	b.WriteString(prefix)
	for i, r := range rs {
		line, err := json.Marshal(r)
		if err != nil {
			return err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(indent)
		b.Write(line)
	}
	b.WriteString(suffix)
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// ReadHistory reads a HistoryFile.
func ReadHistory(path string) (*HistoryFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f HistoryFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &f, nil
}

// LoadHistory reads a history saved by SaveFailure (or written by hand),
// ready for Check.
func LoadHistory(path string) ([]porcupine.Operation, error) {
	f, err := ReadHistory(path)
	if err != nil {
		return nil, err
	}
	h, err := f.Operations()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}
