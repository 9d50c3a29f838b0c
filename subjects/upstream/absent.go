package upstream

import "github.com/kverify/kverify/subjects/suite"

// checkNames lists each component's checks as "name family" at the
// pinned release. The module kverify generates for another release sets
// it (subjects/releases), so that a component whose API that release
// lacks still lists every check, each not offered, with the reason.
var checkNames map[string][]string

// absentEntries are components this release cannot take part in: every
// check is listed, none runs, and no declaration can go stale.
func absentEntries(reason string, components ...string) []suite.Entry {
	return suite.AbsentEntries(Subject, reason, checkNames, components...)
}
