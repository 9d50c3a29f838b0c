package vectors

import (
	"math/rand/v2"
	"strconv"

	"github.com/kverify/kverify/spec/fifo"
	"github.com/kverify/kverify/traces"
)

// The informer queues' vectors: client-go's DeltaFIFO (component
// deltafifo) and RealFIFO (realfifo), with outcomes from spec/fifo. Each
// vector names the props/fifo check whose guarantees it exercises, with
// the guarantee names that check's violations carry.
//
// Objects are "k<i>" with a fresh version (value) per event, so a popped
// delta tells which event it came from; gen counts the FIFO's transforms.
// The known objects (the informer's store, which a FIFO consults on
// Delete, Replace and Resync) are an input of the steps that consult
// them, as in the model: the generator keeps them as an informer would,
// processing every pop into a model store, and changes them now and then
// as another writer of the store would; a replayer only sets its store to
// the step's list. Pop on an empty FIFO that is still open blocks, so a
// vector asks it only of a closed one (it returns at once, closed).

// fifoKind is one kind of FIFO vector: a props/fifo check and the
// guarantees (props/fifo's violation names) its vectors exercise.
type fifoKind struct {
	check      string
	guarantees []string
}

// The props/fifo guarantee names the vectors exercise.
const (
	gOrder   = "Pop order"
	gDeltas  = "Deltas"
	gSynced  = "HasSynced"
	gInitial = "isInInitialList"
	gClosed  = "Close"
	gBatch   = "PopBatch"
)

var deltafifoKinds = []fifoKind{
	{"deltafifo/model", []string{gOrder, gDeltas, gSynced, gInitial}},
	{"deltafifo/no-known", []string{gOrder, gDeltas, gSynced}},
	{"deltafifo/dedup", []string{gDeltas, gOrder}},
	{"deltafifo/replace", []string{gDeltas, gOrder, gSynced, gInitial}},
	// The only kind that observes, from inside the process func, whether
	// the FIFO has synced: client-go's DeltaFIFO declares a divergence
	// there (it syncs before the last initial pop is processed), which
	// must not show in the other checks' vectors.
	{"deltafifo/synced", []string{gSynced, gInitial}},
	{"deltafifo/close", []string{gClosed, gOrder, gDeltas}},
}

var realfifoKinds = []fifoKind{
	{"realfifo/model", []string{gOrder, gDeltas, gSynced, gInitial}},
	{"realfifo/atomic", []string{gOrder, gDeltas, gSynced, gInitial}},
	{"realfifo/batch", []string{gBatch, gInitial, gSynced}},
	{"realfifo/replace", []string{gDeltas, gOrder, gSynced, gInitial}},
	{"realfifo/synced", []string{gSynced, gInitial}},
	{"realfifo/close", []string{gClosed, gOrder, gDeltas}},
}

// The operations of a FIFO vector's generator, indexing a mix of weights.
// Know is not a step: it changes the known objects the next step that
// consults them carries.
const (
	fAdd = iota
	fUpdate
	fDelete
	fReplace
	fResync
	fBookmark
	fPop
	fPopBatch
	fLen
	fHasSynced
	fKnow
	fClose
	fOps
)

type fifoMix [fOps]int

// The mixes, by kind (DeltaFIFO's have no Bookmark and PopBatch,
// RealFIFO's no Len: neither client-go's RealFIFO nor ours exports a
// length).
//
//	Add Upd Del Rep Rsy Bkm Pop Bat Len Syn Know Cls
var (
	mixDeltaModel   = fifoMix{25, 15, 12, 4, 6, 0, 22, 0, 5, 4, 6, 1}
	mixDeltaNoKnown = fifoMix{25, 15, 15, 5, 4, 0, 22, 0, 5, 4, 0, 1}
	mixDeltaDedup   = fifoMix{12, 4, 35, 10, 2, 0, 15, 0, 4, 2, 8, 0}
	mixDeltaReplace = fifoMix{8, 6, 6, 20, 4, 0, 20, 0, 3, 5, 15, 0}
	mixDeltaSynced  = fifoMix{8, 4, 4, 4, 2, 0, 40, 0, 2, 25, 6, 0}
	mixRealModel    = fifoMix{25, 15, 12, 4, 5, 2, 20, 4, 0, 4, 6, 1}
	mixRealAtomic   = fifoMix{22, 12, 10, 8, 6, 8, 20, 6, 0, 4, 0, 1}
	mixRealBatch    = fifoMix{20, 10, 10, 6, 4, 4, 4, 30, 0, 4, 4, 0}
	mixRealReplace  = fifoMix{8, 6, 8, 20, 4, 0, 15, 8, 0, 4, 15, 0}
	mixRealSynced   = fifoMix{6, 3, 3, 4, 2, 3, 25, 15, 0, 25, 5, 0}
	mixRealBig      = fifoMix{20, 10, 10, 0, 0, 0, 10, 30, 0, 10, 0, 0}
)

func (m fifoMix) draw(r *rand.Rand) int {
	total := 0
	for _, w := range m {
		total += w
	}
	n := r.IntN(total)
	for op, w := range m {
		if n < w {
			return op
		}
		n -= w
	}
	panic("unreachable")
}

// fifoGen is what both FIFO generators share: the steps so far, the
// objects made, and the known objects.
type fifoGen struct {
	r     *rand.Rand
	keys  int
	made  int  // objects made so far: the next version is made+1
	known bool // the FIFO has known objects
	// store is the informer's store as the model has it: every pop is
	// processed into it, and it is the FIFO's known objects.
	store *fifo.Store
	steps []traces.VStep
}

func (g *fifoGen) obj(key int) fifo.Obj {
	g.made++
	return fifo.Obj{Key: "k" + strconv.Itoa(key), Version: g.made}
}

func (g *fifoGen) key() int { return g.r.IntN(g.keys) }

// list is a Replace's list: a random subset of the keys in random order,
// now and then with a key listed twice.
func (g *fifoGen) list() []fifo.Obj {
	perm := g.r.Perm(g.keys)
	ks := perm[:g.r.IntN(g.keys+1)]
	if len(ks) > 0 && g.r.IntN(10) == 0 {
		ks = append(ks, ks[0])
	}
	objs := make([]fifo.Obj, len(ks))
	for i, k := range ks {
		objs[i] = g.obj(k)
	}
	return objs
}

// knownModel is the known objects as the model takes them (nil: the FIFO
// has none).
func (g *fifoGen) knownModel() fifo.Known {
	if !g.known {
		return nil
	}
	return g.store.Objects
}

// knownStep is the known objects as a step carries them, sorted by key.
func (g *fifoGen) knownStep() []traces.VObject {
	if !g.known {
		return nil
	}
	var out []traces.VObject
	for _, k := range g.store.Objects.Keys() {
		out = append(out, vobject(g.store.Objects[k]))
	}
	return out
}

// know changes the known objects as another writer of the informer's
// store would: a fresh version of a key (sometimes one the FIFO never
// saw), or a key gone.
// syncedPrelude opens a */synced vector: some known objects, sometimes
// each of before (one in three) and an Add (one in five), then HasSynced,
// the relist, sometimes a second relist before a pop, and HasSynced again.
func (g *fifoGen) syncedPrelude(do func(op int), before ...int) {
	r := g.r
	for range r.IntN(3) {
		g.know()
	}
	for _, op := range before {
		if r.IntN(3) == 0 {
			do(op)
		}
	}
	if r.IntN(5) == 0 {
		do(fAdd)
	}
	do(fHasSynced)
	do(fReplace)
	if r.IntN(4) == 0 {
		do(fReplace)
	}
	do(fHasSynced)
}

// common does the steps both FIFOs' generators have: HasSynced, Know and
// Close (sometimes, then IsClosed).
func (g *fifoGen) common(op int, m interface {
	Synced() bool
	Closed() bool
	Close()
}) {
	switch op {
	case fHasSynced:
		g.observe("HasSynced", traces.Want{Flag: boolp(m.Synced())})
	case fKnow:
		g.know()
	case fClose:
		if !m.Closed() && g.r.IntN(2) == 0 {
			m.Close()
			g.step(traces.VStep{Op: "Close"})
		}
		g.observe("IsClosed", traces.Want{Flag: boolp(m.Closed())})
	}
}

func (g *fifoGen) know() {
	if !g.known {
		return
	}
	k := g.key()
	if g.r.IntN(3) == 0 {
		delete(g.store.Objects, "k"+strconv.Itoa(k))
		return
	}
	o := g.obj(k)
	o.Gen = g.r.IntN(2)
	g.store.Objects[o.Key] = o
}

func (g *fifoGen) step(s traces.VStep) { g.steps = append(g.steps, s) }

func (g *fifoGen) observe(op string, w traces.Want) { g.step(traces.VStep{Op: op, Want: &w}) }

// event makes the step of an Add, Update or Delete of o.
func event(op string, o fifo.Obj) traces.VStep {
	return traces.VStep{Op: op, Key: str(o.Key), Value: str(strconv.Itoa(o.Version))}
}

// length draws a vector's number of operations: mostly short, now and
// then long.
func (g *fifoGen) length(seed uint64) int {
	if seed%11 == 0 {
		return 150 + g.r.IntN(150)
	}
	return 5 + g.r.IntN(60)
}

func vobject(o fifo.Obj) traces.VObject {
	return traces.VObject{Key: o.Key, Value: strconv.Itoa(o.Version), Gen: int64(o.Gen)}
}

func vobjects(os []fifo.Obj) []traces.VObject {
	if len(os) == 0 {
		return nil
	}
	out := make([]traces.VObject, len(os))
	for i, o := range os {
		out[i] = vobject(o)
	}
	return out
}

func vdeltas(ds []fifo.Delta) []traces.VDelta {
	out := make([]traces.VDelta, len(ds))
	for i, d := range ds {
		v := traces.VDelta{Type: string(d.Type)}
		switch d.Type {
		case fifo.ReplacedAll:
			v.RV, v.Objects = str(d.RV), vobjects(d.Objects)
		case fifo.Bookmark:
			v.RV = str(d.RV)
		case fifo.SyncAll:
		default:
			v.Key, v.Tombstone = str(d.Obj.Key), d.Tombstone
			if d.HasObj {
				v.Value, v.Gen = str(strconv.Itoa(d.Obj.Version)), int64(d.Obj.Gen)
			}
		}
		out[i] = v
	}
	return out
}

func bit(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// deltafifoVector: DeltaFIFO vectors of six kinds (deltafifoKinds), with
// and without EmitReplaced and a transformer, all with known objects but
// no-known's (and a third of close's).
func deltafifoVector(seed uint64) traces.Vector {
	r := rng(seed)
	kind := deltafifoKinds[seed%uint64(len(deltafifoKinds))]
	g := &fifoGen{r: r, keys: 1 + r.IntN(8), known: true, store: fifo.NewStore()}
	emit, transform := r.IntN(2) == 0, r.IntN(2) == 0
	syncDuring := kind.check == "deltafifo/synced"
	mix := mixDeltaModel
	switch kind.check {
	case "deltafifo/no-known":
		g.known, mix = false, mixDeltaNoKnown
	case "deltafifo/dedup":
		// Few keys, so that deletions and tombstones meet.
		g.keys, mix = 1+r.IntN(3), mixDeltaDedup
	case "deltafifo/replace":
		g.keys, mix = 4+r.IntN(27), mixDeltaReplace
		if seed%7 == 3 {
			g.keys = 60 + r.IntN(60)
		}
	case "deltafifo/synced":
		mix = mixDeltaSynced
	case "deltafifo/close":
		g.known = r.IntN(3) != 0
	}
	m := fifo.NewDeltaFIFO(emit, transform)

	pop := func() {
		ds, initial, ok := m.Pop()
		if !ok {
			g.observe("Pop", traces.Want{OK: boolp(false)}) // closed and empty
			return
		}
		w := traces.Want{OK: boolp(true), Deltas: vdeltas(ds), Initial: boolp(initial)}
		if syncDuring {
			w.Synced = boolp(m.Synced()) // as the process func sees it: Popped comes after
		}
		m.Popped()
		g.store.Process(ds, initial)
		g.observe("Pop", w)
	}
	do := func(op int) {
		switch op {
		case fAdd, fUpdate:
			o := g.obj(g.key())
			name := "Add"
			if op == fAdd {
				m.Add(o)
			} else {
				name = "Update"
				m.Update(o)
			}
			g.step(event(name, o))
		case fDelete:
			o := g.obj(g.key())
			s := event("Delete", o)
			s.Known = g.knownStep()
			m.Delete(o, g.knownModel())
			g.step(s)
		case fReplace:
			known := g.knownStep()
			objs := g.list()
			m.Replace(objs, g.knownModel())
			g.step(traces.VStep{Op: "Replace", Objects: vobjects(objs), RV: str(strconv.Itoa(g.made)), Known: known})
		case fResync:
			known := g.knownStep()
			m.Resync(g.knownModel())
			g.step(traces.VStep{Op: "Resync", Known: known})
		case fPop:
			if m.Len() > 0 || m.Closed() {
				pop()
			} else {
				g.observe("Len", traces.Want{N: i64(0)})
			}
		case fLen:
			g.observe("Len", traces.Want{N: i64(m.Len())})
		case fHasSynced, fKnow, fClose:
			g.common(op, m)
		}
	}

	if kind.check == "deltafifo/synced" {
		// Before the first relist: known objects already there, a Resync
		// that queues them unpopulated, or an Add (which populates: no
		// initial population at all).
		g.syncedPrelude(do, fResync)
	}
	for range g.length(seed) {
		do(mix.draw(r))
	}
	if kind.check == "deltafifo/close" {
		// Close, Add and Update after it (accepted), everything queued
		// still pops in order, then Pop reports closed at once.
		if !m.Closed() {
			m.Close()
			g.step(traces.VStep{Op: "Close"})
		}
		do(fLen)
		for range r.IntN(3) {
			do(fAdd + r.IntN(2))
		}
		do(fHasSynced)
		for m.Len() > 0 {
			pop()
			if r.IntN(3) == 0 {
				do(fLen)
			}
		}
		for range 1 + r.IntN(2) {
			pop()
		}
		do(fClose)
	}
	do(fLen)
	do(fHasSynced)
	return traces.Vector{Header: traces.Header{Profile: "client-go", Check: kind.check, Guarantees: kind.guarantees,
		Params: map[string]float64{"keys": float64(g.keys), "known": bit(g.known), "emit_replaced": bit(emit),
			"transform": bit(transform), "sync_during": bit(syncDuring)}}, Steps: g.steps}
}

// realfifoVector: RealFIFO vectors of six kinds (realfifoKinds), atomic
// (with or without bookmarks and UnlockWhileProcessing; no known objects)
// or not (known objects), with and without a transformer. Every pop also
// says whether the FIFO had synced while its process func ran: client-go's
// RealFIFO counts a pop once its process func returned, as the model does.
func realfifoVector(seed uint64) traces.Vector {
	r := rng(seed)
	kind := realfifoKinds[seed%uint64(len(realfifoKinds))]
	g := &fifoGen{r: r, keys: 1 + r.IntN(8), store: fifo.NewStore()}
	atomic := r.IntN(2) == 0
	mix := mixRealModel
	switch kind.check {
	case "realfifo/model":
		atomic = false
	case "realfifo/atomic":
		atomic, mix = true, mixRealAtomic
	case "realfifo/batch":
		mix = mixRealBatch
	case "realfifo/replace":
		atomic, g.keys, mix = false, 4+r.IntN(27), mixRealReplace
	case "realfifo/synced":
		mix = mixRealSynced
	}
	// Past the batch size: an initial population of more than 1000
	// deltas, which PopBatch splits at 1000 and at its end.
	big := kind.check == "realfifo/batch" && seed%120 == 2
	if big {
		atomic, g.keys = false, fifo.DefaultBatchSize+r.IntN(60)
	}
	g.known = !atomic
	bookmarks, unlock := atomic && r.IntN(2) == 0, atomic && r.IntN(2) == 0
	transform := r.IntN(2) == 0
	m := fifo.NewRealFIFO(atomic, transform, bookmarks)

	popped := func(op string, ds []fifo.Delta, initial, ok bool) {
		if !ok {
			g.observe(op, traces.Want{OK: boolp(false)}) // closed and empty
			return
		}
		w := traces.Want{OK: boolp(true), Deltas: vdeltas(ds), Initial: boolp(initial), Synced: boolp(m.Synced())}
		m.Popped(len(ds))
		g.store.Process(ds, initial)
		g.observe(op, w)
	}
	pop := func() {
		d, initial, ok := m.Pop()
		popped("Pop", []fifo.Delta{d}, initial, ok)
	}
	popBatch := func() {
		ds, initial, ok := m.PopBatch()
		popped("PopBatch", ds, initial, ok)
	}
	// popReplace is a Pop whose process func, running unlocked, relists:
	// the step carries the Replace's list, and its outcome is the pop's.
	// The pop counts toward the initial population as decided when it
	// began, before the Replace.
	popReplace := func() {
		d, initial, _ := m.Pop()
		w := traces.Want{OK: boolp(true), Deltas: vdeltas([]fifo.Delta{d}), Initial: boolp(initial), Synced: boolp(m.Synced())}
		counted := min(1, m.Pending())
		objs := g.list()
		rv := strconv.Itoa(g.made)
		m.Replace(objs, rv, g.knownModel())
		m.Popped(counted)
		g.store.Process([]fifo.Delta{d}, initial)
		g.step(traces.VStep{Op: "PopReplace", Objects: vobjects(objs), RV: str(rv), Want: &w})
	}
	do := func(op int) {
		switch op {
		case fAdd, fUpdate, fDelete:
			o := g.obj(g.key())
			name := [...]string{fAdd: "Add", fUpdate: "Update", fDelete: "Delete"}[op]
			switch op {
			case fAdd:
				m.Add(o)
			case fUpdate:
				m.Update(o)
			default:
				m.Delete(o) // never suppressed: RealFIFO does not consult its known objects here
			}
			g.step(event(name, o))
		case fReplace:
			known := g.knownStep()
			objs := g.list()
			rv := strconv.Itoa(g.made)
			m.Replace(objs, rv, g.knownModel())
			g.step(traces.VStep{Op: "Replace", Objects: vobjects(objs), RV: str(rv), Known: known})
		case fResync:
			known := g.knownStep()
			m.Resync(g.knownModel())
			g.step(traces.VStep{Op: "Resync", Known: known})
		case fBookmark:
			rv := strconv.Itoa(g.made)
			m.Bookmark(rv)
			g.step(traces.VStep{Op: "Bookmark", RV: str(rv)})
		case fPop, fPopBatch:
			switch {
			case m.Len() == 0 && !m.Closed():
				g.observe("HasSynced", traces.Want{Flag: boolp(m.Synced())})
			case op == fPop:
				pop()
			default:
				popBatch()
			}
		case fHasSynced, fKnow, fClose:
			g.common(op, m)
		}
	}

	if big {
		// Every key listed, once: the relist queues more Replaced deltas
		// than a batch holds.
		objs := make([]fifo.Obj, g.keys)
		for i, k := range r.Perm(g.keys) {
			objs[i] = g.obj(k)
		}
		known, rv := g.knownStep(), strconv.Itoa(g.made)
		m.Replace(objs, rv, g.knownModel())
		g.step(traces.VStep{Op: "Replace", Objects: vobjects(objs), RV: str(rv), Known: known})
		for m.Len() > 0 {
			do(fPopBatch)
			do(fHasSynced)
			if r.IntN(2) == 0 {
				do(fAdd)
			}
		}
	}
	if kind.check == "realfifo/synced" {
		// Before the first relist: a Bookmark or a Resync (neither
		// populates), or an Add (which does: no initial population).
		// Unlocked, the first relist lands, one vector in two, while the
		// delta queued before it is processed (PopReplace).
		if unlock && r.IntN(2) == 0 {
			do(fResync + r.IntN(2)) // a Resync or a Bookmark
			if m.Len() > 0 {
				do(fHasSynced)
				popReplace()
				do(fHasSynced)
			}
		}
		g.syncedPrelude(do, fBookmark, fResync)
	}
	n := g.length(seed)
	if big {
		// A short tail without Replace and Resync, whose tombstones and
		// Syncs for a thousand known keys would make a batch line longer
		// than traces.MaxVectorLine.
		n, mix = 10, mixRealBig
	}
	for range n {
		do(mix.draw(r))
	}
	if kind.check == "realfifo/close" {
		if !m.Closed() {
			m.Close()
			g.step(traces.VStep{Op: "Close"})
		}
		for range r.IntN(3) {
			do(fAdd + r.IntN(2))
		}
		do(fHasSynced)
		for m.Len() > 0 {
			do(fPop + r.IntN(2))
		}
		for range 1 + r.IntN(2) {
			if r.IntN(2) == 0 {
				pop()
			} else {
				popBatch()
			}
		}
		do(fClose)
	}
	do(fHasSynced)
	return traces.Vector{Header: traces.Header{Profile: "client-go", Check: kind.check, Guarantees: kind.guarantees,
		Params: map[string]float64{"keys": float64(g.keys), "known": bit(g.known), "atomic": bit(atomic),
			"bookmarks": bit(bookmarks), "unlock": bit(unlock), "transform": bit(transform), "sync_during": 1}}, Steps: g.steps}
}
