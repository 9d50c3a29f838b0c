package resource

import (
	"fmt"
	"strings"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/modelserver"
	"pgregory.net/rapid"
)

// Plan is one run of resource/level, fixed in advance: the server, its
// fault schedule and objects, the subscriptions' handlers and the steps.
// A trace's first step holds it as JSON; Replay plays it again.
type Plan struct {
	// Objects are created (o000, o001, ...) before the resource starts.
	Objects int
	Faults  []modelserver.Fault `json:",omitempty"`
	// NoServerWatchList: the server refuses watch-list requests;
	// WatchList: the source lets the informer stream its syncs.
	NoServerWatchList bool `json:",omitempty"`
	WatchList         bool `json:",omitempty"`
	// Early: the first subscription is made before Start.
	Early bool `json:",omitempty"`
	// Handlers are each subscription's handling of its events, in the
	// order they come (then: Done(nil) at once); the first is the
	// subscription made at the start, the others Subscribe steps'.
	Handlers [][]Handling
	Steps    []Step `json:",omitempty"`
}

// Handling is how the subscriber handles one event: it waits Delay, then
// calls Done, with an error if Fail (a key's fourth failure and later are
// handled without error, so that every run can settle).
type Handling struct {
	Delay time.Duration `json:",omitempty"`
	Fail  bool          `json:",omitempty"`
}

func (h Handling) String() string {
	s := "ok"
	if h.Fail {
		s = "fail"
	}
	if h.Delay > 0 {
		s = h.Delay.String() + " " + s
	}
	return s
}

// StepKind is what one step does.
type StepKind uint8

// The steps.
const (
	// Write creates the key if absent, else updates it.
	Write StepKind = iota
	// Remove deletes the key if present.
	Remove
	// Recreate deletes the key and creates it again at once (if present;
	// else creates it).
	Recreate
	// Bookmark makes a bookmark due on every open watch.
	Bookmark
	// Restart cuts every open watch stream and compacts the history.
	Restart
	// Advance lets Wait of fake time pass.
	Advance
	// Subscribe makes the next subscription.
	Subscribe
	// Unsubscribe ends the context of a subscription (Key modulo the
	// number made so far; if already ended, nothing).
	Unsubscribe
)

// Step is one step.
type Step struct {
	Kind StepKind
	Key  int           `json:",omitempty"`
	Wait time.Duration `json:",omitempty"`
	// Burst: the next step follows at once, before the resource and the
	// handlers have run (writes that land together, for the resource to
	// coalesce).
	Burst bool `json:",omitempty"`
}

func (s Step) String() string {
	if s.Burst {
		s.Burst = false
		return s.String() + " +"
	}
	switch s.Kind {
	case Write:
		return "write " + key(s.Key)
	case Remove:
		return "delete " + key(s.Key)
	case Recreate:
		return "recreate " + key(s.Key)
	case Bookmark:
		return "bookmark"
	case Restart:
		return "restart"
	case Advance:
		return "advance " + s.Wait.String()
	case Subscribe:
		return "subscribe"
	case Unsubscribe:
		return fmt.Sprintf("unsubscribe %d", s.Key)
	}
	return fmt.Sprintf("step(%d)", s.Kind)
}

// poolSize is the number of keys a run writes; maxSubscriptions how many
// subscriptions it makes at most.
const (
	poolSize         = 6
	maxSubscriptions = 3
)

// key is the key of index i: default/o000, default/o001, ...
func key(i int) string { return fmt.Sprintf("default/o%03d", i) }

func (p Plan) String() string {
	steps := make([]string, len(p.Steps))
	for i, s := range p.Steps {
		steps[i] = s.String()
	}
	hs := make([]string, len(p.Handlers))
	for i, h := range p.Handlers {
		hs[i] = fmt.Sprint(h)
	}
	return fmt.Sprintf("%d objects, faults %v, server watch-list %v, informer watch-list %v, first subscription before Start %v, handlers [%s], steps [%s]",
		p.Objects, p.Faults, !p.NoServerWatchList, p.WatchList, p.Early, strings.Join(hs, "; "), strings.Join(steps, ", "))
}

func handlingGen() *rapid.Generator[Handling] {
	return rapid.Custom(func(t *rapid.T) Handling {
		return Handling{
			Delay: rapid.SampledFrom([]time.Duration{0, 0, 0, time.Millisecond, time.Second, 30 * time.Second}).Draw(t, "delay"),
			Fail:  rapid.IntRange(0, 3).Draw(t, "fail?") == 0,
		}
	})
}

func stepGen() *rapid.Generator[Step] {
	return rapid.Custom(func(t *rapid.T) Step {
		s := drawStep(t)
		s.Burst = s.Kind != Advance && rapid.IntRange(0, 2).Draw(t, "burst?") == 0
		return s
	})
}

func drawStep(t *rapid.T) Step {
	switch checkkit.Choice(6, 3, 2, 1, 1, 3, 1, 1).Draw(t, "step") {
	case 0:
		return Step{Kind: Write, Key: rapid.IntRange(0, poolSize-1).Draw(t, "key")}
	case 1:
		return Step{Kind: Remove, Key: rapid.IntRange(0, poolSize-1).Draw(t, "key")}
	case 2:
		return Step{Kind: Recreate, Key: rapid.IntRange(0, poolSize-1).Draw(t, "key")}
	case 3:
		return Step{Kind: Bookmark}
	case 4:
		return Step{Kind: Restart}
	case 5:
		return Step{Kind: Advance, Wait: rapid.SampledFrom([]time.Duration{time.Millisecond, 100 * time.Millisecond, time.Second, 10 * time.Second, 65 * time.Second}).Draw(t, "wait")}
	case 6:
		return Step{Kind: Subscribe}
	}
	return Step{Kind: Unsubscribe, Key: rapid.IntRange(0, maxSubscriptions-1).Draw(t, "subscription")}
}

// planGen draws a plan.
func planGen() *rapid.Generator[Plan] {
	return rapid.Custom(func(t *rapid.T) Plan {
		p := Plan{
			Objects:           rapid.IntRange(0, poolSize).Draw(t, "objects"),
			Faults:            rapid.SliceOfN(modelserver.FaultGen(), 0, 6).Draw(t, "faults"),
			NoServerWatchList: rapid.Bool().Draw(t, "server-without-watch-list"),
			WatchList:         rapid.Bool().Draw(t, "watch-list"),
			Early:             rapid.Bool().Draw(t, "subscribe-before-start"),
		}
		n := rapid.IntRange(0, 30).Draw(t, "steps")
		p.Steps = rapid.SliceOfN(stepGen(), n, n).Draw(t, "steps")
		subs := 1
		for _, s := range p.Steps {
			if s.Kind == Subscribe {
				subs++
			}
		}
		for i := range min(subs, maxSubscriptions) {
			p.Handlers = append(p.Handlers, rapid.SliceOfN(handlingGen(), 0, 12).Draw(t, fmt.Sprintf("handlers %d", i)))
		}
		return p
	})
}
