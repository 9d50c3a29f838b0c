package checkkit

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Space is a bounded state space of a check's choices that Explore
// searches exhaustively: every sequence of at most Depth steps drawn from
// Steps, where each step is one of the choices the check owns (an
// operation, which worker makes a call, a call started while others are
// blocked, a fault the server answers with, a goroutine let run first).
//
// The subject cannot be copied, so each sequence runs from the start on a
// fresh subject (Run). The search is breadth first over abstract states:
// the key Run returns names what the model says the state is (the model's
// state and the calls in flight), and a state reached again by another
// sequence is not expanded again. That is the reduction that makes a
// bound meaningful, and its assumption is stated with every result: two
// sequences that leave the model in the same state leave a correct
// subject in states no later step can tell apart. A subject whose bug
// depends on the path, not the state, can hide from it; Coverage.Sequences
// says how many sequences the states stand for, and Reduce=false runs them
// all (see Space.Reduce).
type Space[S any] struct {
	// Name is what the coverage line calls the alphabet ("queue ops").
	Name string
	// Steps is the alphabet, in the order children are tried: a
	// counterexample is the shortest, and among the shortest the first in
	// this order.
	Steps []S
	// Depth is the bound: the longest sequence tried.
	Depth int
	// Run runs steps on a fresh subject and model from the start, checking
	// every outcome, and returns the key of the abstract state reached and
	// which steps of the alphabet are enabled there (indexes into Steps).
	// A violation comes back as err, with the steps recorded on the trace.
	Run func(steps []S) (key string, enabled []int, err error)
	// NoReduce, when set, expands every sequence, not one per state: the
	// bound is then the number of sequences, not states.
	NoReduce bool
}

// Coverage is what a check explored, reported with its verdict (the JSON
// report's coverage, the table's column).
type Coverage struct {
	// Mode is "exhaustive": every sequence up to Bound, reduced by state
	// unless the bound says "unreduced".
	Mode string `json:"mode"`
	// Bound states the bound in words ("depth 8 over 11 queue ops").
	Bound string `json:"bound"`
	// Depth is the bound in steps.
	Depth int `json:"depth,omitempty"`
	// States is the number of distinct abstract states reached.
	States int `json:"states"`
	// Transitions is the number of (state, step) pairs run.
	Transitions int `json:"transitions"`
	// Interleavings is the number of sequences run against the subject,
	// each on a fresh one (for exhaustive mode, one per transition).
	Interleavings int `json:"interleavings"`
	// Sequences is how many step sequences of at most Depth steps the
	// explored states stand for (paths in the state graph): the size of
	// the unreduced space the search covered.
	Sequences float64 `json:"sequences,omitempty"`
	// Exhausted is true when the search closed: every state reachable at
	// any depth was explored before the bound. False means the bound cut
	// it, with Frontier states left unexpanded.
	Exhausted bool `json:"exhausted"`
	// Frontier is the number of states at the bound whose successors were
	// not explored.
	Frontier int `json:"frontier,omitempty"`
	// Stopped is true when the search ended at a violation, before its
	// bound: the counts are what it had explored by then.
	Stopped bool `json:"stopped,omitempty"`
	// Excused is the number of runs that broke a guarantee the subject's
	// declared divergence covers: they end there, unexpanded.
	Excused int `json:"excused,omitempty"`
	// Ops is the number of subject operations executed in all.
	Ops int `json:"ops"`
	// Shard is "K/N" when the search explored only its K-th of N slices
	// (KVERIFY_SHARD): the shards' coverages add up to the whole search's,
	// except that the states before the split, and states reached in more
	// than one slice, are counted by every shard that reached them.
	Shard string `json:"shard,omitempty"`
	// Seconds is the exploration's wall time, for rates (never a bound).
	Seconds float64 `json:"seconds"`
}

// String is the coverage as the table's column prints it.
func (c Coverage) String() string {
	closed := fmt.Sprintf("bound hit, %d frontier", c.Frontier)
	switch {
	case c.Stopped:
		closed = "stopped at a violation"
	case c.States == 0 && c.Excused > 0:
		closed = "every run meets the declared divergence"
	case c.Exhausted:
		closed = "closed"
	}
	return fmt.Sprintf("%s: %d states, %d transitions, %.3g sequences (%s)", c.Bound, c.States, c.Transitions, c.Sequences, closed)
}

// Plus is the coverage of two searches of one check (over setups, initial
// sizes, modes) as one: counts add up, and the whole closed only if both
// did. The zero Coverage is the identity; the bound is the caller's to
// restate.
func (c Coverage) Plus(o Coverage) Coverage {
	if c.Mode == "" {
		return o
	}
	c.States += o.States
	c.Transitions += o.Transitions
	c.Interleavings += o.Interleavings
	c.Sequences += o.Sequences
	c.Frontier += o.Frontier
	c.Excused += o.Excused
	c.Ops += o.Ops
	c.Seconds += o.Seconds
	c.Exhausted = c.Exhausted && o.Exhausted
	c.Stopped = c.Stopped || o.Stopped
	return c
}

// CoveragePrefix starts the log line by which a check reports its
// coverage to the kverify command: the prefix, a space, and the
// Coverage as JSON.
const CoveragePrefix = "KVERIFY COVERAGE"

// ReportCoverage logs c on t in the form the kverify command reads.
func ReportCoverage(t testing.TB, c Coverage) {
	t.Helper()
	b, _ := json.Marshal(c)
	t.Logf("%s %s", CoveragePrefix, b)
}

// ParseCoverage finds the last coverage line in a check's output.
func ParseCoverage(output string) (Coverage, bool) {
	i := strings.LastIndex(output, CoveragePrefix+" ")
	if i < 0 {
		return Coverage{}, false
	}
	line := output[i+len(CoveragePrefix)+1:]
	if j := strings.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	var c Coverage
	if json.Unmarshal([]byte(line), &c) != nil {
		return Coverage{}, false
	}
	return c, true
}

// Every is every index of an alphabet of n steps: the enabled steps of a
// Run whose steps are always all enabled (an unreduced search over
// faults, answers, clock moves).
func Every(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// node is a state the search reached, with the shortest sequence that
// reaches it (the one it replays to expand it).
type node struct {
	id      int
	path    []int
	enabled []int
}

// Explore searches sp breadth first to its depth bound (plus the
// configured extra depth, KVERIFY_DEEPER) and returns what it covered.
// The first violation ends the search: its sequence is the shortest
// counterexample, and err carries the trace Run recorded. Progress is
// reported after every run, so the watchdog sees a long search working.
func Explore[S any](cfg Config, sp Space[S]) (cov Coverage, err error) {
	start := time.Now()
	env := cfg.environ()
	depth := sp.Depth + env.Deeper
	cov = Coverage{Mode: "exhaustive", Depth: depth,
		Bound: fmt.Sprintf("depth %d over %d %s", depth, len(sp.Steps), sp.Name)}
	split := env.ShardN > 1 // not yet split among the shards
	if env.ShardN > 0 {
		cov.Shard = fmt.Sprintf("%d/%d", env.ShardK, env.ShardN)
	}
	if sp.NoReduce {
		cov.Bound += ", unreduced"
	}
	run := func(path []int) (string, []int, error) {
		cov.Interleavings++
		cov.Ops += len(path)
		cfg.Progress.Op(fmt.Sprintf("explore %d/%d", len(path), depth))
		steps := make([]S, len(path))
		for i, p := range path {
			steps[i] = sp.Steps[p]
		}
		return sp.Run(steps)
	}
	var edges [][]int // successors of each expanded state, by id
	seen := map[string]int{}
	defer func() {
		cov.Stopped = err != nil
		cov.Seconds = time.Since(start).Seconds()
		cov.States = len(seen) // with NoReduce, a state has many nodes
		cov.Sequences = sequences(edges, depth)
	}()

	key, enabled, err := run(nil)
	if err != nil && cfg.Excused(err) {
		// Even the empty sequence meets the declared divergence (a
		// subject that cannot end a run cleanly): nothing to expand.
		cov.Excused++
		return cov, nil
	}
	if err != nil {
		return cov, err
	}
	seen[key] = 0
	edges = append(edges, nil)
	level := []node{{enabled: enabled}}
	for d := 0; d < depth && len(level) > 0; d++ {
		if split && len(level) >= env.ShardN {
			// The first level with a state for every shard: this shard
			// expands every N-th from its K-th (the level's order is the
			// same in every shard), and everything below them.
			var mine []node
			for i, n := range level {
				if i%env.ShardN == env.ShardK-1 {
					mine = append(mine, n)
				}
			}
			level, split = mine, false
		}
		var next []node
		for _, n := range level {
			for _, a := range n.enabled {
				path := append(append(make([]int, 0, len(n.path)+1), n.path...), a)
				cov.Transitions++
				key, enabled, err := run(path)
				if err != nil && cfg.Excused(err) {
					// The subject's declared divergence: counted, and
					// not explored past (the declaration's report names
					// the first).
					cov.Excused++
					continue
				}
				if err != nil {
					return cov, err
				}
				id, old := seen[key]
				if !old || sp.NoReduce {
					id = len(edges)
					edges = append(edges, nil)
					if !old {
						seen[key] = id
					}
					next = append(next, node{id: id, path: path, enabled: enabled})
				}
				edges[n.id] = append(edges[n.id], id)
			}
		}
		level = next
	}
	// A state at the bound with no step enabled is a leaf, not frontier:
	// the search closed there too.
	for _, n := range level {
		if len(n.enabled) > 0 {
			cov.Frontier++
		}
	}
	cov.Exhausted = cov.Frontier == 0
	return cov, nil
}

// sequences counts the paths of at most depth steps from state 0 in the
// explored graph. Every state on such a path but its last was reached at
// a smaller depth, so was expanded: the count is exact.
func sequences(edges [][]int, depth int) float64 {
	if len(edges) == 0 {
		return 0
	}
	ways := make([]float64, len(edges))
	ways[0] = 1
	total := 1.0
	for range depth {
		next := make([]float64, len(edges))
		for s, w := range ways {
			if w == 0 {
				continue
			}
			for _, t := range edges[s] {
				next[t] += w
				total += w
			}
		}
		ways = next
	}
	return total
}
