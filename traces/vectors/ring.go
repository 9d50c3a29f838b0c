package vectors

import (
	"fmt"

	pring "github.com/kverify/kverify/props/ring"
	"github.com/kverify/kverify/spec/ring"
	"github.com/kverify/kverify/traces"
)

// The ring's vectors: FIFO order and Len across growth and wrap-around
// (ring/fifo), and the capacity law (ring/cap-law), for client-go's
// growing ring (profile "doubling": TypedRingGrowing) and its shrinking
// Ring (profile "shrinking", with params normal), from initial sizes
// around the thresholds (0, 1, 16, 17, ...).
func ringVector(seed uint64) traces.Vector {
	r := rng(seed)
	check, guarantees := "ring/fifo", []string{pring.GFIFO, pring.GLen}
	if seed%2 == 1 {
		check, guarantees = "ring/cap-law", []string{pring.GCap}
	}
	sizes := []int{0, 1, 2, 3, 7, 15, 16, 17, 31, 64}
	initial := sizes[r.IntN(len(sizes))]
	profile, params := "doubling", map[string]float64{"initial": float64(initial)}
	m := ring.New[string](initial)
	if seed%3 == 2 {
		normal := sizes[r.IntN(len(sizes))]
		profile, params["normal"] = "shrinking", float64(normal)
		m = ring.NewShrinking[string](initial, normal)
	}
	var steps []traces.VStep
	next := 0
	write := func() {
		v := fmt.Sprintf("v%d", next)
		next++
		m = m.Write(v)
		steps = append(steps, traces.VStep{Op: "Write", Value: str(v)})
	}
	read := func() {
		var v string
		var ok bool
		m, v, ok = m.Read()
		steps = append(steps, traces.VStep{Op: "Read", Want: &traces.Want{Value: str(v), OK: boolp(ok)}})
	}
	observe := func() {
		if check == "ring/cap-law" || r.IntN(2) == 0 {
			steps = append(steps, traces.VStep{Op: "Cap", Want: &traces.Want{N: i64(m.Cap())}})
		}
		steps = append(steps, traces.VStep{Op: "Len", Want: &traces.Want{N: i64(m.Len())}})
	}
	rounds := 2 + r.IntN(4)
	for range rounds {
		// A burst of writes, sometimes past a growth, then reads, some
		// past empty.
		burst := 1 + r.IntN(10)
		if r.IntN(6) == 0 {
			burst = 17 + r.IntN(24)
		}
		for range burst {
			write()
			if r.IntN(5) == 0 {
				read()
			}
		}
		observe()
		reads := r.IntN(burst + 3)
		for range reads {
			read()
		}
		observe()
	}
	return traces.Vector{Header: traces.Header{Profile: profile, Params: params, Check: check, Guarantees: guarantees}, Steps: steps}
}
