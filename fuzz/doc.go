// Package fuzz holds kverify's native Go fuzz targets. Each target decodes
// its input bytes into an operation sequence, so that every byte string is a
// valid run, and checks a subject against the reference model with the same
// step engine the rapid checks use.
//
// Run one target with
//
//	go test ./fuzz -run '^$' -fuzz '^FuzzWorkqueueOps$' -fuzztime 60s -fuzzminimizetime 100x
//
// Keep -fuzzminimizetime short: the fuzzer also minimizes every new
// interesting input, for 60 s by default, and the rapid-driven targets'
// inputs are long (rapid reads eight bytes per draw), so with the default
// a run spends most of its time minimizing and reports 0 execs/s (Go issue
// 48820 is a relative).
//
// Seeds live in testdata/fuzz/<Target>/ and run in every plain go test;
// crashers the fuzzer finds land there too and are committed. The
// .clusterfuzzlite/ directory builds the same targets for libFuzzer.
package fuzz

import (
	pwq "github.com/kverify/kverify/props/workqueue"
	wq "github.com/kverify/kverify/spec/workqueue"
)

// maxSteps bounds the work per input.
const maxSteps = 256

// DecodeQueueSteps turns bytes into queue machine steps, one per byte:
// the low 3 bits pick the operation, the next 2 the key or worker.
// Shutdowns are kept rare (they end the interesting part of a run).
func DecodeQueueSteps(data []byte) []pwq.Step {
	if len(data) > maxSteps {
		data = data[:maxSteps]
	}
	steps := make([]pwq.Step, 0, len(data))
	for _, b := range data {
		sel := int(b>>3) & 3
		key := pwq.Keys[sel%len(pwq.Keys)]
		w := sel % pwq.Workers
		var s pwq.Step
		switch b & 7 {
		case 0, 1:
			s = pwq.Step{Kind: wq.Add, Key: key}
		case 2:
			s = pwq.Step{Kind: wq.Get, Worker: w}
		case 3:
			s = pwq.Step{Kind: wq.Done, Worker: w}
		case 4:
			s = pwq.Step{Kind: wq.Len}
		case 5:
			s = pwq.Step{Kind: wq.Done, Key: key} // misuse: only enabled in Misuse mode
		case 6:
			s = pwq.Step{Kind: wq.ShuttingDown}
		case 7:
			switch {
			case b&0xE0 == 0xE0:
				s = pwq.Step{Kind: wq.ShutDown}
			case b&0xE0 == 0xC0:
				s = pwq.Step{Kind: wq.ShutDownWithDrain}
			default:
				s = pwq.Step{Kind: wq.Get, Worker: w}
			}
		}
		steps = append(steps, s)
	}
	return steps
}
