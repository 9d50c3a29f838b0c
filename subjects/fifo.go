package subjects

import (
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	pfifo "github.com/kverify/kverify/props/fifo"
	"github.com/kverify/kverify/traces"
	"github.com/kverify/kverify/upstream"
)

// fifoEntries are the deltafifo and realfifo components' entries.
func fifoEntries() []Entry {
	return []Entry{
		{Component: pfifo.DeltaComponent, Subject: Ours, Checks: func() []checkkit.Check { return pfifo.Checks(OursDeltaFIFO()) },
			Replay: replayFIFO(OursDeltaFIFO())},
		{Component: pfifo.DeltaComponent, Subject: Upstream, Checks: func() []checkkit.Check { return pfifo.Checks(upstream.DeltaFIFO()) },
			Divergences: upstream.DeltaFIFODivergences, Replay: replayFIFO(upstream.DeltaFIFO())},
		{Component: pfifo.RealComponent, Subject: Ours, Checks: func() []checkkit.Check { return pfifo.Checks(OursRealFIFO()) },
			Replay: replayFIFO(OursRealFIFO())},
		{Component: pfifo.RealComponent, Subject: Upstream, Checks: func() []checkkit.Check { return pfifo.Checks(upstream.RealFIFO()) },
			Divergences: upstream.RealFIFODivergences, Replay: replayFIFO(upstream.RealFIFO())},
	}
}

func replayFIFO(s pfifo.Subject) func(*testing.T, *traces.Trace) error {
	return func(_ *testing.T, tr *traces.Trace) error { return pfifo.Replay(s, tr) }
}
