package fifo

import (
	"slices"
	"strconv"
	"strings"
)

// Clone returns a deep copy of f: it shares no slice, map or array with f,
// so that either can be stepped without the other seeing it (porcupine
// steps a copy of every state it tries).
func (f *DeltaFIFO) Clone() *DeltaFIFO {
	c := *f
	c.queue = slices.Clone(f.queue)
	if f.items != nil {
		c.items = make(map[string][]Delta, len(f.items))
		for k, ds := range f.items {
			c.items[k] = cloneDeltas(ds)
		}
	}
	return &c
}

// Clone returns a deep copy of f: it shares no slice or array with f.
func (f *RealFIFO) Clone() *RealFIFO {
	c := *f
	c.items = cloneDeltas(f.items)
	return &c
}

func cloneDeltas(ds []Delta) []Delta {
	if ds == nil {
		return nil
	}
	out := make([]Delta, len(ds))
	for i, d := range ds {
		d.Objects = slices.Clone(d.Objects)
		out[i] = d
	}
	return out
}

// Key is a canonical encoding of f's whole state (options, queue, deltas,
// initial-sync bookkeeping, closed): two models have equal Keys exactly
// when their states are equal, so every later call behaves the same on
// both. It does not depend on map iteration order or slice capacity.
func (f *DeltaFIFO) Key() string {
	var b strings.Builder
	b.WriteString("delta")
	flag(&b, " emit-replaced", f.EmitReplaced)
	flag(&b, " transform", f.Transform)
	f.sync.key(&b)
	flag(&b, " closed", f.closed)
	b.WriteString(" q=")
	for _, k := range f.queue {
		b.WriteString(strconv.Quote(k))
		b.WriteByte(':')
		deltasKey(&b, f.items[k])
	}
	// Items of keys not queued: none in a model stepped through its
	// methods; encoded so that Key stays injective regardless.
	var stray []string
	if len(f.items) != len(f.queue) {
		queued := make(map[string]bool, len(f.queue))
		for _, k := range f.queue {
			queued[k] = true
		}
		for k := range f.items {
			if !queued[k] {
				stray = append(stray, k)
			}
		}
	}
	if len(stray) > 0 {
		slices.Sort(stray)
		b.WriteString(" stray=")
		for _, k := range stray {
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			deltasKey(&b, f.items[k])
		}
	}
	return b.String()
}

// Key is a canonical encoding of f's whole state (options, queued deltas,
// initial-sync bookkeeping, closed): two models have equal Keys exactly
// when their states are equal.
func (f *RealFIFO) Key() string {
	var b strings.Builder
	b.WriteString("real")
	flag(&b, " atomic", f.Atomic)
	flag(&b, " transform", f.Transform)
	flag(&b, " bookmarks", f.Bookmarks)
	b.WriteString(" batch=")
	b.WriteString(strconv.Itoa(f.BatchSize))
	f.sync.key(&b)
	flag(&b, " closed", f.closed)
	b.WriteString(" q=")
	deltasKey(&b, f.items)
	return b.String()
}

func flag(b *strings.Builder, name string, on bool) {
	if on {
		b.WriteString(name)
	}
}

func (s sync) key(b *strings.Builder) {
	flag(b, " populated", s.populated)
	b.WriteString(" initial=")
	b.WriteString(strconv.Itoa(s.count))
	flag(b, " synced", s.synced)
}

// deltasKey encodes every field of every delta, keys quoted, so that
// distinct lists never share an encoding.
func deltasKey(b *strings.Builder, ds []Delta) {
	b.WriteByte('[')
	for _, d := range ds {
		b.WriteString(string(d.Type))
		b.WriteByte('(')
		objKey(b, d.Obj)
		flag(b, " tombstone", d.Tombstone)
		flag(b, " obj", d.HasObj)
		if d.Type == ReplacedAll || len(d.Objects) > 0 {
			b.WriteString(" objects=")
			for _, o := range d.Objects {
				objKey(b, o)
				b.WriteByte(',')
			}
		}
		if d.RV != "" {
			b.WriteString(" rv=")
			b.WriteString(strconv.Quote(d.RV))
		}
		b.WriteString(");")
	}
	b.WriteByte(']')
}

func objKey(b *strings.Builder, o Obj) {
	b.WriteString(strconv.Quote(o.Key))
	b.WriteByte('@')
	b.WriteString(strconv.Itoa(o.Version))
	b.WriteByte('/')
	b.WriteString(strconv.Itoa(o.Gen))
}
