package vectors

import (
	"fmt"

	"github.com/kverify/kverify/spec/apiserver"
	"github.com/kverify/kverify/traces"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The wire vectors (component wire): conversations with the model API
// server, for servers and decoders. Each vector is a script in
// spec/apiserver's notation (every step's op) with the model's normalised
// answer as its want's value (spec/apiserver.Run): writes answer
// "rv=N", Compact "compacted at N", a List its version, items
// (key@version, in order) and "continue" or "last", a Watch its events
// once the stream is quiet, an error "error CODE REASON [causes]". A
// server under test (kverify serve, or one in another language) replays
// it by making each request over HTTP and normalising what it decoded;
// kverify replays them over HTTP on the served model, decoded as plain
// JSON (ours) and by client-go's REST client (upstream).
//
// Params: watch_list, 1 or 0: the server's WatchList gate (the script's
// first step says so too).

const (
	wireFidelity  = "wire/fidelity"
	wireSchedules = "wire/schedules"
	gFidelity     = "the served model answers the recorded real-apiserver scenarios as the real stack did"
	gContinue     = "continue tokens are used as issued"
)

// wireVector makes vector seed: a few objects in two namespaces, then
// writes, compactions, lists (any version and match, limits, continued
// pages) and watches (from any version, with or without initial events
// and bookmarks), valid and invalid alike. Odd seeds are paging vectors
// (wire/schedules' continue tokens, as a client uses them): every list
// has a limit and is continued page by page, across writes and
// compactions.
func wireVector(seed uint64) traces.Vector {
	r := rng(seed)
	gate := seed%4 != 3
	paging := seed%2 == 1
	var ops []string
	if !gate {
		ops = append(ops, "WatchListGate(false)")
	}
	keys := []string{"default/a", "default/b", "default/c", "kube-system/a", "kube-system/d"}
	present := map[string]bool{}
	rv := 1
	write := func() {
		k := keys[r.IntN(len(keys))]
		switch {
		case !present[k]:
			ops = append(ops, "Create("+k+")")
			present[k] = true
		case r.IntN(3) == 0:
			ops = append(ops, "Delete("+k+")")
			present[k] = false
		default:
			ops = append(ops, "Update("+k+")")
		}
		rv++
	}
	for range 1 + r.IntN(5) {
		write()
	}
	version := func() string {
		switch r.IntN(6) {
		case 0:
			return ""
		case 1:
			return "0"
		case 2:
			return fmt.Sprint(rv + 1 + r.IntN(3)) // ahead
		case 3:
			return "x"
		}
		return fmt.Sprint(1 + r.IntN(rv))
	}
	listed := false
	for range 6 + r.IntN(8) {
		switch k := r.IntN(10); {
		case k < 3:
			write()
		case k == 3:
			ops = append(ops, "Compact")
		case k < 7 || paging && k < 9:
			args := "rv=" + version()
			if m := r.IntN(4); m == 1 {
				args += " match=" + string(metav1.ResourceVersionMatchExact)
			} else if m == 2 {
				args += " match=" + string(metav1.ResourceVersionMatchNotOlderThan)
			}
			if l := r.IntN(4); l > 0 && !paging {
				args += fmt.Sprintf(" limit=%d", l)
			}
			if paging {
				args += fmt.Sprintf(" limit=%d", 1+r.IntN(2))
			}
			if listed && (paging || r.IntN(3) == 0) && r.IntN(4) > 0 {
				args = "rv= limit=1 continue"
			}
			ops = append(ops, "List("+args+")")
			listed = true
		default:
			args := "rv=" + version()
			switch r.IntN(4) {
			case 1:
				args += " match=NotOlderThan sie=true"
			case 2:
				args += " sie=false"
			}
			if r.IntN(3) > 0 {
				args += " bookmarks"
			}
			ops = append(ops, "Watch("+args+")")
		}
	}
	steps, err := apiserver.ParseScript(ops)
	if err != nil {
		panic(err)
	}
	answers := apiserver.Run(apiserver.Config{}, steps)
	check, g := wireFidelity, gFidelity
	if paging {
		check, g = wireSchedules, gContinue
	}
	v := traces.Vector{Header: traces.Header{Profile: "model", Check: check, Guarantees: []string{g},
		Params: map[string]float64{"watch_list": map[bool]float64{true: 1, false: 0}[gate]}}}
	for i, op := range ops {
		v.Steps = append(v.Steps, traces.VStep{Op: op, Want: &traces.Want{Value: str(answers[i])}})
	}
	v.Header.Steps = len(v.Steps)
	return v
}
