// Package checkkit is the toolkit kverify's checks are written with, the
// core of its conformance library: named checks that each state one
// guarantee (Check), a runner that turns them into subtests (Run),
// declared divergences, and a rapid driver (Rapid) whose failures carry
// their shortest counterexample as a replayable trace; besides, racers,
// retention probes, size generators and the watchdog.
//
// Component packages (props/workqueue, ...) build []Check from a factory;
// this package runs them. A check's core returns an error rather than
// failing a *testing.T, so the same check serves go test, the kverify
// command and the mutant kill matrix. A user of the checks needs only
// package props, whose names are this package's.
package checkkit
