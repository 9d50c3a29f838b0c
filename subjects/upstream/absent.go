package upstream

import (
	"strings"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/subjects/suite"
)

// checkNames lists each component's checks as "name family" at the
// pinned release. The module kverify generates for another release sets
// it (subjects/releases), so that a component whose API that release
// lacks still lists every check, each not offered, with the reason.
var checkNames map[string][]string

// absentEntries are components this release cannot take part in: every
// check is listed, none runs, and no declaration can go stale.
func absentEntries(reason string, components ...string) []suite.Entry {
	var es []suite.Entry
	for _, c := range components {
		names := checkNames[c]
		es = append(es, suite.Entry{Component: c, Subject: Subject, Checks: func() []checkkit.Check {
			var cs []checkkit.Check
			for _, n := range names {
				name, family, _ := strings.Cut(n, " ")
				cs = append(cs, checkkit.Check{Name: name, Family: family, NotOffered: reason})
			}
			return cs
		}})
	}
	return es
}
