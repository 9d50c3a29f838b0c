package fuzz

import (
	"testing"

	"github.com/kverify/kverify/subjects/ours"

	pfifo "github.com/kverify/kverify/props/fifo"
	"github.com/kverify/kverify/subjects/upstream"
)

// DecodeFIFOSteps turns bytes into a FIFO machine run. The first byte picks
// the options (bit 0 known objects, bit 1 EmitReplaced, bit 2 transform,
// bit 3 atomic, bit 4 bookmarks, bit 5 unlock, bit 6 sync-during; a RealFIFO
// takes known objects exactly when it is not atomic, and unlock and
// bookmarks only when it is); each later byte is one step: the low 4 bits
// pick the operation, the high 4 bits its key (k0..k15), or for Replace and
// Pops a size of (high+1)*(high+1) (1..256) at offset high&3.
func DecodeFIFOSteps(data []byte, real bool) (pfifo.Mode, []pfifo.Step) {
	if len(data) == 0 {
		return pfifo.Mode{Known: real}, nil
	}
	o := data[0]
	m := pfifo.Mode{Known: o&1 != 0, EmitReplaced: o&2 != 0, Transform: o&4 != 0, SyncDuring: o&64 != 0}
	if real {
		m.EmitReplaced = false
		m.Atomic = o&8 != 0
		m.Known = !m.Atomic
		m.Bookmarks = m.Atomic && o&16 != 0
		m.Unlock = m.Atomic && o&32 != 0
		m.SyncDuring = true
	}
	data = data[1:]
	if len(data) > maxSteps {
		data = data[:maxSteps]
	}
	steps := make([]pfifo.Step, 0, len(data))
	for _, b := range data {
		hi := int(b >> 4)
		var st pfifo.Step
		switch b & 15 {
		case 0, 1:
			st = pfifo.Step{Kind: pfifo.Add, Key: hi}
		case 2:
			st = pfifo.Step{Kind: pfifo.Update, Key: hi}
		case 3, 4:
			st = pfifo.Step{Kind: pfifo.Delete, Key: hi}
		case 5:
			st = pfifo.Step{Kind: pfifo.Replace, Off: hi & 3, N: (hi + 1) * (hi + 1)}
		case 6:
			st = pfifo.Step{Kind: pfifo.Resync}
		case 7, 8:
			st = pfifo.Step{Kind: pfifo.Pop}
		case 9:
			st = pfifo.Step{Kind: pfifo.Pops, N: (hi + 1) * (hi + 1)}
		case 10:
			st = pfifo.Step{Kind: pfifo.PopErr}
		case 11:
			st = pfifo.Step{Kind: pfifo.Know, Key: hi}
		case 12:
			st = pfifo.Step{Kind: pfifo.PopBatch}
			if !real {
				st = pfifo.Step{Kind: pfifo.Pop}
			}
		case 13:
			st = pfifo.Step{Kind: pfifo.BookmarkOp}
			if !real {
				st = pfifo.Step{Kind: pfifo.Resync}
			}
		case 14:
			st = pfifo.Step{Kind: pfifo.PopPanic}
		case 15:
			st = pfifo.Step{Kind: pfifo.Close}
			if hi != 0 { // keep Close rare
				st = pfifo.Step{Kind: pfifo.Update, Key: hi}
			}
		}
		steps = append(steps, st)
	}
	return m, steps
}

// fuzzSubject is a subject of a FIFO fuzz target; early says it syncs
// before processing the last initial item (so sync-during is not checked).
type fuzzSubject struct {
	name  string
	s     pfifo.Subject
	early bool
}

func fuzzFIFO(f *testing.F, real bool, subs []fuzzSubject) {
	f.Add([]byte{0x01, 0x00, 0x03, 0x03, 0x07})             // known: Add, Delete, Delete, Pop
	f.Add([]byte{0x41, 0xB5, 0x25, 0x35, 0x99, 0x99})       // relists twice before pops
	f.Add([]byte{0x05, 0x0B, 0x1B, 0x45, 0x06, 0xF9, 0x0A}) // know, relist, resync, drain
	f.Add([]byte{0x18, 0x00, 0x10, 0x0D, 0x75, 0x06, 0x0C, 0x0C, 0x0C, 0x0E})
	f.Fuzz(func(t *testing.T, data []byte) {
		mode, steps := DecodeFIFOSteps(data, real)
		for _, sub := range subs {
			m := mode
			m.SyncDuring = m.SyncDuring && !sub.early
			if err := pfifo.RunSteps(sub.s, m, steps, nil); err != nil {
				t.Fatalf("%s: %v\n%s, steps: %v", sub.name, err, m, steps)
			}
		}
	})
}

// FuzzDeltaFIFO drives our DeltaFIFO and client-go's with the same
// operations against the model (a differential test of the two). The
// sync-during option is left to ours: client-go's DeltaFIFO syncs before
// processing (a declared divergence).
func FuzzDeltaFIFO(f *testing.F) {
	fuzzFIFO(f, false, []fuzzSubject{{"ours", ours.DeltaFIFO(), false}, {"upstream", upstream.DeltaFIFO(), true}})
}

// FuzzRealFIFO does the same for the RealFIFOs, PopBatch included.
func FuzzRealFIFO(f *testing.F) {
	fuzzFIFO(f, true, []fuzzSubject{{"ours", ours.RealFIFO(), false}, {"upstream", upstream.RealFIFO(), false}})
}
