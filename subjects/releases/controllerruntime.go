package releases

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/mod/modfile"
)

// controller-runtime at any release from v0.12, the same way as client-go:
// a module generated at run time (<cache>/kverify/controller-runtime/<release>)
// that requires sigs.k8s.io/controller-runtime at the release, and so the
// client-go, apimachinery and api releases its go.mod asks for. Beside it:
//
//	kverify/  the copy of the suite's packages, as for client-go, with
//	          subjects/upstream's adapters of the client-go release that
//	          controller-runtime release requires (its API era)
//	*.go      the adapter package subjects/controllerruntime (a nested
//	          module of this checkout), its files kept or dropped by their
//	          era tags, controllerruntime_before_vX_Y (true for
//	          controller-runtime releases older than vX.Y.0), and its
//	          Release constant rewritten
//	suite_test.go  TestSuite and TestReplay on the adapter's Entries
//
// The adapter's era files say which controller-runtime API each needs; a
// release whose API the checks cannot reach gets the checks listed as not
// offered, with the reason (the adapter's absent files).

// CRModule is controller-runtime's module path.
const CRModule = "sigs.k8s.io/controller-runtime"

// CRName is controller-runtime's subject name (subjects/controllerruntime's
// Name); CRName@VERSION names it at a release.
const CRName = "controller-runtime"

// CRPinned is the release subjects/controllerruntime's go.mod pins: the
// subject controller-runtime itself, built in that module.
const CRPinned = "v0.25.3"

// CROldest is the oldest controller-runtime release kverify builds.
const CROldest = "v0.12.0"

// CRMatrix is the release list of controller-runtime's behaviour matrix:
// the newest patch of every minor release from v0.12 that the Go module
// proxy serves (a later patch of a line may exist upstream and not be
// served: v0.21.0 is the newest v0.21 served here).
var CRMatrix = []string{
	"v0.12.3", "v0.13.2", "v0.14.7", "v0.15.3", "v0.16.6", "v0.17.6", "v0.18.7",
	"v0.19.7", "v0.20.4", "v0.21.0", "v0.22.5", "v0.23.3", "v0.24.1", "v0.25.3",
}

// CREraTag is the adapter's build tag true for controller-runtime
// releases older than minor (vX.Y).
func CREraTag(minor string) string {
	return crEraPrefix + strings.ReplaceAll(minor, ".", "_")
}

const crEraPrefix = "controllerruntime_before_"

// CheckControllerRuntime reports whether release can be a subject: a
// semantic version of controller-runtime no older than CROldest.
func CheckControllerRuntime(release string) error {
	return checkRelease(CRName, release, CROldest)
}

// CRDir is where the module for a controller-runtime release is
// generated.
func CRDir(release string) (string, error) {
	base, err := cacheBase()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "controller-runtime", release), nil
}

// crAdapterDir is the adapter package's directory in the checkout.
var crAdapterDir = filepath.Join("subjects", "controllerruntime")

// PrepareControllerRuntime generates (or refreshes) the module for
// controller-runtime at release from the checkout at root and returns its
// directory. checks lists each component's checks at the pinned releases
// ("name family"), for the checks a release cannot take part in.
func PrepareControllerRuntime(root, release string, checks map[string][]string, log io.Writer) (string, error) {
	if err := CheckControllerRuntime(release); err != nil {
		return "", err
	}
	dir, err := CRDir(release)
	if err != nil {
		return "", err
	}
	k8s, err := crRequires(release)
	if err != nil {
		return "", err
	}
	cg, am := k8s["k8s.io/client-go"], k8s["k8s.io/apimachinery"]
	if cg == "" || am == "" {
		return "", fmt.Errorf("controller-runtime@%s: its go.mod requires no client-go or apimachinery", release)
	}
	if err := Check(cg); err != nil {
		return "", fmt.Errorf("controller-runtime@%s requires %v", release, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := writeCopy(root, dir, cg, am, checks); err != nil {
		return "", err
	}
	if err := copyAdapter(root, dir, release, checks); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "suite_test.go"), []byte(crSuiteTest), 0o644); err != nil {
		return "", err
	}
	if err := writeCRGoMod(dir, release); err != nil {
		return "", err
	}
	fmt.Fprintf(log, "kverify: controller-runtime@%s requires client-go %s, apimachinery %s\n", release, cg, am)
	if err := tidy(dir, log); err != nil {
		return "", fmt.Errorf("controller-runtime@%s: %v", release, err)
	}
	return dir, nil
}

// crRequires downloads controller-runtime at release and returns the
// versions its go.mod requires, by module path.
func crRequires(release string) (map[string]string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", CRModule+"@"+release)
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	var info struct{ GoMod, Error string }
	if jerr := json.Unmarshal(out, &info); jerr != nil || info.Error != "" || info.GoMod == "" {
		return nil, fmt.Errorf("go mod download %s@%s: %v %s", CRModule, release, err, info.Error)
	}
	src, err := os.ReadFile(info.GoMod)
	if err != nil {
		return nil, err
	}
	f, err := modfile.Parse(info.GoMod, src, nil)
	if err != nil {
		return nil, err
	}
	req := map[string]string{}
	for _, r := range f.Require {
		req[r.Mod.Path] = r.Mod.Version
	}
	return req, nil
}

// copyAdapter copies the adapter package's non-test files kept by their
// era tags for release into dir, with its Release constant rewritten, and
// writes the pinned check names beside them (checks_gen.go) when the
// release keeps absent.go, for the checks it cannot take part in. The files of an earlier run are
// removed first.
func copyAdapter(root, dir, release string, checks map[string][]string) error {
	old, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	src := filepath.Join(root, crAdapterDir)
	files, err := filepath.Glob(filepath.Join(src, "*.go"))
	if err != nil {
		return err
	}
	era := func(tag string) (bool, bool) { return eraTagTrue(crEraPrefix, tag, release) }
	releaseLine := regexp.MustCompile(`(?m)^const Release = ".*"$`)
	rewrote, absent := false, false
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		keep, strip, line, err := keepFileBy(b, era)
		if err != nil {
			return fmt.Errorf("%s: %v", f, err)
		}
		if !keep {
			continue
		}
		if strip {
			b = bytes.Replace(b, []byte(line+"\n"), nil, 1)
		}
		absent = absent || bytes.Contains(b, []byte("\nvar checkNames "))
		if releaseLine.Match(b) {
			b, rewrote = releaseLine.ReplaceAll(b, fmt.Appendf(nil, "const Release = %q", release)), true
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			return err
		}
	}
	if !rewrote {
		return fmt.Errorf("%s: no line `const Release = \"...\"` to rewrite", src)
	}
	if !absent {
		return nil // the release takes part in every component: no absent.go
	}
	return writeCheckNames(dir, "controllerruntime", checks)
}

const crSuiteTest = `// Code generated by kverify (subjects/releases); DO NOT EDIT.

package controllerruntime_test

import (
	"testing"

	"github.com/kverify/kverify/subjects/suite"
	"go.uber.org/goleak"
	controllerruntime "kverify.local/controllerruntime"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSuite(t *testing.T) { suite.RunSuite(t, controllerruntime.Entries()) }

func TestReplay(t *testing.T) { suite.RunReplay(t, controllerruntime.Entries()) }
`

// writeCRGoMod writes the generated module's go.mod: controller-runtime at
// the release, and through it the client-go modules that release
// requires.
func writeCRGoMod(dir, release string) error {
	mod := fmt.Sprintf(`// Code generated by kverify (subjects/releases); DO NOT EDIT.

module kverify.local/controllerruntime

go %s

require (
	github.com/kverify/kverify v0.0.0
	%s %s
	// json-iterator's reflect2 before v1.0.2 crashes on Go 1.18 and later.
	github.com/modern-go/reflect2 v1.0.2
)

replace github.com/kverify/kverify => ./kverify
`, goVersion(), CRModule, release)
	return os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644)
}
