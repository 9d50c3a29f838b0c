package node

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReproducers runs the standalone reproducers of the declared findings
// (traces/findings/<subject>/<id>/repro.mjs) the way their top comments say:
// from js/, under the Node binary the package pins. Each must print one
// "DEFECT: " line and exit with status 1 on the pinned library.
func TestReproducers(t *testing.T) {
	js := jsDir()
	node := filepath.Join(js, "node_modules", ".bin", "node")
	if _, err := os.Stat(node); err != nil {
		t.Skipf("the JavaScript clients are not installed (run npm ci in %s): %v", js, err)
	}
	findings, err := filepath.Abs(filepath.Join(js, "..", "..", "..", "traces", "findings"))
	if err != nil {
		t.Fatal(err)
	}
	for _, repro := range []string{
		"client-node/informer-null-object-crashes",
		"fluent/watch-passes-malformed-objects",
		"fluent/relist-adds-new-uid-before-deleting-old",
		"fluent/failed-first-list-never-completes",
	} {
		t.Run(repro, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 12*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, filepath.Join(findings, repro, "repro.mjs"))
			cmd.Dir = js
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			out := strings.TrimSpace(stdout.String())
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("want exit status 1, got %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
			}
			if strings.Count(out, "\n") != 0 || !strings.HasPrefix(out, "DEFECT: ") {
				t.Fatalf("want one DEFECT line, got:\n%s\nstderr: %s", out, stderr.String())
			}
			t.Log(out)
		})
	}
}
