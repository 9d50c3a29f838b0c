// Command kverify runs kverify's conformance checks and reports them.
//
//	kverify verify  [--component LIST] [--subject ours|upstream|client-go@VERSION|mutant:ID|all|controller-runtime|client-node|fluent] [--budget D] [--checks N] [--traces DIR] [--race] [-v] [--json FILE] [--markdown FILE]
//	kverify mutants [--component LIST] [--mutant IDS | --cover] [--full] [--shard K/N | --merge REPORTS] [--repeat N] [--schema=false] [--save-matrix FILE] [--list] [--parallel N] [--median-bar D] [--worst-bar D] [--bar-scale F] [--budget D] [--checks N] [--traces DIR] [--race] [-v] [--json FILE] [--markdown FILE]
//	kverify replay  [--subject ours|upstream|client-go@VERSION|mutant:ID|controller-runtime|client-node|fluent] TRACE.json
//	kverify bench   [--count N] [--benchtime D] [--bench REGEXP] [--out FILE] [--json FILE] [--readme FILE] [--from FILE] [--benchstat PATH]
//	kverify serve   [--addr HOST:PORT] [--seed N | --schedule HEX] [--objects N] [--writes D] [--restart-every D] [--watch-list=false] [--log FILE]
//	kverify matrix  [--releases LIST] [--component LIST] [--out PREFIX] [--render] [--race] [--budget D] [--checks N]
//	kverify findings [--subject S] [--report ID|all]
//	kverify compare QUIET.json OTHER.json
//	kverify load    [--procs N] [--] COMMAND [ARGS...]
//
// The checks are Go tests (synctest needs a *testing.T), so kverify drives
// `go test -json` on the subject suite in package subjects and reads its
// events; it must run inside the kverify module with the go command on
// PATH. Exit status: 0 all required checks pass, 1 a check failed or a
// mutant survived, 2 bad usage. Every flag: docs/command.md.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/kverify/kverify/internal/kvenv"
)

const usage = `usage: kverify <command> [flags]

commands:
  verify   run the conformance checks and print the table
  mutants  run every catalogued mutant and print the kill matrix
  replay   replay a saved counterexample trace
  bench    run benchmarks side by side with upstream (benchstat)
  serve    serve the model API server over HTTP, with a seed's faults
  matrix   run the checks and the findings' reproducers on every client-go release
  findings list the upstream-ready findings and their status per release
  compare  print the checks whose result differs between two verify --json reports
  load     run a command beside CPU-bound processes (default 4 per CPU), then stop them

Run 'kverify <command> -h' for the command's flags.
`

func main() {
	os.Exit(run(os.Args[1:]))
}

// parseArgs parses fs's flags wherever they stand among the positional
// arguments, so that "kverify replay FILE --subject X" works as well as
// "kverify replay --subject X FILE", and returns the positional ones. done
// is true when the command must stop with code: 0 after -h or --help (the
// usage was printed), 2 after a bad flag.
func parseArgs(fs *flag.FlagSet, args []string) (pos []string, code int, done bool) {
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, 0, true
			}
			return nil, 2, true
		}
		if fs.NArg() == 0 {
			return pos, 0, false
		}
		if n := len(args) - fs.NArg(); n > 0 && args[n-1] == "--" {
			return append(pos, fs.Args()...), 0, false // all positional
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func run(args []string) int {
	// The test binaries kverify starts inherit the environment: a
	// malformed KVERIFY_* variable would fail every one of them.
	if _, err := kvenv.Load(); err != nil {
		fmt.Fprintln(os.Stderr, "kverify:", err)
		return 2
	}
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return 2
	}
	cmds := map[string]func([]string) int{
		"verify":   verify,
		"mutants":  mutantsCmd,
		"replay":   replay,
		"bench":    bench,
		"serve":    serve,
		"matrix":   matrixCmd,
		"findings": findingsCmd,
		"compare":  compareCmd,
		"load":     loadCmd,
		// Not in the usage: the busy processes kverify load starts.
		hogCommand: hogMain,
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
			fmt.Print(usage)
			return 0
		}
		fmt.Fprintf(os.Stderr, "kverify: unknown command %q\n%s", args[0], usage)
		return 2
	}
	return cmd(args[1:])
}
