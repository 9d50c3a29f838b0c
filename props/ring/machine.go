package ring

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kverify/kverify/props/checkkit"
	spec "github.com/kverify/kverify/spec/ring"
)

// Kind names an operation of a ring machine.
type Kind uint8

// The operations of a ring machine. Burst and Drain are N writes or N
// reads in a row: they reach growth, wrap-around and chunk boundaries in
// few steps.
const (
	Write Kind = iota
	Read
	Len
	Cap
	Burst
	Drain
)

var kindNames = [...]string{"Write", "Read", "Len", "Cap", "Burst", "Drain"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Step is one operation of a ring machine. The values written are the
// machine's: "v0", "v1", ... in order.
type Step struct {
	Kind Kind
	N    int // Burst and Drain
}

// String is the trace notation: "Write", "Read", "Len", "Cap",
// "Burst(12)", "Drain(12)".
func (s Step) String() string {
	if s.Kind == Burst || s.Kind == Drain {
		return fmt.Sprintf("%s(%d)", s.Kind, s.N)
	}
	return s.Kind.String()
}

// GoString is String, so that rapid's logs show steps in trace notation.
func (s Step) GoString() string { return s.String() }

// parseStep is the inverse of Step.String.
func parseStep(s string) (Step, error) {
	if name, arg, ok := strings.Cut(s, "("); ok && strings.HasSuffix(arg, ")") {
		n, err := strconv.Atoi(strings.TrimSuffix(arg, ")"))
		if err != nil || n < 0 {
			return Step{}, fmt.Errorf("ring: bad count in step %q", s)
		}
		switch name {
		case "Burst":
			return Step{Kind: Burst, N: n}, nil
		case "Drain":
			return Step{Kind: Drain, N: n}, nil
		}
		return Step{}, fmt.Errorf("ring: unknown step %q", s)
	}
	for i, n := range kindNames {
		if n == s && Kind(i) != Burst && Kind(i) != Drain {
			return Step{Kind: Kind(i)}, nil
		}
	}
	return Step{}, fmt.Errorf("ring: unknown step %q", s)
}

// newOp is the trace notation of the first step, the buffer's creation.
func newOp(initialSize int) string { return fmt.Sprintf("New(%d)", initialSize) }

// parseNew is the inverse of newOp.
func parseNew(s string) (int, bool) {
	arg, ok := strings.CutPrefix(s, "New(")
	if !ok || !strings.HasSuffix(arg, ")") {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSuffix(arg, ")"))
	return n, err == nil
}

// Mode selects what a machine checks besides FIFO order and Len.
type Mode struct {
	// Law checks the subject's capacity law after every single write and
	// read (inside Burst and Drain too), not only on Cap steps.
	Law bool
}

// machine drives one buffer and the model side by side.
type machine struct {
	s     Subject
	mode  Mode
	r     Ring
	m     spec.Model[string]
	k     int // chunk size, LawChunked
	next  int // the next value to write is "v<next>"
	wrote bool
	// the subject's len and cap after the last checked operation
	lenB, capB int
	lawErr     error // the chunked law's verdict on the last observation
	rec        *checkkit.Recorder
}

func newMachine(s Subject, initialSize int, mode Mode, rec *checkkit.Recorder) (x *machine, err error) {
	if rec == nil {
		rec = &checkkit.Recorder{}
	}
	x = &machine{s: s, mode: mode, rec: rec}
	defer x.catch(newOp(initialSize), &err)
	switch s.Law {
	case LawShrinking:
		x.m = spec.NewShrinking[string](initialSize, s.Normal)
	default:
		x.m = spec.New[string](initialSize)
	}
	if s.Law == LawChunked {
		x.k = s.ChunkSize(initialSize)
	}
	x.r = s.New(initialSize)
	if !mode.Law {
		rec.Step(newOp(initialSize), "", "")
		return x, nil
	}
	err = x.observe(spec.OpObserve)
	want, got := x.shown()
	rec.Step(newOp(initialSize), want, got)
	return x, err
}

// catch turns a panic of the subject during op into a violation.
func (x *machine) catch(op string, err *error) {
	if p := recover(); p != nil {
		x.rec.Step(op, "no panic", fmt.Sprintf("panic: %v", p))
		*err = checkkit.Broke(GNoPanic, "%s panicked: %v", op, p)
	}
}

func value(i int) string { return "v" + strconv.Itoa(i) }

// Apply runs one step on the buffer and the model and compares them.
func (x *machine) Apply(st Step) (err error) {
	defer x.catch(st.String(), &err)
	op := st.String()
	switch st.Kind {
	case Write, Burst:
		n := 1
		if st.Kind == Burst {
			n = st.N
		}
		for i := range n {
			v := value(x.next)
			x.next++
			x.r.WriteOne(v)
			x.m = x.m.Write(v)
			x.wrote = true
			if x.mode.Law {
				if err := x.observe(spec.OpWrite); err != nil {
					want, got := x.shown()
					x.rec.Step(op, want, got)
					return annotate(err, "write %d of %d, of %s", i+1, n, v)
				}
			}
		}
		var want, got string
		if x.mode.Law {
			want, got = x.shown()
		}
		x.rec.Step(op, want, got)
	case Read, Drain:
		n := 1
		if st.Kind == Drain {
			n = st.N
		}
		var want, got []string
		for i := range n {
			v, ok := x.r.ReadOne()
			m, mv, mok := x.m.Read()
			x.m = m
			want, got = append(want, show(mv, mok)), append(got, show(v, ok))
			if v != mv || ok != mok {
				x.rec.Step(op, strings.Join(want, " "), strings.Join(got, " "))
				return checkkit.Broke(GFIFO, "read %d of %s returned %s, want %s", i+1, op, show(v, ok), show(mv, mok))
			}
			if x.mode.Law {
				if err := x.observe(spec.OpRead); err != nil {
					w, g := x.shown()
					x.rec.Step(op, strings.Join(want, " ")+"; "+w, strings.Join(got, " ")+"; "+g)
					return annotate(err, "read %d of %s", i+1, op)
				}
			}
		}
		x.rec.Step(op, strings.Join(want, " "), strings.Join(got, " "))
	case Len:
		got, want := x.r.Len(), x.m.Len()
		x.rec.Step(op, strconv.Itoa(want), strconv.Itoa(got))
		if got != want {
			return checkkit.Broke(GLen, "Len %d, want %d (values written minus values read)", got, want)
		}
	case Cap:
		if x.mode.Law {
			err := x.observe(spec.OpObserve)
			want, got := x.shown()
			x.rec.Step(op, want, got)
			return err
		}
		// Without the law, Cap only has to hold what is held.
		got, l := x.r.Cap(), x.m.Len()
		if got < l {
			x.rec.Step(op, fmt.Sprintf(">=%d", l), strconv.Itoa(got))
			return checkkit.Broke(GCap, "Cap %d < %d values held", got, l)
		}
		x.rec.Step(op, strconv.Itoa(got), strconv.Itoa(got))
	default:
		return fmt.Errorf("ring: unknown step %v", st)
	}
	return nil
}

// annotate adds where it happened to a violation.
func annotate(err error, format string, args ...any) error {
	var v *checkkit.Violation
	if !errors.As(err, &v) {
		return err
	}
	return checkkit.Broke(v.Guarantee, "%s (%s)", v.Detail, fmt.Sprintf(format, args...))
}

func show(v string, ok bool) string {
	if !ok {
		return "empty"
	}
	return v
}

// observe reads the subject's Len and Cap after an operation of kind op and
// checks them: Len against the model, Cap against the subject's law.
func (x *machine) observe(op spec.Op) error {
	l, c := x.r.Len(), x.r.Cap()
	lenB, capB := x.lenB, x.capB
	x.lenB, x.capB, x.lawErr = l, c, nil
	if l != x.m.Len() {
		return checkkit.Broke(GLen, "Len %d, want %d (values written minus values read)", l, x.m.Len())
	}
	if x.s.Law == LawChunked {
		if x.lawErr = spec.ChunkedCap(x.k, op, lenB, capB, l, c, x.wrote); x.lawErr != nil {
			return checkkit.Broke(GCap, "chunked law (chunk %d): %v", x.k, x.lawErr)
		}
		return nil
	}
	if c != x.m.Cap() {
		return checkkit.Broke(GCap, "Cap %d, want %d (%s law: from %d, with len %d before)", c, x.m.Cap(), x.s.Law, capB, lenB)
	}
	return nil
}

// shown is the model's and the subject's "len=L cap=C" at the last
// observation, for the trace. A chunked buffer's law has no exact Cap: the
// model shows the subject's Cap when the law held, the broken law if not.
func (x *machine) shown() (want, got string) {
	got = fmt.Sprintf("len=%d cap=%d", x.lenB, x.capB)
	switch {
	case x.s.Law != LawChunked:
		want = fmt.Sprintf("len=%d cap=%d", x.m.Len(), x.m.Cap())
	case x.lenB != x.m.Len():
		want = fmt.Sprintf("len=%d", x.m.Len())
	case x.lawErr != nil:
		want = "law: " + x.lawErr.Error()
	default:
		want = got
	}
	return want, got
}

// RunSteps makes a buffer with New(initialSize) and runs steps on it,
// checking every outcome against the model. It is the engine behind the
// rapid checks, trace replay and the fuzz targets. rec may be nil.
func RunSteps(s Subject, initialSize int, mode Mode, steps []Step, rec *checkkit.Recorder) error {
	x, err := newMachine(s, initialSize, mode, rec)
	if err != nil {
		return err
	}
	for _, st := range steps {
		if err := x.Apply(st); err != nil {
			return err
		}
	}
	return nil
}
