package checkkit

import (
	"fmt"
	"testing"
)

// scenarioAbort unwinds a fixed scenario with its violation.
type scenarioAbort struct{ err error }

// Scenario runs body in a synctest bubble as a fixed scenario named name:
// the steps body records on rec are the trace, and a violation comes back
// as the error, with those steps attached, whether body returns it or
// ends the scenario at once with AbortScenario (or a ScenarioFail func).
func Scenario(t *testing.T, cfg Config, name string, body func(rec *Recorder) error) (err error) {
	rec := NewRecorder(cfg.Progress)
	rec.Step("scenario "+name, "", "")
	defer func() {
		if r := recover(); r != nil {
			a, ok := r.(scenarioAbort)
			if !ok {
				panic(r)
			}
			err = a.err
		}
		if err != nil {
			err = fmt.Errorf("scenario %q: %w", name, err)
		}
	}()
	Bubble(t, func() {
		rec.Timed()
		err = rec.Attach(body(rec))
	})
	return err
}

// AbortScenario ends the running Scenario with err (a violation that
// already has its steps attached, rec.Attach). Deferred calls of the
// scenario's body run first, inside the bubble, so that they can stop
// what it started.
func AbortScenario(err error) { panic(scenarioAbort{err}) }

// ScenarioFail is the usual fail func of a Scenario's body: it breaks
// guarantee with the formatted detail and ends the scenario.
func ScenarioFail(rec *Recorder) func(guarantee, format string, args ...any) {
	return func(g, f string, a ...any) { AbortScenario(rec.Attach(Broke(g, f, a...))) }
}
