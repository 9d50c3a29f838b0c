package vectors

import (
	"fmt"
	"time"

	pwq "github.com/kverify/kverify/props/workqueue"
	"github.com/kverify/kverify/spec/delaying"
	wq "github.com/kverify/kverify/spec/workqueue"
	"github.com/kverify/kverify/traces"
)

// The delaying queue's vectors (delaying/model): AddAfter with delays
// from negative to an hour, Sleep (the clock moves on; every item whose
// ready time has come is queued, in ready-time order, ties in the order
// their times were set), then Get, Done and Len as for the work queue.
// Outcomes follow spec/delaying under client-go's profile.
func delayingVector(seed uint64) traces.Vector {
	r := rng(seed)
	keys := 1 + r.IntN(8)
	key := func() string { return fmt.Sprintf("k%d", r.IntN(keys)) }
	delays := []time.Duration{-time.Second, 0, time.Millisecond, time.Second, 5 * time.Second, 10 * time.Second, time.Hour}
	sleeps := []time.Duration{time.Millisecond, time.Second, 4 * time.Second, 10 * time.Second, 2 * time.Hour}
	check, guarantees := "delaying/model", []string{pwq.GReadyOrder, pwq.GNotEarly, pwq.GFair, pwq.GStingy, pwq.GLenLaw}
	if seed%2 == 1 {
		// Many equal ready times: ties move in the order their times were
		// set (client-go's heap breaks ties by insertion).
		check, guarantees = "delaying/ties", []string{pwq.GTieOrder, pwq.GReadyOrder}
		delays = []time.Duration{time.Second, time.Second, 2 * time.Second, 0}
		sleeps = []time.Duration{time.Second, 2 * time.Second}
	}
	now := time.Unix(0, 0)
	m := delaying.New(wq.ClientGo)
	var steps []traces.VStep
	op := func(o wq.Op) {
		var out wq.Out
		m, out = m.Step(o)
		steps = append(steps, wqStep(o, out))
	}
	for range 5 + r.IntN(60) {
		switch p := r.IntN(100); {
		case p < 35:
			k, d := key(), delays[r.IntN(len(delays))]
			for check == "delaying/model" && d > 0 && tie(m, now.Add(d)) {
				d += time.Millisecond // ties are the ties vectors' business
			}
			m = m.AddAfter(k, d, now)
			steps = append(steps, traces.VStep{Op: "AddAfter", Key: str(k), NS: i64d(d)})
		case p < 50:
			d := sleeps[r.IntN(len(sleeps))]
			now = now.Add(d)
			m = m.Advance(now)
			steps = append(steps, traces.VStep{Op: "Sleep", NS: i64d(d)})
		case p < 70:
			if m.Enabled(wq.Op{Kind: wq.Get}) {
				op(wq.Op{Kind: wq.Get})
			} else {
				op(wq.Op{Kind: wq.Len})
			}
		case p < 88:
			if ks := m.Queue().ProcessingKeys(); len(ks) > 0 {
				op(wq.Op{Kind: wq.Done, Key: ks[r.IntN(len(ks))]})
			} else {
				op(wq.Op{Kind: wq.Add, Key: key()})
			}
		default:
			op(wq.Op{Kind: wq.Len})
		}
	}
	return traces.Vector{Header: traces.Header{Profile: "client-go", Check: check, Guarantees: guarantees,
		Params: map[string]float64{"keys": float64(keys)}}, Steps: steps}
}

// tie reports whether an entry already waits for ready time at.
func tie(m delaying.Model, at time.Time) bool {
	for _, e := range m.Waiting() {
		if e.ReadyAt.Equal(at) {
			return true
		}
	}
	return false
}
