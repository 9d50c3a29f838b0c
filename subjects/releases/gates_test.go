package releases

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestGatesMatchClientGo reads the pinned release's
// features/known_features.go and compares each gate of Gates with it:
// present, settable unless locked, and on by default exactly when the
// table says.
func TestGatesMatchClientGo(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/client-go").Output()
	if err != nil {
		t.Skipf("go list -m k8s.io/client-go: %v", err)
	}
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "features", "known_features.go"))
	if err != nil {
		t.Skip(err)
	}
	// Each gate's versioned specs: "Name: {" then lines
	// "{Version: version.MustParse("1.35"), Default: true, ...}".
	specs := map[string][]string{}
	var cur string
	for _, l := range strings.Split(string(src), "\n") {
		if m := regexp.MustCompile(`^\t([A-Za-z]+): \{$`).FindStringSubmatch(l); m != nil {
			cur = m[1]
			continue
		}
		if cur != "" && strings.Contains(l, "Version:") {
			specs[cur] = append(specs[cur], l)
		}
	}
	if len(specs) == 0 {
		t.Fatal("no gate found in known_features.go: its format changed")
	}
	for _, g := range Gates {
		if !g.Settable(Pinned) && g.LockedFrom == "" {
			continue // not in the pinned release
		}
		lines, ok := specs[g.Name]
		if !ok {
			t.Errorf("%s: not in client-go %s's known_features.go", g.Name, Pinned)
			continue
		}
		last := lines[len(lines)-1]
		if on := strings.Contains(last, "Default: true"); on != g.Default(Pinned) {
			t.Errorf("%s: client-go %s's default is %v (%s), the table says %v", g.Name, Pinned, on, strings.TrimSpace(last), g.Default(Pinned))
		}
		if locked := strings.Contains(last, "LockToDefault: true"); locked == g.Settable(Pinned) {
			t.Errorf("%s: client-go %s locked %v (%s), the table says settable %v", g.Name, Pinned, locked, strings.TrimSpace(last), g.Settable(Pinned))
		}
	}
}

func TestFlips(t *testing.T) {
	for _, c := range []struct {
		release string
		want    []string
	}{
		{"v0.29.15", nil},
		{"v0.30.14", nil}, // its reflector does not read the gate
		{"v0.33.13", []string{"WatchListClient=true", "InOrderInformers=false"}},
		{"v0.35.10", []string{"WatchListClient=false", "InOrderInformers=false", "InOrderInformersBatchProcess=false"}},
		{"v0.37.2", []string{"WatchListClient=false", "InOrderInformersBatchProcess=false", "AtomicFIFO=false", "UnlockWhileProcessingFIFO=false"}},
		{"v0.38.0-beta.0", []string{"WatchListClient=false", "InOrderInformersBatchProcess=false", "AtomicFIFO=false", "UnlockWhileProcessingFIFO=false", "WatchListClientConcurrentDecoding=false"}},
	} {
		if got := Flips(c.release); !slices.Equal(got, c.want) {
			t.Errorf("Flips(%s) = %v, want %v", c.release, got, c.want)
		}
	}
}
