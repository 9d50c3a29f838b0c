package wire

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/kverify/kverify/props/modelserver"
)

// Schedule is one run of a client against the served model, fixed in
// advance: the objects created before the client starts, the fault
// schedule (one fault per LIST or WATCH request, in the order they come;
// later requests are healthy) and the history the server goes through
// while the client runs. Decode makes one from any byte string.
type Schedule struct {
	Objects int
	Faults  []modelserver.Fault
	Ops     []Op
}

// OpKind is what one step of a schedule does.
type OpKind uint8

// The steps: a write to one of eight keys (a create if it is absent, else
// an update; or a delete if present), a version move without an event, a
// bookmark due on every open watch, a server restart (Server.Restart: every
// stream cut, the history compacted), and a wait.
const (
	OpWrite OpKind = iota
	OpDelete
	OpProgress
	OpBookmark
	OpRestart
	OpWait
)

// Op is one step.
type Op struct {
	Kind OpKind
	Key  int           // OpWrite, OpDelete: the key's index (key)
	Wait time.Duration // OpWait
}

func (o Op) String() string {
	switch o.Kind {
	case OpWrite:
		return "write " + key(o.Key)
	case OpDelete:
		return "delete " + key(o.Key)
	case OpProgress:
		return "progress"
	case OpBookmark:
		return "bookmark"
	case OpRestart:
		return "restart"
	}
	return "wait " + o.Wait.String()
}

// key is the key of index i: default/o000, default/o001, ...
func key(i int) string { return fmt.Sprintf("%s/o%03d", Namespace, i) }

func (sc Schedule) String() string {
	ops := make([]string, len(sc.Ops))
	for i, o := range sc.Ops {
		ops[i] = o.String()
	}
	return fmt.Sprintf("%d objects, faults %v, ops [%s]", sc.Objects, sc.Faults, strings.Join(ops, ", "))
}

// waits are the waits a schedule draws from: within one event's delivery,
// one backoff step, a few, past a stream's slow faults.
var waits = []time.Duration{100 * time.Millisecond, time.Second, 3 * time.Second, 10 * time.Second}

// Decode turns bytes into a schedule; every byte string is a valid one.
// Byte 0 mod 9 is the number of objects (501 to 532, past client-go's
// page size of 500, when its high four bits are set: byte 1 mod 32 more
// than 501); the fault schedule is modelserver.DecodeFaults from byte 2
// (byte 2 mod 9 faults of 3 bytes each), as in props/reflector's Decode;
// each byte after the faults is one step: bits 0-2 the kind (write, write,
// delete, progress, bookmark, restart, wait, wait), bits 3-5 the key, bits
// 3-4 the wait.
func Decode(data []byte) Schedule {
	at := func(i int) byte {
		if i < len(data) {
			return data[i]
		}
		return 0
	}
	sc := Schedule{Objects: int(at(0)) % 9, Faults: modelserver.DecodeFaults(data[min(2, len(data)):])}
	if at(0)>>4 == 0xf {
		sc.Objects = 501 + int(at(1))%32 // past client-go's page size
	}
	for i := 3 + 3*len(sc.Faults); i < len(data) && len(sc.Ops) < 48; i++ {
		c := data[i]
		op := Op{Key: int(c>>3) & 7}
		switch c & 7 {
		case 0, 1:
			op.Kind = OpWrite
		case 2:
			op.Kind = OpDelete
		case 3:
			op.Kind = OpProgress
		case 4:
			op.Kind = OpBookmark
		case 5:
			op.Kind = OpRestart
		default:
			op = Op{Kind: OpWait, Wait: waits[(c>>3)&3]}
		}
		sc.Ops = append(sc.Ops, op)
	}
	return sc
}

// Generate returns the schedule of a seed: Decode of 40 bytes drawn from
// it, so seeds name schedules (kverify serve --seed, a check's failure).
func Generate(seed uint64) Schedule {
	r := rand.New(rand.NewPCG(seed, 0x6b766572696679))
	b := make([]byte, 40)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return Decode(b)
}

// realtimeFaults is how many faults a real-time schedule keeps: more than
// maxPerSecond, so that a client retrying at once breaks the rate bound.
const realtimeFaults = 12

// Realtime returns sc for a client that runs in real time (a process):
// waits capped at 300ms, slow streams at 50ms an event and the first
// realtimeFaults faults, so that a schedule takes seconds, not minutes,
// of the wall clock even for a client that waits seconds between retries.
func (sc Schedule) Realtime() Schedule {
	out := Schedule{Objects: sc.Objects, Faults: slices.Clone(sc.Faults[:min(len(sc.Faults), realtimeFaults)]), Ops: make([]Op, len(sc.Ops))}
	copy(out.Ops, sc.Ops)
	for i := range out.Faults {
		out.Faults[i].Slow = min(out.Faults[i].Slow, 50*time.Millisecond)
	}
	for i := range out.Ops {
		out.Ops[i].Wait = min(out.Ops[i].Wait, 300*time.Millisecond)
	}
	return out
}

// Populate creates the schedule's initial objects (keys 0 to Objects-1).
func (s *Server) Populate(n int) error {
	for i := range n {
		if err := s.model.Create(key(i)); err != nil {
			return err
		}
	}
	return nil
}

// Apply runs one step that is not a wait on the server: a write creates
// the key if it is absent, else updates it; a delete of an absent key does
// nothing.
func (s *Server) Apply(op Op) error {
	_, objs := s.model.Current()
	exists := false
	for _, o := range objs {
		exists = exists || o.Key == key(op.Key)
	}
	switch op.Kind {
	case OpWrite:
		if exists {
			return s.model.Update(key(op.Key))
		}
		return s.model.Create(key(op.Key))
	case OpDelete:
		if exists {
			return s.model.Delete(key(op.Key))
		}
	case OpProgress:
		s.model.Progress()
	case OpBookmark:
		s.model.Bookmark()
	case OpRestart:
		s.Restart()
	}
	return nil
}
