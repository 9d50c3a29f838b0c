// Package kvenv is the one configuration the kverify command hands a test
// binary through the environment: every KVERIFY_* variable, its type, and
// its parser, in one table. The command encodes a Config with Environ; the
// test binary (props.Run, suite.RunSuite and RunReplay, the checks that
// take a seed) reads it with Load, which parses every variable and
// reports a malformed value as an error naming the variable, never as the
// default.
package kvenv

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config is the parsed KVERIFY_* environment. The zero value is "not set"
// for every field.
type Config struct {
	// Budget (KVERIFY_BUDGET, a duration such as 30s) lets each randomized
	// check explore for this long after its first round.
	Budget time.Duration
	// Checks (KVERIFY_CHECKS, a positive integer) is rapid's cases per round.
	Checks int
	// TraceDir (KVERIFY_TRACE_DIR) is where failing checks save traces.
	TraceDir string
	// Subject (KVERIFY_SUBJECT) names the subject in traces when Run's
	// options do not, and, in a suite narrowed to one subject (Subjects)
	// or replaying on it, names that subject: the command sets it to the
	// release a generated module adapts (client-go@v0.30.14).
	Subject string
	// Components and Subjects (KVERIFY_COMPONENTS, KVERIFY_SUBJECTS:
	// comma-separated names) narrow suite.RunSuite to those entries.
	Components, Subjects []string
	// Only (KVERIFY_ONLY: comma-separated component/check) narrows the
	// suite to those checks: the command reruns, in a fresh process, the
	// checks an earlier hang kept from running.
	Only []string
	// List (KVERIFY_LIST=1) makes the suite print the checks it would run
	// instead of running them.
	List bool
	// Replay (KVERIFY_REPLAY, a trace file) and ReplaySubject
	// (KVERIFY_REPLAY_SUBJECT) are what TestReplay replays, and on which
	// subject (default: the trace's).
	Replay, ReplaySubject string
	// Mutant (KVERIFY_MUTANT, a catalogue ID) says the binary was built
	// with that mutant's overlay: messages and replay hints name it.
	Mutant string
	// HangAfter (KVERIFY_HANG_AFTER, a positive duration) replaces the
	// watchdog's default HangAfter.
	HangAfter time.Duration
	// LinearSeed (KVERIFY_LINEAR_SEED, an unsigned integer) fixes the
	// first seed of the linearizability checks' scenarios; HasLinearSeed
	// says it was set.
	LinearSeed    uint64
	HasLinearSeed bool
	// RaceSeed (KVERIFY_RACE_SEED, an unsigned integer) fixes the seed
	// the race probes draw their offsets from; HasRaceSeed says it was
	// set.
	RaceSeed    uint64
	HasRaceSeed bool
	// ActiveMutant (KVERIFY_ACTIVE_MUTANT, a non-negative integer) is the
	// mutant a schema build runs (its number in mutants.Schema.Index; 0:
	// none). Read by the build's generated dispatch through Lookup.
	ActiveMutant int
	// BenchRound (KVERIFY_BENCH_ROUND, a non-negative integer) is the
	// round of kverify bench a benchmark process runs.
	BenchRound int
	// MutantSubject (KVERIFY_MUTANT_SUBJECT) is the registry subject
	// Mutant is built into (empty: ours): the subject whose traces and
	// reports are labelled with the mutant.
	MutantSubject string
	// Deeper (KVERIFY_DEEPER, a non-negative integer) adds this many steps
	// to every exhaustive check's default depth bound.
	Deeper int
	// ShardK and ShardN (KVERIFY_SHARD, "K/N" with 1 <= K <= N) make
	// every exhaustive search explore only its K-th of N slices of the
	// states at the first level that has N of them (0: not set).
	ShardK, ShardN int
	// Cache (KVERIFY_CACHE, a directory) is where the modules generated
	// for client-go releases are kept; empty: the user's cache directory.
	Cache string
}

// variable is one KVERIFY_* variable: how to read it into a Config and
// write it out of one ("" for not set).
type variable struct {
	name   string
	parse  func(c *Config, v string) error
	format func(c Config) string
}

var variables = []variable{
	{"KVERIFY_BUDGET", func(c *Config, v string) (err error) {
		c.Budget, err = duration(v, false)
		return err
	}, func(c Config) string { return durationString(c.Budget) }},
	{"KVERIFY_CHECKS", func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return errors.New("want a positive integer (rapid cases per round)")
		}
		c.Checks = n
		return nil
	}, func(c Config) string { return positive(c.Checks) }},
	{"KVERIFY_TRACE_DIR", func(c *Config, v string) error { c.TraceDir = v; return nil }, func(c Config) string { return c.TraceDir }},
	{"KVERIFY_SUBJECT", func(c *Config, v string) error { c.Subject = v; return nil }, func(c Config) string { return c.Subject }},
	{"KVERIFY_COMPONENTS", func(c *Config, v string) (err error) {
		c.Components, err = names(v, false)
		return err
	}, func(c Config) string { return strings.Join(c.Components, ",") }},
	{"KVERIFY_SUBJECTS", func(c *Config, v string) (err error) {
		c.Subjects, err = names(v, false)
		return err
	}, func(c Config) string { return strings.Join(c.Subjects, ",") }},
	{"KVERIFY_ONLY", func(c *Config, v string) (err error) {
		c.Only, err = names(v, true)
		return err
	}, func(c Config) string { return strings.Join(c.Only, ",") }},
	{"KVERIFY_LIST", func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errors.New("want 1 or 0")
		}
		c.List = b
		return nil
	}, func(c Config) string {
		if c.List {
			return "1"
		}
		return ""
	}},
	{"KVERIFY_REPLAY", func(c *Config, v string) error { c.Replay = v; return nil }, func(c Config) string { return c.Replay }},
	{"KVERIFY_REPLAY_SUBJECT", func(c *Config, v string) error { c.ReplaySubject = v; return nil }, func(c Config) string { return c.ReplaySubject }},
	{"KVERIFY_MUTANT", func(c *Config, v string) error { c.Mutant = v; return nil }, func(c Config) string { return c.Mutant }},
	{"KVERIFY_HANG_AFTER", func(c *Config, v string) (err error) {
		c.HangAfter, err = duration(v, true)
		return err
	}, func(c Config) string { return durationString(c.HangAfter) }},
	seedVariable("KVERIFY_LINEAR_SEED", "the seed a failure printed", func(c *Config) (*uint64, *bool) { return &c.LinearSeed, &c.HasLinearSeed }),
	seedVariable("KVERIFY_RACE_SEED", "the race seed a failure printed", func(c *Config) (*uint64, *bool) { return &c.RaceSeed, &c.HasRaceSeed }),
	{"KVERIFY_ACTIVE_MUTANT", func(c *Config, v string) (err error) {
		c.ActiveMutant, err = natural(v, "the mutant's number in the schema build")
		return err
	}, func(c Config) string { return positive(c.ActiveMutant) }},
	{"KVERIFY_BENCH_ROUND", func(c *Config, v string) (err error) {
		c.BenchRound, err = natural(v, "kverify bench's round, from 0")
		return err
	}, func(c Config) string { return positive(c.BenchRound) }},
	{"KVERIFY_DEEPER", func(c *Config, v string) (err error) {
		c.Deeper, err = natural(v, "steps added to each exhaustive check's depth bound")
		return err
	}, func(c Config) string { return positive(c.Deeper) }},
	{"KVERIFY_SHARD", func(c *Config, v string) error {
		k, n, err := ParseShard(v)
		c.ShardK, c.ShardN = k, n
		return err
	}, func(c Config) string {
		if c.ShardN == 0 {
			return ""
		}
		return fmt.Sprintf("%d/%d", c.ShardK, c.ShardN)
	}},
	{"KVERIFY_CACHE", func(c *Config, v string) error { c.Cache = v; return nil }, func(c Config) string { return c.Cache }},
	{"KVERIFY_MUTANT_SUBJECT", func(c *Config, v string) error { c.MutantSubject = v; return nil }, func(c Config) string { return c.MutantSubject }},
}

// seedVariable is a seed variable: an unsigned integer, and whether it
// was set (0 is a seed like any other). field picks the Config's pair;
// what says where the value comes from, for the error.
func seedVariable(name, what string, field func(*Config) (*uint64, *bool)) variable {
	return variable{name, func(c *Config, v string) error {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return fmt.Errorf("want an unsigned integer (%s)", what)
		}
		seed, set := field(c)
		*seed, *set = n, true
		return nil
	}, func(c Config) string {
		if seed, set := field(&c); *set {
			return strconv.FormatUint(*seed, 10)
		}
		return ""
	}}
}

// ParseShard parses "K/N", 1 <= K <= N.
func ParseShard(v string) (k, n int, err error) {
	if _, err := fmt.Sscanf(v, "%d/%d", &k, &n); err != nil || n < 1 || k < 1 || k > n || fmt.Sprintf("%d/%d", k, n) != v {
		return 0, 0, fmt.Errorf("want K/N with 1 <= K <= N, not %q", v)
	}
	return k, n, nil
}

// natural parses a non-negative integer; what says what it counts.
func natural(v, what string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("want a non-negative integer (%s)", what)
	}
	return n, nil
}

// Names lists every variable, in table order.
func Names() []string {
	out := make([]string, len(variables))
	for i, v := range variables {
		out[i] = v.name
	}
	return out
}

// Parse reads the variables through getenv. An empty variable is not set.
// Every malformed one is reported, each naming the variable and its value.
func Parse(getenv func(string) string) (Config, error) {
	var c Config
	var errs []error
	for _, v := range variables {
		s := getenv(v.name)
		if s == "" {
			continue
		}
		if err := v.parse(&c, s); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %v", v.name, s, err))
		}
	}
	return c, errors.Join(errs...)
}

// Lookup parses the one variable name of the process's environment (a
// malformed value is an error naming it), for code that must not depend on
// the others: a schema build's dispatch, which runs before any test.
func Lookup(name string) (Config, error) {
	return Parse(func(n string) string {
		if n != name {
			return ""
		}
		return os.Getenv(n)
	})
}

// Load is Parse of the process's environment. It reads the environment at
// each call (a dozen lookups), not once: tests change it with t.Setenv.
func Load() (Config, error) { return Parse(os.Getenv) }

// Environ returns the set fields as NAME=value entries for a child
// process's environment. Appended after others, they override them
// (os/exec keeps the last value of a duplicate key).
func (c Config) Environ() []string {
	var out []string
	for _, v := range variables {
		if s := v.format(c); s != "" {
			out = append(out, v.name+"="+s)
		}
	}
	return out
}

func duration(v string, positiveOnly bool) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("want a duration such as 30s or 500ms: %v", err)
	}
	if d < 0 || (positiveOnly && d == 0) {
		return 0, errors.New("want a positive duration")
	}
	return d, nil
}

func durationString(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return d.String()
}

func positive(n int) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// names splits a comma-separated list, refusing empty names, and with
// qualified, names that are not component/check.
func names(v string, qualified bool) ([]string, error) {
	out := strings.Split(v, ",")
	for _, n := range out {
		if strings.TrimSpace(n) != n || n == "" {
			return nil, fmt.Errorf("empty or padded name %q in a comma-separated list", n)
		}
		if qualified {
			if c, k, ok := strings.Cut(n, "/"); !ok || c == "" || k == "" {
				return nil, fmt.Errorf("%q is not component/check", n)
			}
		}
	}
	return out, nil
}
