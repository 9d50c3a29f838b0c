package informer

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/kverify/kverify/props/checkkit"
)

// phaseKeys is the number of keys added before Start in the phases check:
// more than the 1024 slots client-go's listener buffer starts with and our
// buffer's chunk, so a handler blocked in its first initial add has more
// than 1024 notifications pending behind it.
const phaseKeys = 1100

// pev is one event of the phases check.
type pev struct {
	kind Kind
	key  string
}

func (e pev) String() string { return eventOf(e.kind, e.key) }

func pevs(evs []pev) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.String()
	}
	return out
}

// phaseStore is the check's model of the store.
type phaseStore map[string]bool

func (s phaseStore) apply(evs ...pev) {
	for _, e := range evs {
		if e.kind == Delete {
			delete(s, e.key)
		} else {
			s[e.key] = true
		}
	}
}

func (s phaseStore) keys() []string { return slices.Sorted(maps.Keys(s)) }

// snapshot matches a handler's calls against an initial list taken at some
// point j of the racy events (0..len(racy)): the store after racy[:j] as
// the initial list, then racy[j:], then later. It returns the j that
// matches (-1 if none) and, if none, the complaint for j = 0.
func snapshot(got []string, base phaseStore, racy []pev, later []string, exact bool) (int, string) {
	first := ""
	for j := 0; j <= len(racy); j++ {
		s := maps.Clone(base)
		s.apply(racy[:j]...)
		e := expectation{init: s.keys(), seq: append(pevs(racy[j:]), later...)}
		msg := e.conforms(got, exact)
		if msg == "" {
			return j, ""
		}
		if j == 0 {
			first = msg
		}
	}
	return -1, first
}

// phases drives events through every phase of a fan-out's life, the same
// in every run: before Start (into the initial lists), right after Start
// (racing with the initial list: in it or after it, never both or
// neither), while handlers added before and after Start are still in their
// initial lists (one blocked in its first initial add with more than 1024
// notifications behind it), and after every handler synced.
func phases(s Subject) func(*testing.T, checkkit.Config) error {
	return func(t *testing.T, cfg checkkit.Config) error {
		return checkkit.InBubble(t, func() error { return phaseScenario(s, cfg.Progress) })
	}
}

func phaseScenario(s Subject, progress *checkkit.Progress) error {
	f := s.New()
	d := &driver{}
	first, pre, late, synced := newProbe("added-first"), newProbe("added-before-start"), newProbe("added-after-start"), newProbe("added-after-sync")
	defer func() {
		for _, p := range []*probe{first, pre, late, synced} {
			p.unblock()
		}
		if !d.stuck {
			stopAndWait(f)
		}
	}()
	emitAll := func(what string, evs []pev) error {
		progress.Op(what)
		if !d.call(func() {
			for _, e := range evs {
				f.Emit(e.kind, e.key)
			}
		}) {
			return checkkit.Broke(GNonBlocking, "%s: Emit did not return", what)
		}
		return nil
	}
	wantSynced := func(p *probe, r Registration, want bool, when string) error {
		if got := r.HasSynced(); got != want {
			return checkkit.Broke(GHandlerSync, "%s: HasSynced() = %v %s (received %d calls)", p.name, got, when, len(p.received()))
		}
		return nil
	}

	// Before Start: a handler, then the store fills past 1024 keys (with
	// updates and deletes), then another handler.
	first.blockAt(0)
	rFirst, err := addHandler(d, f, first)
	if err != nil {
		return err
	}
	var before []pev
	for i := range phaseKeys {
		before = append(before, pev{Add, fmt.Sprintf("p%04d", i)})
	}
	for i := range 10 {
		before = append(before, pev{Update, fmt.Sprintf("p%04d", i)}, pev{Delete, fmt.Sprintf("p%04d", 10+i)})
	}
	if err := emitAll("emit before Start", before); err != nil {
		return err
	}
	base := phaseStore{}
	base.apply(before...)
	rPre, err := addHandler(d, f, pre)
	if err != nil {
		return err
	}
	for _, h := range []struct {
		p *probe
		r Registration
	}{{first, rFirst}, {pre, rPre}} {
		if err := wantSynced(h.p, h.r, false, "before Start"); err != nil {
			return err
		}
	}

	// Start, and events right after it, before anything settles.
	racy := []pev{{Add, "r0"}, {Update, "p0020"}, {Delete, "p0021"}, {Add, "r1"}}
	progress.Op("Start, then emit at once")
	if !d.call(func() {
		f.Start()
		for _, e := range racy {
			f.Emit(e.kind, e.key)
		}
	}) {
		return checkkit.Broke(GNonBlocking, "Start and the emits right after it did not return")
	}
	if first.waiting.Load() != 1 || len(first.received()) != 1 {
		return checkkit.Broke(GDelivery, "%s is not blocked in its first initial add (received %d calls)", first.name, len(first.received()))
	}
	if err := wantSynced(first, rFirst, false, "while its first initial add is in progress"); err != nil {
		return err
	}
	if _, msg := snapshot(pre.received(), base, racy, nil, true); msg != "" {
		return checkkit.Broke(GDelivery, "%s, after Start: %s (the events emitted right after Start belong either in the initial list or after it, in order)", pre.name, msg)
	}
	if err := wantSynced(pre, rPre, true, "after its initial list"); err != nil {
		return err
	}

	// While the first handler is still in its initial list.
	during := []pev{{Add, "s0"}, {Update, "p0001"}, {Delete, "p0002"}}
	if err := emitAll("emit during the initial lists", during); err != nil {
		return err
	}
	now := maps.Clone(base)
	now.apply(racy...)
	now.apply(during...)
	late.blockAt(5)
	rLate, err := addHandler(d, f, late)
	if err != nil {
		return err
	}
	lateInit := now.keys()
	joined := []pev{{Add, "t0"}, {Delete, "p0003"}}
	if err := emitAll("emit while a late handler's initial list is pending", joined); err != nil {
		return err
	}
	now.apply(joined...)
	if late.waiting.Load() != 1 {
		return checkkit.Broke(GDelivery, "%s is not blocked in its initial add 5 (received %d calls)", late.name, len(late.received()))
	}
	if err := wantSynced(late, rLate, false, "while one of its initial adds is in progress"); err != nil {
		return err
	}
	if err := wantSynced(first, rFirst, false, "while its first initial add is in progress"); err != nil {
		return err
	}

	// Everything released: every handler syncs; one more joins, synced.
	progress.Op("release")
	first.unblock()
	late.unblock()
	synctest.Wait()
	rSynced, err := addHandler(d, f, synced)
	if err != nil {
		return err
	}
	syncedInit := now.keys()
	synctest.Wait()
	after := []pev{{Add, "u0"}, {Update, "p0004"}, {Delete, "p0005"}}
	if err := emitAll("emit after sync", after); err != nil {
		return err
	}
	later := slices.Concat(pevs(during), pevs(joined), pevs(after))
	var js []int
	for _, p := range []*probe{first, pre} {
		j, msg := snapshot(p.received(), base, racy, later, true)
		if msg != "" {
			return checkkit.Broke(GDelivery, "%s (added before Start): %s", p.name, msg)
		}
		js = append(js, j)
	}
	if js[0] != js[1] {
		return checkkit.Broke(GDelivery, "the handlers added before Start got different initial lists: %s's includes the first %d events emitted right after Start, %s's the first %d", first.name, js[0], pre.name, js[1])
	}
	if msg := (expectation{init: lateInit, seq: slices.Concat(pevs(joined), pevs(after))}).conforms(late.received(), true); msg != "" {
		return checkkit.Broke(GDelivery, "%s: %s", late.name, msg)
	}
	if msg := (expectation{init: syncedInit, seq: pevs(after)}).conforms(synced.received(), true); msg != "" {
		return checkkit.Broke(GDelivery, "%s: %s", synced.name, msg)
	}
	for _, h := range []struct {
		p *probe
		r Registration
	}{{first, rFirst}, {pre, rPre}, {late, rLate}, {synced, rSynced}} {
		if err := wantSynced(h.p, h.r, true, "after its initial list"); err != nil {
			return err
		}
		if h.p.overlap.Load() {
			return checkkit.Broke(GSerial, "%s: two handler calls overlapped", h.p.name)
		}
	}
	if !d.call(f.Stop) {
		return checkkit.Broke(GShutdown, "Stop did not return")
	}
	return nil
}
