package mutants

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
)

// MatrixFile is the committed kill matrix, relative to the module root:
// for every catalogued mutant, the checks a full run of kverify mutants
// saw kill it and its worst time to kill. make mutants rewrites it; CI
// reads it to pick a covering sample (Cover) instead of running every
// mutant, which takes most of CI's 30 minutes.
const MatrixFile = "mutants/matrix.tsv"

// Row is one mutant's line of the matrix.
type Row struct {
	ID       string
	KilledBy []string // component-relative check names, as kverify mutants reports them
	Worst    time.Duration
}

// Matrix is the kill matrix, one row per mutant, in catalogue order.
type Matrix []Row

const matrixHeader = "# kill matrix: mutant\tkilled by (checks, comma-separated)\tworst time to kill. Written by kverify mutants --save-matrix (make mutants); do not edit."

// WriteMatrix writes m in the matrix file's format.
func WriteMatrix(w io.Writer, m Matrix) error {
	if _, err := fmt.Fprintln(w, matrixHeader); err != nil {
		return err
	}
	for _, r := range m {
		if _, err := fmt.Fprintf(w, "%s\t%s\t%s\n", r.ID, strings.Join(r.KilledBy, ","), r.Worst.Round(time.Millisecond)); err != nil {
			return err
		}
	}
	return nil
}

// ReadMatrix parses a matrix file; a malformed line is an error naming it.
func ReadMatrix(r io.Reader) (Matrix, error) {
	var m Matrix
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 3 || f[0] == "" {
			return nil, fmt.Errorf("matrix line %d: want 3 tab-separated fields (mutant, killers, worst time), got %q", n, line)
		}
		d, err := time.ParseDuration(f[2])
		if err != nil {
			return nil, fmt.Errorf("matrix line %d: worst time to kill: %v", n, err)
		}
		row := Row{ID: f[0], Worst: d}
		if f[1] != "" {
			row.KilledBy = strings.Split(f[1], ",")
		}
		m = append(m, row)
	}
	return m, sc.Err()
}

// CoverDepth is how many mutants Cover keeps per check: two, because a
// kill by the race detector is a matter of schedule (a mutant the matrix
// saw one check kill may be killed by another check first, and the first
// one may then miss it when run alone), so one mutant per check leaves a
// check without a kill now and then.
const CoverDepth = 2

// Cover picks, from the matrix rows of ms, a sample that still exercises
// every check: for each check some row names, the CoverDepth mutants it
// killed fastest. A check no row names gets no mutant (the run then
// reports it as killing nothing). The result keeps ms's order.
func Cover(m Matrix, ms []Mutant) []Mutant {
	keep := map[string]bool{}
	for _, rs := range fastestByCheck(m, ms) {
		for _, r := range rs[:min(CoverDepth, len(rs))] {
			keep[r.ID] = true
		}
	}
	var out []Mutant
	for _, mu := range ms {
		if keep[mu.ID] {
			out = append(out, mu)
		}
	}
	return out
}

// Killers maps each check some row of ms names (component/check) to the
// mutant the matrix says it killed fastest: the one to try first when
// looking for a mutant the check kills.
func Killers(m Matrix, ms []Mutant) map[string]string {
	out := map[string]string{}
	for k, rs := range fastestByCheck(m, ms) {
		out[k] = rs[0].ID
	}
	return out
}

// fastestByCheck maps each check (component/check) that a row of ms names
// to those rows, fastest kill first.
func fastestByCheck(m Matrix, ms []Mutant) map[string][]Row {
	rows := map[string]Row{}
	for _, r := range m {
		rows[r.ID] = r
	}
	byCheck := map[string][]Row{}
	for _, mu := range ms {
		r, ok := rows[mu.ID]
		if !ok {
			continue
		}
		for _, k := range r.KilledBy {
			key := mu.Component + "/" + strings.TrimSuffix(k, "*")
			byCheck[key] = append(byCheck[key], r)
		}
	}
	for _, rs := range byCheck {
		slices.SortStableFunc(rs, func(a, b Row) int { return cmp.Compare(a.Worst, b.Worst) })
	}
	return byCheck
}

// Missing lists the catalogue's mutants that have no row, and rows whose
// mutant is no longer catalogued, sorted: a matrix to regenerate.
func (m Matrix) Missing() (unlisted, stale []string) {
	have := map[string]bool{}
	for _, r := range m {
		have[r.ID] = true
	}
	for _, mu := range Catalogue {
		if !have[mu.ID] {
			unlisted = append(unlisted, mu.ID)
		}
		delete(have, mu.ID)
	}
	for id := range have {
		stale = append(stale, id)
	}
	sort.Strings(stale)
	return unlisted, stale
}
