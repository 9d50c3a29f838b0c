package controllerruntime

import (
	"testing"

	pctrl "github.com/kverify/kverify/props/controller"
	"github.com/kverify/kverify/subjects/ours"
	"github.com/kverify/kverify/subjects/upstream"
)

// BenchmarkController100k: 100,000 keys changed once, each reconciled by
// 8 workers reading the cache (props/controller.Benchmark): ours
// (impl/controller), client-go's parts composed as the sample controller
// composes them, and controller-runtime's controller (priority queue), in
// one run:
//
//	go test -run '^$' -bench Controller100k -benchmem -benchtime 2x -count 6 . > ctl.out
//	benchstat -col /impl ctl.out
func BenchmarkController100k(b *testing.B) {
	for _, s := range []struct {
		impl    string
		subject pctrl.Subject
	}{{"ours", ours.Controller()}, {"upstream", upstream.Controller()}, {"controller-runtime", Controller()}} {
		b.Run("impl="+s.impl, func(b *testing.B) { pctrl.Benchmark(b, s.subject, 100_000, 8) })
	}
}
