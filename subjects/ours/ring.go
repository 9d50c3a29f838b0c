package ours

import (
	"sync"

	"github.com/kverify/kverify/impl/ring"
	pring "github.com/kverify/kverify/props/ring"
)

// Ring is our Growing ring (upstream's semantics) as a subject; its
// checks are named ring/*.
func Ring() pring.Subject {
	return pring.Subject{
		Name: "ring",
		New:  func(n int) pring.Ring { return ring.NewGrowing[string](n) },
		Law:  pring.LawDoubling,
	}
}

// Chunked is our Chunked buffer (the listeners' buffer) as a subject;
// its checks are named chunked/*. The chunk size is NewChunked's documented
// one, stated here independently of the implementation: n, or 1024 for
// n <= 0.
func Chunked() pring.Subject {
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

// Pooled is our Chunked buffer made from a shared Pool (as the
// listeners' buffers are); its checks are named pooled/*. Every buffer the
// subject makes for one chunk size shares one pool that keeps at most two
// free chunks, so a check's buffers, made one after another, take over
// each other's chunks: a chunk handed out twice, or not cleared, shows as
// a FIFO or capacity violation.
func Pooled() pring.Subject {
	var (
		mu    sync.Mutex
		pools = map[int]*ring.Pool[string]{}
	)
	s := Chunked()
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
