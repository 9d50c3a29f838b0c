package checkkit

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Declared divergences: what a subject declares it breaks on purpose, how a
// violation is matched against the declaration, and how a check goes on
// past the violations it excuses.

// Divergence declares that a subject breaks a check on purpose: a known,
// documented difference, with the reason and the subject's source line.
type Divergence struct {
	Check    string // Check.Name
	Reason   string
	Upstream string // file:line where the subject's behaviour comes from
	// Intermittent says the behaviour shows only when the schedule hits a
	// window (a call in flight as another returns): a run that does not
	// observe it passes the check instead of reporting the declaration as
	// stale. Declare it only where another check observes the same
	// behaviour every run.
	Intermittent bool
	// Guarantees, when set, narrow the declaration to violations of these
	// guarantees: a violation of any other guarantee fails the check as
	// usual, so that declaring one known defect does not hide a different
	// bug the same check finds.
	Guarantees []string
	// Shape, when set, is a regular expression the violation must match
	// (its guarantee, ": ", then its detail; see Violation.Shape): the
	// operations and outcomes of the declared behaviour, so that another
	// violation of the same guarantee (an item dropped at shutdown where
	// the declaration excuses an item handed out after it) is reported
	// as new.
	Shape string
	// Class says what kind of difference this is, for whoever must act on
	// it: ClassDefect (the subject breaks its own documented promise; an
	// upstream-ready report lives under traces/findings), ClassDesign (a
	// deliberate choice its maintainers stated) or ClassPrecondition (a
	// caller obligation the subject documents; our implementation checks
	// it, upstream's leaves it to the caller).
	Class string
	// Evidence is the upstream source of the class: the doc comment the
	// behaviour contradicts or states, or the maintainers' words in an
	// issue or pull request, with its address.
	Evidence string
	// Releases, for a subject that spans releases (client-go@VERSION),
	// is the range of releases the declaration holds for, as
	// "[>=vA.B.C] [<vX.Y.Z]", intervals joined by "||" (see
	// subjects/upstream.InRange); empty means every release the subject is
	// built from. A check may carry several declarations whose ranges do
	// not overlap: one per release era of the behaviour.
	Releases string
	// Gate, for a subject whose behaviour a feature gate switches
	// (client-go's WatchListClient, ...), is the gate the declaration
	// holds under: "Name" while it is on, "!Name" while it is off,
	// several joined by "," when all must hold ("!InOrderInformers,
	// WatchListClient"); empty whatever the gates. The subject's registry
	// evaluates it with Releases (subjects/upstream.ForRelease).
	Gate string
}

// The classes of a declared divergence (Divergence.Class).
const (
	ClassDefect       = "defect"
	ClassDesign       = "design"
	ClassPrecondition = "precondition"
)

// Or is one declaration for a check that meets d or e, whichever a run
// shows first (a check carries one declaration per release and gate): d's
// check, releases, gate and intermittence, both declarations' guarantees,
// shapes, reasons, sources and evidence, and the class of a defect if
// either is one.
func (d Divergence) Or(e Divergence) Divergence {
	d.Guarantees = append(slices.Clip(d.Guarantees), e.Guarantees...)
	d.Shape += "|" + e.Shape
	d.Reason += "; and " + e.Reason
	d.Upstream += "; " + e.Upstream
	d.Evidence += "; and " + e.Evidence
	if e.Class == ClassDefect {
		d.Class = ClassDefect
	}
	return d
}

// covers reports whether err is behaviour the declaration covers.
func (d Divergence) covers(err error) bool {
	if isUnfinished(err) {
		return false // no verdict: nothing was observed to excuse
	}
	var v *Violation
	isV := errors.As(err, &v)
	if len(d.Guarantees) > 0 && (!isV || !slices.Contains(d.Guarantees, v.Guarantee)) {
		return false
	}
	if d.Shape == "" {
		return true
	}
	re, rerr := shapeRegexp(d.Shape)
	if rerr != nil {
		return false // Run reports the malformed declaration
	}
	if isV {
		return re.MatchString(v.Shape())
	}
	return re.MatchString(err.Error())
}

// shapes caches compiled Shapes: a machine check may ask of thousands of
// violations.
var shapes sync.Map // string -> *regexp.Regexp

func shapeRegexp(shape string) (*regexp.Regexp, error) {
	if re, ok := shapes.Load(shape); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(shape)
	if err != nil {
		return nil, err
	}
	shapes.Store(shape, re)
	return re, nil
}

// excuses describes what the declaration covers, for the message of a
// violation it does not.
func (d Divergence) excuses() string {
	var parts []string
	if len(d.Guarantees) > 0 {
		parts = append(parts, "guarantees "+strings.Join(d.Guarantees, ", "))
	}
	if d.Shape != "" {
		parts = append(parts, "violations matching /"+d.Shape+"/")
	}
	if len(parts) == 0 {
		return "everything"
	}
	return strings.Join(parts, " and ")
}

// Excused reports whether err is a violation the subject's declared
// divergence for the running check covers (see Divergence), and records it
// if so. A check made of several scenarios asks it of each scenario's
// violation and goes on with the next one when it is excused, so that a
// declared violation does not hide the rest of the check; Run then reports
// the declaration as observed. Rapid asks it of every case's violation and
// counts an excused case as passed. Nil, or a violation no declaration
// covers, is not excused: the check returns it as usual.
func (c Config) Excused(err error) bool {
	if err == nil || c.declared == nil || !c.declared.d.covers(err) {
		return false
	}
	c.declared.mu.Lock()
	defer c.declared.mu.Unlock()
	if c.declared.n == 0 {
		c.declared.excused = err
	}
	c.declared.n++
	return true
}

// declared is a check's declaration and what it excused while the check
// ran on: the first violation (the one reported) and a count, since a
// machine check may excuse a violation in most of its cases.
type declared struct {
	d       Divergence
	mu      sync.Mutex
	excused error
	n       int
}

// first returns how many violations were excused, and the first.
func (d *declared) first() (int, error) {
	if d == nil {
		return 0, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n, d.excused
}

// WithDivergences declares the subject's known differences. A declared
// check must fail (it is then reported as skipped with the reason); if it
// passes, the declaration is stale and Run reports an error.
func WithDivergences(ds ...Divergence) Option {
	return func(o *runOptions) {
		for _, d := range ds {
			o.divergences[d.Check] = d
		}
	}
}

// DivergencePrefix starts the skip message of a declared divergence; the
// kverify command recognises it.
const DivergencePrefix = "DECLARED DIVERGENCE"

// ranOn is the line saying that the check ran on past n excused
// violations (and ended on another it covers, if ended), or "".
func ranOn(n int, ended bool) string {
	switch {
	case n == 0:
		return ""
	case ended:
		return fmt.Sprintf("\n  excused %d violation(s) of this shape before the check ended on the one above", n)
	}
	return fmt.Sprintf("\n  excused %d violation(s) of this shape; the rest of the check ran on and passed", n)
}

// Unexcused returns the problems the subject's declared divergence for
// the running check does not excuse, each judged on its own (see
// Excused): a check that gathers every problem into one violation (Worst)
// would otherwise have a declaration that matches its first line excuse
// the others too.
func (c Config) Unexcused(problems []Problem) []Problem {
	return slices.DeleteFunc(problems, func(p Problem) bool { return c.Excused(Broke(p.Guarantee, "%s", p.Detail)) })
}
