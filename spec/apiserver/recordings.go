package apiserver

import (
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// The scenarios recorded against the real kube-apiserver storage stack
// (realapi: TestFidelityRecordings writes and checks them), in the trace
// format: each step's op is a script step, its got the real stack's
// normalised answer.
//
//go:embed testdata/realapi/*.json
var recordings embed.FS

// Recording is one recorded scenario: its name, its script steps and the
// real stack's answers.
type Recording struct {
	Name    string
	Ops     []string
	Answers []string
}

// Recordings returns the recorded scenarios in name order, for the checks
// that hold a server other than this model to the real stack's answers
// (props/wire's HTTP face).
func Recordings() ([]Recording, error) {
	files, err := recordings.ReadDir("testdata/realapi")
	if err != nil {
		return nil, err
	}
	var out []Recording
	for _, f := range files {
		data, err := recordings.ReadFile(path.Join("testdata/realapi", f.Name()))
		if err != nil {
			return nil, err
		}
		var tr struct {
			Check string
			Steps []struct{ Op, Got string }
		}
		if err := json.Unmarshal(data, &tr); err != nil {
			return nil, fmt.Errorf("apiserver: recording %s: %w", f.Name(), err)
		}
		r := Recording{Name: strings.TrimPrefix(tr.Check, "fidelity/")}
		for _, s := range tr.Steps {
			r.Ops, r.Answers = append(r.Ops, s.Op), append(r.Answers, s.Got)
		}
		out = append(out, r)
	}
	return out, nil
}
