//go:build controllerruntime_before_v0_20

package controllerruntime

import "github.com/kverify/kverify/subjects/suite"

// checkNames lists each component's checks as "name family" at the
// pinned releases; the module kverify generates for a release sets it
// (checks_gen.go), so that a component the release cannot take part in
// still lists every check, each not offered, with the reason.
var checkNames map[string][]string

// absentEntries are components this release cannot take part in: every
// check listed, none run.
func absentEntries(reason string, components ...string) []suite.Entry {
	return suite.AbsentEntries(Name, reason, checkNames, components...)
}
