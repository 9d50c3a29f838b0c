package fifo

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	spec "github.com/kverify/kverify/spec/fifo"
)

// model is what a race round needs of either model.
type model struct {
	d     *spec.DeltaFIFO
	r     *spec.RealFIFO
	known spec.Known
}

func (m model) pop() string {
	if m.r != nil {
		d, initial, ok := m.r.Pop()
		if !ok {
			return "closed"
		}
		m.r.Popped(1)
		return fmt.Sprintf("%s initial=%t", spec.Deltas([]spec.Delta{d}), initial)
	}
	ds, initial, ok := m.d.Pop()
	if !ok {
		return "closed"
	}
	m.d.Popped()
	return fmt.Sprintf("%s initial=%t", spec.Deltas(ds), initial)
}

// fop is one call of a race round, on the subject and on the model; each
// returns what the caller observed.
type fop struct {
	name  string
	subj  func(f FIFO) string
	model func(m model) string
}

func ver(key string, v int) spec.Obj { return spec.Obj{Key: key, Version: v} }

func addOp(o spec.Obj) fop {
	return fop{"Add(" + o.String() + ")",
		func(f FIFO) string { return errString(f.Add(object(o))) },
		func(m model) string {
			if m.r != nil {
				m.r.Add(o)
			} else {
				m.d.Add(o)
			}
			return ""
		}}
}

func updateOp(o spec.Obj) fop {
	return fop{"Update(" + o.String() + ")",
		func(f FIFO) string { return errString(f.Update(object(o))) },
		func(m model) string {
			if m.r != nil {
				m.r.Update(o)
			} else {
				m.d.Update(o)
			}
			return ""
		}}
}

func deleteOp(o spec.Obj) fop {
	return fop{"Delete(" + o.String() + ")",
		func(f FIFO) string { return errString(f.Delete(object(o))) },
		func(m model) string {
			if m.r != nil {
				m.r.Delete(o)
			} else {
				m.d.Delete(o, m.known)
			}
			return ""
		}}
}

func replaceOp(os ...spec.Obj) fop {
	names := make([]string, len(os))
	for i, o := range os {
		names[i] = o.String()
	}
	return fop{"Replace(" + strings.Join(names, ",") + ")",
		func(f FIFO) string {
			list := make([]any, len(os))
			for i, o := range os {
				list[i] = object(o)
			}
			return errString(f.Replace(list, "9"))
		},
		func(m model) string {
			if m.r != nil {
				m.r.Replace(os, "9", m.known)
			} else {
				m.d.Replace(os, m.known)
			}
			return ""
		}}
}

var resyncOp = fop{"Resync",
	func(f FIFO) string { return errString(f.Resync()) },
	func(m model) string {
		if m.r != nil {
			m.r.Resync(m.known)
		} else {
			m.d.Resync(m.known)
		}
		return ""
	}}

var popOp = fop{"Pop",
	func(f FIFO) string {
		var got []Delta
		var initial bool
		_, err := f.Pop(func(ds []Delta, init bool) error { got, initial = ds, init; return nil })
		if err != nil {
			return "closed"
		}
		ds, cerr := deltasOf(got)
		if cerr != nil {
			return cerr.Error()
		}
		return fmt.Sprintf("%s initial=%t", spec.Deltas(ds), initial)
	},
	model.pop}

var closeOp = fop{"Close",
	func(f FIFO) string { f.Close(); return "" },
	func(m model) string {
		if m.r != nil {
			m.r.Close()
		} else {
			m.d.Close()
		}
		return ""
	}}

var syncedOp = fop{"HasSynced",
	func(f FIFO) string { return fmt.Sprint(f.HasSynced()) },
	func(m model) string {
		if m.r != nil {
			return fmt.Sprint(m.r.Synced())
		}
		return fmt.Sprint(m.d.Synced())
	}}

// fpair is two calls raced after a setup. The known objects are fixed for
// the round: the store holds them before the FIFO is made.
type fpair struct {
	name  string
	known []spec.Obj
	setup []fop
	a, b  fop
}

var (
	x1, x2, y1, z1, k1 = ver("x", 1), ver("x", 2), ver("y", 3), ver("z", 4), ver("k", 5)
)

// fpairs are the pairs: every mutator against Pop on a queued key, Pop on
// an empty FIFO against a mutator that releases it, and the mutators
// against each other on one key.
var fpairs = []fpair{
	{name: "Pop/Add of the popped key", setup: []fop{addOp(x1)}, a: popOp, b: addOp(x2)},
	{name: "Pop/Update of the popped key", setup: []fop{addOp(x1), addOp(y1)}, a: popOp, b: updateOp(x2)},
	{name: "Pop/Delete of the popped key", known: []spec.Obj{x1}, setup: []fop{updateOp(x1)}, a: popOp, b: deleteOp(x2)},
	{name: "Pop/Replace", known: []spec.Obj{k1}, setup: []fop{addOp(x1), addOp(y1)}, a: popOp, b: replaceOp(x2, z1)},
	{name: "Replace/Pop of the first Replace", known: []spec.Obj{k1}, a: replaceOp(x1, y1), b: popOp},
	{name: "Pop/HasSynced at the end of the initial list", setup: []fop{replaceOp(x1)}, a: popOp, b: syncedOp},
	{name: "Pop/Resync", known: []spec.Obj{k1}, setup: []fop{addOp(x1)}, a: popOp, b: resyncOp},
	{name: "Add/Pop on an empty FIFO", a: addOp(x1), b: popOp},
	{name: "Close/Pop on an empty FIFO", a: closeOp, b: popOp},
	{name: "Close/Pop of a queued key", setup: []fop{addOp(x1)}, a: closeOp, b: popOp},
	{name: "Pop/Pop", setup: []fop{addOp(x1), addOp(y1)}, a: popOp, b: popOp},
	{name: "Add/Update of one key", a: addOp(x1), b: updateOp(x2)},
	{name: "Delete/Delete of one key", known: []spec.Obj{x1}, setup: []fop{addOp(y1)}, a: deleteOp(x1), b: deleteOp(x2)},
	{name: "Replace/Delete", known: []spec.Obj{x1}, setup: []fop{addOp(y1)}, a: replaceOp(y1), b: deleteOp(x2)},
}

// raceMode is the mode race rounds run in: with known objects (for a
// RealFIFO, its non-atomic mode), so that Delete, Replace and Resync have
// known keys to act on.
func raceMode() Mode { return Mode{Known: true} }

// raceStep is the number of rounds a pair runs per Loop step.
const raceStep = 20

func raceCheck(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		sched := checkkit.NewRaceSchedule(cfg, len(fpairs), checkkit.RaceRounds/2)
		defer sched.Stop()
		var err error
		checkkit.Bubble(t, func() {
			err = sched.Loop(t, raceStep, func(r *checkkit.Racer, first int) error {
				for _, p := range fpairs {
					if !sched.Runs(p.name) {
						continue
					}
					for round := first; round < first+raceStep; round++ {
						if err := raceRound(s, r, p, sched.At(p.name, round), cfg); err != nil {
							return err
						}
					}
				}
				return nil
			})
		})
		return err
	}
}

// serial is the outcome of the round done one call after the other.
func serial(s Subject, p fpair, aFirst bool) string {
	known := spec.Known{}
	for _, o := range p.known {
		known[o.Key] = o
	}
	m := model{known: known}
	if s.Real {
		m.r = spec.NewRealFIFO(false, false, false)
	} else {
		m.d = spec.NewDeltaFIFO(false, false)
	}
	for _, o := range p.setup {
		o.model(m)
	}
	var ra, rb string
	if aFirst {
		ra = p.a.model(m)
		rb = p.b.model(m)
	} else {
		rb = p.b.model(m)
		ra = p.a.model(m)
	}
	return outcome(ra, rb, drainModel(m))
}

func drainModel(m model) string {
	var out []string
	for {
		got := m.pop()
		if got == "closed" {
			return strings.Join(out, "; ")
		}
		out = append(out, got)
	}
}

func outcome(a, b, rest string) string {
	return fmt.Sprintf("a=%q b=%q then [%s]", a, b, rest)
}

func raceRound(s Subject, r *checkkit.Racer, p fpair, at checkkit.RaceAt, cfg checkkit.Config) error {
	f, st, err := newFIFO(s, raceMode())
	if err != nil {
		return err
	}
	defer f.Close()
	for _, o := range p.known {
		_ = st.Add(object(o))
	}
	for _, o := range p.setup {
		o.subj(f)
	}
	name := at.String()
	cfg.Progress.Op(name)
	var ra, rb string
	blocked, err := r.RaceChecked(cfg.Progress, at, func() { ra = p.a.subj(f) }, func() { rb = p.b.subj(f) })
	if err != nil {
		return err
	}
	if blocked {
		f.Close()
		r.Settle()
		return at.Broke(GLiveness, "%s is still blocked after %s returned", p.b.name, p.a.name)
	}
	var rest []string
	f.Close()
	if err := checkkit.Bounded(checkkit.DrainLimit, func() string {
		return fmt.Sprintf("%s: popping after Close, the FIFO never reported closed", name)
	}, func() (bool, error) {
		got := popOp.subj(f)
		if got == "closed" {
			return true, nil
		}
		rest = append(rest, got)
		return false, nil
	}); err != nil {
		return err
	}
	got := outcome(ra, rb, strings.Join(rest, "; "))
	ab, ba := serial(s, p, true), serial(s, p, false)
	if got != ab && got != ba {
		return at.Broke(GAtomic, "%s raced with %s: got %s; one after the other gives %s (a first) or %s (b first)", p.a.name, p.b.name, got, ab, ba)
	}
	return nil
}
