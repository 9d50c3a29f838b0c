package main

import (
	"flag"
	"io"
	"slices"
	"testing"
)

// Flags may follow the positional arguments, as the README shows replay;
// -h is not an error.
func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		pos      []string
		subject  string
		code     int
		finished bool
	}{
		{args: []string{"t.json", "--subject", "ours"}, pos: []string{"t.json"}, subject: "ours"},
		{args: []string{"--subject", "ours", "t.json"}, pos: []string{"t.json"}, subject: "ours"},
		{args: []string{"a", "--subject=x", "b"}, pos: []string{"a", "b"}, subject: "x"},
		{args: []string{"a", "--", "-h", "--subject"}, pos: []string{"a", "-h", "--subject"}},
		{args: nil},
		{args: []string{"-h"}, finished: true},
		{args: []string{"t.json", "--help"}, finished: true},
		{args: []string{"--bogus"}, code: 2, finished: true},
	} {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		subject := fs.String("subject", "", "")
		pos, code, done := parseArgs(fs, tc.args)
		if done != tc.finished || code != tc.code || (!done && (!slices.Equal(pos, tc.pos) || *subject != tc.subject)) {
			t.Errorf("parseArgs(%q) = %q, %d, %v with subject %q; want %q, %d, %v with subject %q",
				tc.args, pos, code, done, *subject, tc.pos, tc.code, tc.finished, tc.subject)
		}
	}
}
