package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// hogCommand is the hidden command each busy process of kverify load
// runs (this binary again): not in the usage text, as only load starts it.
const hogCommand = "load-hog"

// loadCmd runs a command while N CPU-bound processes (hogs) spin beside
// it, so that the command's threads wait for a core as they would on a
// busy CI machine: a verdict that changes under load (compare the
// command's report with a quiet run's, kverify compare) depends on timing
// it must not depend on. The hogs are separate processes, not goroutines,
// so that the kernel's scheduler, not Go's, shares the cores among them
// and the command.
//
// The hogs never outlive the command: they are killed when it ends or
// when kverify load is interrupted, and each exits by itself when
// kverify load dies in any way (its standard input, a pipe from kverify
// load, reaches end of file).
//
// Exit status: the command's (128+N when signal N killed it), 127 when it
// could not be started, 2 bad usage or hogs that could not be started.
func loadCmd(args []string) int {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	procs := fs.Int("procs", 4*runtime.NumCPU(), "CPU-bound processes to run beside the command, by default 4 per CPU")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, "usage: kverify load [--procs N] [--] COMMAND [ARGS...]")
		fmt.Fprintln(w, "\nRuns COMMAND beside N busy-loop processes, kills them when it ends, and exits with its status.")
		fmt.Fprintln(w, "\nflags:")
		fs.PrintDefaults()
	}
	// fs.Parse, not parseArgs: load's flags end at the command, whose own
	// flags (--json FILE) are its arguments, not load's.
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 {
		return usageErr(fs, errors.New("no command to run"))
	}
	if *procs < 0 {
		return usageErr(fs, fmt.Errorf("--procs must be at least 0, got %d", *procs))
	}
	return runLoaded(*procs, fs.Args(), os.Stderr)
}

// runLoaded runs argv beside procs hogs, reporting on log, and returns
// the exit status loadCmd documents.
func runLoaded(procs int, argv []string, log io.Writer) int {
	// Before the hogs start: a signal from here on stops them at once.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	h, err := startHogs(procs)
	if err != nil {
		fmt.Fprintln(log, "kverify load:", err)
		return 2
	}
	defer h.stop() // a no-op once stopped; here for the early returns
	fmt.Fprintf(log, "kverify load: %d CPU-bound processes beside %q on %d CPUs (load average %s)\n",
		procs, strings.Join(argv, " "), runtime.NumCPU(), loadAverage())

	start := time.Now()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(log, "kverify load:", err)
		return 127
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for waiting := true; waiting; {
		select {
		case sig := <-sigs:
			// The hogs go first: whatever the command does with the
			// signal, the machine is not to stay loaded. A Ctrl-C reaches
			// the command from the terminal as well; forwarding it too
			// covers a signal sent to kverify load alone (a CI timeout).
			h.stop()
			fmt.Fprintf(log, "kverify load: %v: hogs stopped, passing it on to the command\n", sig)
			cmd.Process.Signal(sig)
		case <-done:
			waiting = false
		}
	}
	wall := time.Since(start)
	// Read before the hogs stop, so that it shows the load they made.
	avg := loadAverage()
	hogCPU := h.stop()
	status := exitStatus(cmd.ProcessState)
	// The hogs' share of the machine while they ran says how loaded the
	// run really was.
	share := 0.0
	if h.ran > 0 {
		share = 100 * hogCPU.Seconds() / (h.ran.Seconds() * float64(runtime.NumCPU()))
	}
	fmt.Fprintf(log, "kverify load: the command exited with status %d after %.1f s, using %.1f s of CPU; "+
		"the %d hogs used %.1f s of CPU (%.0f%% of %d CPUs while they ran); load average at the end %s\n",
		status, wall.Seconds(), (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds(),
		procs, hogCPU.Seconds(), share, runtime.NumCPU(), avg)
	return status
}

// hogs are the busy processes of one kverify load.
type hogs struct {
	procs []*exec.Cmd
	// stdin is the write end of the pipe that is every hog's standard
	// input: when it closes, deliberately or because kverify load died,
	// each hog reads end of file and exits.
	stdin   *os.File
	stopped bool
	// started and ran are when the hogs started and how long they ran,
	// and cpu the CPU time they used in all.
	started time.Time
	ran     time.Duration
	cpu     time.Duration
}

// hogArgv is the command line of one hog: this binary's hidden hog
// command. A variable so that the tests, whose binary is not kverify, can
// start their own.
var hogArgv = func() ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this binary to run the hogs: %v", err)
	}
	return []string{exe, hogCommand}, nil
}

// startHogs starts n hogs, or none: on an error it stops those it started.
func startHogs(n int) (*hogs, error) {
	argv, err := hogArgv()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	// Only the hogs hold the read end: closed here once they have it.
	defer r.Close()
	h := &hogs{stdin: w, started: time.Now()}
	for range n {
		c := exec.Command(argv[0], argv[1:]...)
		c.Stdin, c.Stderr = r, os.Stderr
		if err := c.Start(); err != nil {
			h.stop()
			return nil, fmt.Errorf("starting a hog: %v", err)
		}
		h.procs = append(h.procs, c)
	}
	return h, nil
}

// stop kills every hog and waits for it, and returns the CPU time they
// used (the first call measures it; later ones return it).
func (h *hogs) stop() time.Duration {
	if h.stopped {
		return h.cpu
	}
	h.stopped = true
	h.stdin.Close()
	for _, c := range h.procs {
		c.Process.Kill()
	}
	for _, c := range h.procs {
		c.Wait()
		if c.ProcessState != nil {
			h.cpu += c.ProcessState.UserTime() + c.ProcessState.SystemTime()
		}
	}
	h.ran = time.Since(h.started)
	return h.cpu
}

// hogMain is one hog: it spins on one core until its standard input (the
// pipe from kverify load) reaches end of file or fails, then exits.
func hogMain(args []string) int {
	var eof atomic.Bool
	go func() {
		io.Copy(io.Discard, os.Stdin)
		eof.Store(true)
	}()
	for !eof.Load() {
		// An atomic load per turn: no memory traffic beyond the
		// core's cache, so the hog takes CPU time and nothing else.
	}
	return 0
}

// exitStatus is a finished command's exit status as a shell reports it:
// 128+N when signal N killed it.
func exitStatus(st *os.ProcessState) int {
	if code := st.ExitCode(); code >= 0 {
		return code
	}
	if ws, ok := st.Sys().(interface {
		Signaled() bool
		Signal() syscall.Signal
	}); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return 1
}

// loadAverage is the kernel's 1, 5 and 15 minute load averages, where
// /proc has them (Linux).
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unavailable"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unavailable"
	}
	return strings.Join(f[:3], " ")
}
