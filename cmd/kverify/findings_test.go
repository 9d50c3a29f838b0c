package main

import (
	"strings"
	"testing"

	"github.com/kverify/kverify/traces/findings"
)

// kverify findings --report prints a finding with its upstream references
// and their recorded state; --report all prints every finding.
func TestFindingsReport(t *testing.T) {
	fds, err := findings.Load("../..")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := writeReports(&b, fds, "reflector-watchlist-waits-forever-for-bookmark", ""); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"**Upstream references**",
		"[kubernetes/kubernetes#140890](https://github.com/kubernetes/kubernetes/issues/140890): issue, open; report",
		"[kubernetes/kubernetes#140902](https://github.com/kubernetes/kubernetes/pull/140902): pr, open; fix",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := writeReports(&b, fds, "all", "client-go"); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range fds {
		if f.Subject == "client-go" {
			n++
			if !strings.Contains(b.String(), "## "+f.Title+"\n") {
				t.Errorf("--report all lacks %s", f.ID)
			}
		}
	}
	if got := strings.Count(b.String(), "\n---\n"); got != n-1 {
		t.Errorf("--report all --subject client-go: %d separators, want %d", got, n-1)
	}
	if err := writeReports(&b, fds, "no-such-finding", ""); err == nil {
		t.Error("no error for an unknown finding")
	}
	for _, f := range fds {
		if f.ID == "workqueue-drain-skips-queued" {
			if got, want := upstreamSummary(f), "kubernetes#141079 fix (pr, open), 1 related"; got != want {
				t.Errorf("upstreamSummary = %q, want %q", got, want)
			}
		}
	}
}
