package checkkit

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestHelperHang is a library run whose first check hangs; it runs only as
// TestFreshProcessAfterHang's child process.
func TestHelperHang(t *testing.T) {
	if os.Getenv("KVERIFY_PROPS_HELPER") != "hang" {
		t.Skip("run by TestFreshProcessAfterHang")
	}
	stop := make(chan struct{}) // never closed: the spin lasts as long as this process
	var wg sync.WaitGroup
	Run(t, []Check{
		spinCheck(stop, &wg),
		{Name: "x/after-fails", Family: FamilyModel, Run: func(*testing.T, Config) error { return Broke("Fair", "planted after the hang") }},
		{Name: "x/after-passes", Family: FamilyModel, Run: func(*testing.T, Config) error { return nil }},
		{Name: "x/after-declared", Family: FamilyModel, Run: func(*testing.T, Config) error { return Broke("Fair", "declared after the hang") }},
	}, WithDivergences(Divergence{Check: "x/after-declared", Reason: "planted divergence", Upstream: "here"}))
}

// TestFreshProcessAfterHang: in a library run (go test in the user's
// module), a check that hangs does not leave the checks after it unchecked:
// each runs in a fresh process and gets its own verdict (issue 27, 11).
func TestFreshProcessAfterHang(t *testing.T) {
	if testing.Short() {
		t.Skip("starts test binaries")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHang$", "-test.v=true", "-test.count=1")
	cmd.Dir = t.TempDir()
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, "KVERIFY_") }),
		"KVERIFY_PROPS_HELPER=hang")
	out, err := cmd.CombinedOutput()
	s := string(out)
	if err == nil {
		t.Fatalf("the run with a hanging check passed:\n%s", s)
	}
	for _, want := range []string{
		"--- FAIL: TestHelperHang/x/spin",
		"--- FAIL: TestHelperHang/x/after-fails",
		"planted after the hang",
		"--- PASS: TestHelperHang/x/after-passes",
		"--- SKIP: TestHelperHang/x/after-declared",
		DivergencePrefix + ": x/after-declared",
		"ran in a fresh process (TestHelperHang/x/spin hung in this one)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(s, NotRunPrefix) {
		t.Errorf("a check after the hang was left %s", NotRunPrefix)
	}
	if t.Failed() {
		t.Logf("output:\n%s", s)
	}
}
