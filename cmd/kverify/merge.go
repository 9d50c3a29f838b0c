package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kverify/kverify/mutants"
	"github.com/kverify/kverify/subjects"
)

// mergeShards joins the --json reports of the shards of one catalogue
// (kverify mutants --shard K/N) into one kill matrix, as one run of the
// whole catalogue would have found it: every mutant's kills and times,
// then, for each check none of the shards saw kill a mutant, a search for
// one it kills (building what that needs), then the bars, the matrix file
// and the reports.
func mergeShards(files []string, c commonFlags, rf reportFlags, saveMatrix string, medianBar, worstBar time.Duration, schema bool, parallel int, args []string) int {
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kverify:", err)
		return 2
	}
	start := time.Now()
	race, repeat := false, 1
	seen := map[string]string{}        // mutant -> the report it came from
	merged := map[string]killOutcome{} // mutant -> its outcome
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "kverify: --merge:", err)
			return 2
		}
		var r report
		if err := json.Unmarshal(data, &r); err != nil || r.Format != ReportVersion || r.Command != "mutants" {
			fmt.Fprintf(os.Stderr, "kverify: --merge: %s is not a %s report of kverify mutants (%v)\n", f, ReportVersion, err)
			return 2
		}
		race = race || r.Race
		repeat = max(repeat, argInt(r.Args, "repeat", 1))
		for _, mr := range r.Mutants {
			if _, ok := mutants.ByID(mr.ID); !ok {
				fmt.Fprintf(os.Stderr, "kverify: --merge: %s: mutant %s is not in the catalogue\n", f, mr.ID)
				return 2
			}
			if other, dup := seen[mr.ID]; dup {
				fmt.Fprintf(os.Stderr, "kverify: --merge: mutant %s is in %s and in %s: shards must be disjoint\n", mr.ID, other, f)
				return 2
			}
			seen[mr.ID] = f
			o := killOutcome{by: mr.KilledBy, runs: mr.Runs}
			for _, t := range mr.TTKs {
				o.ttks = append(o.ttks, time.Duration(t*float64(time.Second)))
			}
			if mr.Error != "" {
				o.err = errors.New(mr.Error)
			}
			merged[mr.ID] = o
		}
	}
	// Catalogue order, as one run lists them.
	var ms []mutants.Mutant
	var outcomes []killOutcome
	for _, m := range mutants.Catalogue {
		if o, ok := merged[m.ID]; ok {
			ms, outcomes = append(ms, m), append(outcomes, o)
		}
	}
	var comps []string
	for _, name := range subjects.Components() {
		if slices.ContainsFunc(ms, func(m mutants.Mutant) bool { return m.Component == name }) {
			comps = append(comps, name)
		}
	}
	fmt.Fprintf(os.Stderr, "kverify: --merge: %d mutants from %d reports\n", len(ms), len(files))
	info := checkInfo()
	matrix, _ := readMatrix(root)
	prefer := mutants.Killers(matrix, ms)

	// Suites for the search for killers: the mutants of every component
	// with a check that no shard saw kill.
	weakComps := map[string]bool{}
	for key, n := range killCounts(info, comps, ms, outcomes) {
		if n == 0 {
			comp, _, _ := strings.Cut(key, "/")
			weakComps[comp] = true
		}
	}
	var shared *suite
	if len(weakComps) > 0 {
		var cands []mutants.Mutant
		for _, m := range ms {
			if weakComps[m.Component] {
				cands = append(cands, m)
			}
		}
		var sch *mutants.Schema
		if schema {
			sch, shared = buildSchema(root, cands, race)
		}
		for i, m := range ms {
			if !weakComps[m.Component] || outcomes[i].err != nil {
				continue
			}
			subject, err := subjects.ResolveOne("mutant:" + m.ID)
			if err != nil {
				continue
			}
			env, err := c.env([]string{m.Component})
			if err != nil {
				fmt.Fprintln(os.Stderr, "kverify:", err)
				return 1
			}
			if sch != nil && sch.Env(m.ID) != "" {
				env = append(env, sch.Env(m.ID))
				outcomes[i].suite = shared
			} else {
				// Built only if the search gets to it.
				outcomes[i].lazy = &lazySuite{build: func() (*suite, error) { return subjectSuite(root, subject, race) }}
			}
			run, _, wanted := mutantRun(subject, m, c, env)
			run.failfast = true
			outcomes[i].run, outcomes[i].wanted = run, wanted
		}
	}
	rep := newReport("mutants", args, race, c.traces)
	rc := matrixRun{ms: ms, outcomes: outcomes, comps: comps, info: info, prefer: prefer, repeat: repeat,
		medianBar: medianBar, worstBar: worstBar, parallel: parallel, saveMatrix: saveMatrix, rep: rep, rf: rf, start: start, race: race, traces: c.traces}.finish()
	if shared != nil {
		shared.Close()
	}
	return rc
}

// argInt is the value of flag name in a command line (its default when
// absent or malformed).
func argInt(args []string, name string, def int) int {
	for i, a := range args {
		a = strings.TrimLeft(a, "-")
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			if n, err := strconv.Atoi(v); err == nil {
				return n
			}
		}
		if a == name && i+1 < len(args) {
			if n, err := strconv.Atoi(args[i+1]); err == nil {
				return n
			}
		}
	}
	return def
}

// shard is --shard K/N (n 0 or 1: the whole selection).
type shard struct{ k, n int }

func parseShard(s string) (shard, error) {
	if s == "" {
		return shard{1, 1}, nil
	}
	var sh shard
	if _, err := fmt.Sscanf(s, "%d/%d", &sh.k, &sh.n); err != nil || sh.n < 1 || sh.k < 1 || sh.k > sh.n || fmt.Sprintf("%d/%d", sh.k, sh.n) != s {
		return shard{}, fmt.Errorf("--shard %q: want K/N with 1 <= K <= N", s)
	}
	return sh, nil
}

// of is the shard's slice of ms: every n-th mutant from the k-th, so that
// the shards of one selection are disjoint, cover it, and each holds
// mutants of every component.
func (sh shard) of(ms []mutants.Mutant) []mutants.Mutant {
	var out []mutants.Mutant
	for i, m := range ms {
		if i%sh.n == sh.k-1 {
			out = append(out, m)
		}
	}
	return out
}
