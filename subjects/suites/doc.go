// Package suites holds the README test command's runs of the conformance
// suite: one package per subject and component (suites/SUBJECT/COMPONENT),
// each a TestSuite of that component's checks on that subject. One test
// binary per component, not per subject, because go test's default
// timeout (10 minutes) is per binary and wall time: beside 8 CPU-bound
// processes on 2 cores the whole suite of one subject took 549 s (ours)
// and 518 s (upstream) of its 600, working all along, where one
// component's takes a tenth of that. The kverify command does not use
// these packages: it drives subjects' own TestSuite, narrowed by its
// environment, with a timeout of its own. subjects' TestSuitePackages
// holds this tree to the registry.
package suites
