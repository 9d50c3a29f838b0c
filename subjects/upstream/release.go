package upstream

// Release is the client-go release this package is built against: in
// this module the release go.mod pins. For any other release kverify
// generates a module of its own (subjects/releases) with a copy of this
// package in which this file is rewritten, so that the adapters, the
// divergences' file:line and their release ranges speak of that release.
const Release = "v0.37.2"

// UtilsRelease is the k8s.io/utils version built beside Release (the one
// its client-go requires, or later where Go 1.26 needs it).
const UtilsRelease = "v0.0.0-20260626114624-be93311217bd"

// Generated is true in a module kverify generates for a release other
// than the pinned one (subjects/releases rewrites this file).
const Generated = false

// Matrix is the release list of the behaviour matrix (subjects/releases,
// kverify matrix): the newest patch of every minor release from v0.20 to
// the newest, and the newest pre-release. v0.20 is the oldest minor
// kverify builds: every component it checks exists there, and its
// packages compile with Go 1.26 once json-iterator's reflect2 is v1.0.2.
var Matrix = []string{
	"v0.20.15", "v0.21.14", "v0.22.17", "v0.23.17", "v0.24.17", "v0.25.16",
	"v0.26.15", "v0.27.16", "v0.28.15", "v0.29.15", "v0.30.14", "v0.31.14",
	"v0.32.13", "v0.33.13", "v0.34.13", "v0.35.10", "v0.36.6", "v0.37.2",
	"v0.38.0-beta.0",
}
