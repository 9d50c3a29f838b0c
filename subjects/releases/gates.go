package releases

import "golang.org/x/mod/semver"

// Gate is one of client-go's feature gates that changes the behaviour of
// the machinery kverify checks, with the releases where a user can set it
// (KUBE_FEATURE_<Name>, read by client-go from v0.30: features/envvar.go).
type Gate struct {
	Name string
	// From is the first release that has the gate.
	From string
	// OnFrom is the first release where it is on by default ("": never).
	OnFrom string
	// LockedFrom is the first release where it is locked to its default
	// ("": never): setting it the other way fails client-go's start.
	LockedFrom string
}

// Gates are client-go's gates over the informer machinery, from the
// release where the code reads them, as
// k8s.io/client-go@<release>/features/known_features.go declares them
// (v0.30.14:52, v0.33.13:82-83, v0.35.10:86-103, v0.36.6:112-143,
// v0.38.0-beta.0:133-173; TestGatesMatchClientGo compares the pinned
// release's file). Left out: the transport's gates (ClientsAllow*,
// ClientsPreferCBOR, ManagedFieldsOptOutClient), which no check reaches,
// and InformerResourceVersion, which adds an accessor
// (LastSyncResourceVersion of the informer's store) that no adapter calls.
var Gates = []Gate{
	// v0.30 declares WatchListClient, but its reflector reads
	// ENABLE_CLIENT_GO_WATCH_LIST_ALPHA instead (reflector.go:243-249):
	// the gate takes effect from v0.31 (reflector.go:256-258).
	{Name: "WatchListClient", From: "v0.31.0", OnFrom: "v0.35.0"},
	{Name: "InOrderInformers", From: "v0.33.0", OnFrom: "v0.33.0", LockedFrom: "v0.36.0"},
	{Name: "InOrderInformersBatchProcess", From: "v0.35.0", OnFrom: "v0.35.0"},
	{Name: "AtomicFIFO", From: "v0.36.0", OnFrom: "v0.36.0"},
	{Name: "UnlockWhileProcessingFIFO", From: "v0.36.0", OnFrom: "v0.36.0"},
	{Name: "WatchListClientConcurrentDecoding", From: "v0.38.0-alpha.0", OnFrom: "v0.38.0-alpha.0"},
}

// Settable reports whether release has the gate and lets a user set it.
func (g Gate) Settable(release string) bool {
	return semver.Compare(release, g.From) >= 0 && (g.LockedFrom == "" || semver.Compare(release, g.LockedFrom) < 0)
}

// Default is the gate's default on release.
func (g Gate) Default(release string) bool {
	return g.OnFrom != "" && semver.Compare(release, g.OnFrom) >= 0
}

// Flip is the setting that runs release with the gate the other way than
// its default, as --gates takes it ("WatchListClient=false").
func (g Gate) Flip(release string) string {
	if g.Default(release) {
		return g.Name + "=false"
	}
	return g.Name + "=true"
}

// Flips are the settings, one gate each, that run release with every gate
// it lets a user set the other way than its default.
func Flips(release string) []string {
	var out []string
	for _, g := range Gates {
		if g.Settable(release) {
			out = append(out, g.Flip(release))
		}
	}
	return out
}
