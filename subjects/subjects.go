// Package subjects is the registry of implementations under test.
//
// Registry is the one table of components, each bound to our
// implementation (subjects/ours) and to client-go (subjects/upstream);
// every list keyed by component comes from it, and TestRegistryConsistent
// holds the catalogues (mutants, fuzz machines, golden vectors,
// divergences) to it. Externals are the subjects that live in nested
// modules of their own (subjects/controllerruntime; subjects/node, the
// JavaScript clients client-node and fluent). Resolve turns every
// --subject form into the subjects it names; a mutant (mutant:ID) is ours
// built with one file replaced by an overlay (package mutants), run
// through the "ours" entries; client-go@VERSION is client-go at that
// release, in the module subjects/releases generates for it.
// suite.RunSuite and suite.RunReplay are what the test binaries of this
// package and of the nested modules run.
package subjects

import "github.com/kverify/kverify/subjects/suite"

// Subject names.
const (
	Ours     = "ours"
	Upstream = "upstream"
)

// Entry is one component's checks bound to one subject (see suite.Entry).
type Entry = suite.Entry
