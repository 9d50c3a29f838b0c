package subjects

import (
	"slices"
	"sync"
	"testing"

	"github.com/kverify/kverify/impl/ring"
	"github.com/kverify/kverify/props/checkkit"
	pring "github.com/kverify/kverify/props/ring"
	"github.com/kverify/kverify/traces"
	"github.com/kverify/kverify/upstream"
)

// OursRing is our Growing ring (upstream's semantics) as a subject; its
// checks are named ring/*.
func OursRing() pring.Subject {
	return pring.Subject{
		Name: "ring",
		New:  func(n int) pring.Ring { return ring.NewGrowing[string](n) },
		Law:  pring.LawDoubling,
	}
}

// OursChunked is our Chunked buffer (the listeners' buffer) as a subject;
// its checks are named chunked/*. The chunk size is NewChunked's documented
// one, stated here independently of the implementation: n, or 1024 for
// n <= 0.
func OursChunked() pring.Subject {
	return pring.Subject{
		Name: "chunked",
		New:  func(n int) pring.Ring { return ring.NewChunked[string](n) },
		Law:  pring.LawChunked,
		ChunkSize: func(n int) int {
			if n <= 0 {
				return 1024
			}
			return n
		},
	}
}

// OursPooled is our Chunked buffer made from a shared Pool (as the
// listeners' buffers are); its checks are named pooled/*. Every buffer the
// subject makes for one chunk size shares one pool that keeps at most two
// free chunks, so a check's buffers, made one after another, take over
// each other's chunks: a chunk handed out twice, or not cleared, shows as
// a FIFO or capacity violation.
func OursPooled() pring.Subject {
	var (
		mu    sync.Mutex
		pools = map[int]*ring.Pool[string]{}
	)
	s := OursChunked()
	s.Name = "pooled"
	s.New = func(n int) pring.Ring {
		mu.Lock()
		defer mu.Unlock()
		p, ok := pools[n]
		if !ok {
			p = ring.NewPool[string](n, 2)
			pools[n] = p
		}
		return p.New()
	}
	return s
}

// ringEntries are the ring component's entries. Both of our buffers are
// under the one "ours" subject (checks ring/* and chunked/*), so that the
// gate and the mutant kill matrix, which run the "ours" subject, cover
// both; upstream's TypedRingGrowing takes the ring/* checks.
func ringEntries() []Entry {
	return []Entry{
		{Component: pring.Component, Subject: Ours, Checks: oursRing,
			Replay: replayRing(OursRing(), OursChunked(), OursPooled())},
		{Component: pring.Component, Subject: Upstream, Checks: upstreamRing,
			Divergences: upstream.RingDivergences, Replay: replayRing(upstream.Ring())},
	}
}

func oursRing() []checkkit.Check {
	return slices.Concat(pring.Checks(OursRing()), pring.Checks(OursChunked()), pring.Checks(OursPooled()))
}

func upstreamRing() []checkkit.Check { return pring.Checks(upstream.Ring()) }

func replayRing(ss ...pring.Subject) func(*testing.T, *traces.Trace) error {
	return func(_ *testing.T, tr *traces.Trace) error { return pring.Replay(ss, tr) }
}
