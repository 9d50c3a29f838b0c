package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLoadHelper is not a test: it is the hog, or the command, that the
// load tests start from this test binary (which has no kverify commands),
// chosen by the arguments after "--". Without them it does nothing.
func TestLoadHelper(t *testing.T) {
	args := flag.Args()
	if len(args) == 0 {
		return
	}
	switch args[0] {
	case "hog":
		os.Exit(hogMain(nil))
	case "exit":
		// exit MS CODE: sleep MS milliseconds, then exit with CODE.
		ms, _ := strconv.Atoi(args[1])
		code, _ := strconv.Atoi(args[2])
		time.Sleep(time.Duration(ms) * time.Millisecond)
		os.Exit(code)
	}
	t.Fatalf("unknown helper %q", args)
}

// helperArgv is this test binary running TestLoadHelper with args.
func helperArgv(args ...string) []string {
	return append([]string{os.Args[0], "-test.run=^TestLoadHelper$", "--"}, args...)
}

func useTestHogs(t *testing.T) {
	old := hogArgv
	hogArgv = func() ([]string, error) { return helperArgv("hog"), nil }
	t.Cleanup(func() { hogArgv = old })
}

// TestLoadExitStatus: kverify load returns the command's exit status, 127
// when the command cannot start, and stops every hog.
func TestLoadExitStatus(t *testing.T) {
	useTestHogs(t)
	for _, tc := range []struct {
		argv []string
		code int
		log  string
	}{
		{argv: helperArgv("exit", "200", "3"), code: 3, log: "the command exited with status 3"},
		{argv: helperArgv("exit", "0", "0"), code: 0, log: "the 2 hogs used"},
		{argv: []string{"/nonexistent/kverify-load-test"}, code: 127, log: "no such file"},
	} {
		var log bytes.Buffer
		if code := runLoaded(2, tc.argv, &log); code != tc.code {
			t.Errorf("%q: exit status %d, want %d\n%s", tc.argv, code, tc.code, log.String())
		}
		if !strings.Contains(log.String(), "2 CPU-bound processes") || !strings.Contains(log.String(), tc.log) {
			t.Errorf("%q: the log lacks the hog count or %q:\n%s", tc.argv, tc.log, log.String())
		}
	}
}

// TestHogsEndWithTheirPipe: a hog that is not killed still exits once its
// standard input closes, as it does when kverify load dies, so that no
// hog outlives the command.
func TestHogsEndWithTheirPipe(t *testing.T) {
	useTestHogs(t)
	h, err := startHogs(2)
	if err != nil {
		t.Fatal(err)
	}
	defer h.stop()
	h.stdin.Close()
	done := make(chan error, len(h.procs))
	for _, c := range h.procs {
		go func() { done <- c.Wait() }()
	}
	for range h.procs {
		select {
		case err := <-done:
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Errorf("a hog ended with %v, want a clean exit on end of file", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a hog still spins 30 s after its pipe closed")
		}
	}
	h.stopped = true // reaped above
}
