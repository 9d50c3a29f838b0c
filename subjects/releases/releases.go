// Package releases makes client-go at any release a kverify subject.
//
// This module pins one client-go release (subjects/upstream.Release). Go's
// minimal version selection would lift any other release a module of ours
// asks for to that one, so a release is built in a module of its own that
// kverify generates at run time under the user's cache directory:
//
//	<cache>/kverify/client-go/<release>/
//	  go.mod        requires k8s.io/client-go@<release>, kverify replaced by ./kverify
//	  suite_test.go TestSuite and TestReplay on upstream.Entries (subjects/suite)
//	  kverify/      the packages the suite needs (props, spec, traces, ...),
//	                copied with a go.mod that requires none of client-go, and
//	                subjects/upstream with the adapters of the release's API era
//	  findings/<id> the client-go reproducers (traces/findings/client-go), as
//	                they are published: without our side
//
// A module generated at run time, rather than a nested module committed
// per release: nineteen committed modules would each need their go.sum
// and their copy of the adapters kept in step by hand; one generator keeps
// every release on the same checks as the pinned one, and a new release
// is one more argument.
//
// API eras: an adapter file of subjects/upstream that needs an API a
// release lacks says so with a build constraint on an era tag,
// clientgo_before_vX_Y (true when the release is older than vX.Y.0), and
// its older twin carries the negation. This module builds with no era tag
// set, so it sees the adapters of the pinned release; the generator
// evaluates each file's constraint for the release, copies the files that
// hold and drops the constraint line. An era file that imports a package
// the pinned release no longer has (k8s.io/apimachinery/pkg/util/clock,
// before v0.23) also says ignore ("//go:build ignore && ..."): go mod tidy
// reads every file whatever its tags except those, and would fail in this
// module; the generator takes ignore as true. A component whose API the
// release lacks entirely gets not-offered entries (subjects/upstream's
// absent.go), each with the reason.
package releases

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"go/build/constraint"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"

	"github.com/kverify/kverify/internal/kvenv"
	"github.com/kverify/kverify/subjects/upstream"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// Pinned is the release this module's go.mod pins: the upstream subject.
const Pinned = upstream.Release

// Matrix is the release list of the behaviour matrix (upstream.Matrix).
var Matrix = upstream.Matrix

// Oldest is the oldest release kverify builds (see Matrix).
const Oldest = "v0.20.0"

// Check reports whether release can be a subject: a semantic version of
// client-go no older than Oldest.
func Check(release string) error { return checkRelease("client-go", release, Oldest) }

// checkRelease reports whether release is a semantic version of module
// (named as in subject@release) no older than oldest.
func checkRelease(module, release, oldest string) error {
	if semver.Canonical(release) != release {
		return fmt.Errorf("%s@%s: not a release (want vMAJOR.MINOR.PATCH[-PRERELEASE])", module, release)
	}
	if semver.Compare(release, oldest) < 0 {
		return fmt.Errorf("%s@%s: older than %s, the oldest release kverify builds", module, release, oldest)
	}
	return nil
}

// EraTag is the build tag true for releases older than minor (vX.Y).
func EraTag(minor string) string {
	return "clientgo_before_" + strings.ReplaceAll(minor, ".", "_")
}

// eraTrue evaluates a client-go era tag for release; ok is false for any
// other tag.
func eraTrue(tag, release string) (holds, ok bool) {
	return eraTagTrue("clientgo_before_", tag, release)
}

// eraTagTrue evaluates an era tag prefixvX_Y for release: true when release
// is older than vX.Y.0; ok is false for a tag without the prefix.
func eraTagTrue(prefix, tag, release string) (holds, ok bool) {
	v, ok := strings.CutPrefix(tag, prefix)
	if !ok {
		return false, false
	}
	v = strings.ReplaceAll(v, "_", ".")
	if !semver.IsValid(v) {
		return false, false
	}
	return semver.Compare(release, v) < 0, true
}

// keepFile decides a subjects/upstream file for release from its build
// constraint: keep says whether it is built, strip whether its
// constraint line (about era tags only) is to be dropped from the copy.
func keepFile(src []byte, release string) (keep, strip bool, line string, err error) {
	return keepFileBy(src, func(tag string) (bool, bool) { return eraTrue(tag, release) })
}

// keepFileBy is keepFile with the era tags evaluated by era (ok false for
// a tag that is not an era tag).
func keepFileBy(src []byte, era func(tag string) (holds, ok bool)) (keep, strip bool, line string, err error) {
	for _, l := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(l, "package ") {
			break
		}
		if !constraint.IsGoBuild(l) {
			continue
		}
		expr, perr := constraint.Parse(l)
		if perr != nil {
			return false, false, "", perr
		}
		onlyEras := true
		keep = expr.Eval(func(tag string) bool {
			if tag == "ignore" {
				return true // see the package doc: an era file go mod tidy must skip
			}
			v, ok := era(tag)
			if !ok {
				onlyEras = false
			}
			return v
		})
		if !onlyEras {
			return true, false, "", nil // not ours to decide: go build does
		}
		return keep, true, l, nil
	}
	return true, false, "", nil
}

// Dir is where the module for release is generated: under
// $KVERIFY_CACHE, or the user's cache directory.
func Dir(release string) (string, error) {
	base, err := cacheBase()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "client-go", release), nil
}

// cacheBase is the directory the generated modules go under:
// $KVERIFY_CACHE, or kverify in the user's cache directory.
func cacheBase() (string, error) {
	env, err := kvenv.Lookup("KVERIFY_CACHE")
	if err != nil {
		return "", err
	}
	base := env.Cache
	if base == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("no cache directory for generated modules (set KVERIFY_CACHE): %v", err)
		}
		base = filepath.Join(c, "kverify")
	}
	return base, nil
}

// suitePackages are the packages the generated suite imports; their
// dependencies within this module are copied with them.
var suitePackages = []string{"./subjects/upstream", "./subjects/suite"}

// Prepare generates (or refreshes) the module for release from the
// module at root and returns its directory. checks lists each
// component's checks at the pinned release ("name family"), for the
// components the release's API era lacks (upstream's absent.go). Its
// progress goes to log.
func Prepare(root, release string, checks map[string][]string, log io.Writer) (string, error) {
	if err := Check(release); err != nil {
		return "", err
	}
	dir, err := Dir(release)
	if err != nil {
		return "", err
	}
	if err := os.RemoveAll(filepath.Join(dir, "findings")); err != nil {
		return "", err
	}
	if err := writeCopy(root, dir, release, release, checks); err != nil {
		return "", err
	}
	if err := copyFindings(root, dir); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "suite_test.go"), []byte(suiteTest), 0o644); err != nil {
		return "", err
	}
	if err := writeGoMod(dir, release); err != nil {
		return "", err
	}
	if err := tidy(dir, log); err != nil {
		return "", fmt.Errorf("client-go@%s: %v", release, err)
	}
	return dir, nil
}

// writeCopy writes dir/kverify, the copy of the packages the suite needs,
// for client-go at release (subjects/upstream with that release's
// adapters) and apimachinery at apimachinery. The copy is rewritten whole
// each time: it must be what the checkout says now (go.sum, beside it, is
// kept, so tidy is quick after the first time).
func writeCopy(root, dir, release, apimachinery string, checks map[string][]string) error {
	kv := filepath.Join(dir, "kverify")
	if err := os.RemoveAll(kv); err != nil {
		return err
	}
	pkgs, err := listPackages(root)
	if err != nil {
		return err
	}
	for _, p := range pkgs {
		if err := copyPackage(root, kv, p, release); err != nil {
			return err
		}
	}
	if err := writeEra(kv, release, checks); err != nil {
		return err
	}
	return writeStrippedGoMod(root, kv, apimachinery)
}

const suiteTest = `// Code generated by kverify (subjects/releases); DO NOT EDIT.

package clientgo_test

import (
	"testing"

	"github.com/kverify/kverify/subjects/suite"
	"github.com/kverify/kverify/subjects/upstream"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSuite(t *testing.T) { suite.RunSuite(t, upstream.Entries()) }

func TestReplay(t *testing.T) { suite.RunReplay(t, upstream.Entries()) }
`

type listedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	EmbedFiles []string
	Module     *struct{ Path string }
}

// listPackages lists this module's packages the suite needs.
func listPackages(root string) ([]listedPackage, error) {
	cmd := exec.Command("go", append([]string{"list", "-deps", "-json=ImportPath,Dir,GoFiles,EmbedFiles,Module"}, suitePackages...)...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, err
		}
		if p.Module != nil && p.Module.Path == "github.com/kverify/kverify" {
			pkgs = append(pkgs, p)
		}
	}
	return pkgs, nil
}

// copyPackage copies one package's files into the stripped module at kv.
// subjects/upstream is copied file by file for the release's era.
func copyPackage(root, kv string, p listedPackage, release string) error {
	rel, err := filepath.Rel(root, p.Dir)
	if err != nil {
		return err
	}
	files := slices.Concat(p.GoFiles, p.EmbedFiles)
	era := rel == filepath.Join("subjects", "upstream")
	if era {
		all, err := filepath.Glob(filepath.Join(p.Dir, "*.go"))
		if err != nil {
			return err
		}
		files = files[:0]
		for _, f := range all {
			if !strings.HasSuffix(f, "_test.go") {
				files = append(files, filepath.Base(f))
			}
		}
	}
	for _, f := range files {
		src, err := os.ReadFile(filepath.Join(p.Dir, f))
		if err != nil {
			return err
		}
		if era && strings.HasSuffix(f, ".go") {
			keep, strip, line, err := keepFile(src, release)
			if err != nil {
				return fmt.Errorf("%s: %v", filepath.Join(rel, f), err)
			}
			if !keep {
				continue
			}
			if strip {
				src = bytes.Replace(src, []byte(line+"\n"), nil, 1)
			}
		}
		dst := filepath.Join(kv, rel, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, src, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeEra rewrites subjects/upstream/release.go for release, and writes
// the pinned release's check names beside it (checks_gen.go).
func writeEra(kv, release string, checks map[string][]string) error {
	dir := filepath.Join(kv, "subjects", "upstream")
	p := filepath.Join(dir, "release.go")
	src, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	for _, r := range []struct{ re, with string }{
		{`(?m)^const Release = ".*"$`, fmt.Sprintf("const Release = %q", release)},
		{`(?m)^const Generated = false$`, fmt.Sprintf("const Generated = %v", release != Pinned)},
	} {
		re := regexp.MustCompile(r.re)
		if !re.Match(src) {
			return fmt.Errorf("%s: no line %s to rewrite", p, r.re)
		}
		src = re.ReplaceAll(src, []byte(r.with))
	}
	if err := os.WriteFile(p, src, 0o644); err != nil {
		return err
	}
	return writeCheckNames(dir, "upstream", checks)
}

// writeCheckNames writes dir/checks_gen.go: package pkg's init setting its
// checkNames to checks (each component's checks at the pinned releases,
// "name family"), for the checks a release's absent files list.
func writeCheckNames(dir, pkg string, checks map[string][]string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "// Code generated by kverify (subjects/releases); DO NOT EDIT.\n\npackage %s\n\nfunc init() {\n\tcheckNames = map[string][]string{\n", pkg)
	for _, c := range slices.Sorted(maps.Keys(checks)) {
		fmt.Fprintf(&b, "\t\t%q: {", c)
		for i, n := range checks[c] {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q", n)
		}
		b.WriteString("},\n")
	}
	b.WriteString("\t}\n}\n")
	return os.WriteFile(filepath.Join(dir, "checks_gen.go"), []byte(b.String()), 0o644)
}

// strippedDrop are the modules the stripped copy must not require: the
// release brings its own.
var strippedDrop = []string{"k8s.io/client-go", "k8s.io/api", "k8s.io/apimachinery"}

// writeStrippedGoMod writes the copy's go.mod: this module's direct
// requirements without client-go and its siblings, and apimachinery at
// the given version (the release's), so that minimal version selection
// keeps the release's modules.
func writeStrippedGoMod(root, kv, apimachinery string) error {
	src, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return err
	}
	f, err := modfile.Parse("go.mod", src, nil)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "module %s\n\ngo %s\n\nrequire (\n", f.Module.Mod.Path, f.Go.Version)
	for _, r := range f.Require {
		if r.Indirect || slices.Contains(strippedDrop, r.Mod.Path) {
			continue
		}
		fmt.Fprintf(&b, "\t%s %s\n", r.Mod.Path, r.Mod.Version)
	}
	fmt.Fprintf(&b, "\tk8s.io/apimachinery %s\n)\n", apimachinery)
	return os.WriteFile(filepath.Join(kv, "go.mod"), []byte(b.String()), 0o644)
}

// writeGoMod writes the generated module's go.mod.
func writeGoMod(dir, release string) error {
	mod := fmt.Sprintf(`// Code generated by kverify (subjects/releases); DO NOT EDIT.

module kverify.local/clientgo

go %s

require (
	github.com/kverify/kverify v0.0.0
	k8s.io/api %[2]s
	k8s.io/apimachinery %[2]s
	k8s.io/client-go %[2]s
	// json-iterator's reflect2 before v1.0.2 crashes on Go 1.18 and later;
	// releases before v0.24 require v1.0.1.
	github.com/modern-go/reflect2 v1.0.2
)

replace github.com/kverify/kverify => ./kverify
`, goVersion(), release)
	return os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644)
}

// goVersion is the running Go's language version (1.26.0 for go1.26.8).
func goVersion() string {
	v := strings.TrimPrefix(runtime.Version(), "go")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1] + ".0"
}

var needsGo = regexp.MustCompile(`go: (?:module )?(\S+)@(\S+) requires go >= (\S+)`)

// ToolchainFile, in a generated module, names the Go toolchain it must be
// built with when its release asks for a newer Go than this one (see tidy):
// kverify builds its suite with GOTOOLCHAIN set to it.
const ToolchainFile = "kverify.toolchain"

// Toolchain returns the toolchain the generated module in dir needs, or
// "" for the running one.
func Toolchain(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, ToolchainFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// tidy runs go mod tidy in dir. A release whose modules ask for a newer Go
// than this one (v0.38.0-beta.0 says go 1.27.0, and its code imports
// packages new in Go 1.27, such as crypto/mldsa) is built with that Go,
// which the go command fetches (GOTOOLCHAIN) for this module alone: the
// main module stays on Go 1.26.
func tidy(dir string, log io.Writer) error {
	tc := Toolchain(dir)
	for range 4 {
		cmd := exec.Command("go", "mod", "tidy")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN="+cmp.Or(tc, "local"))
		out, err := cmd.CombinedOutput()
		if err == nil {
			return nil
		}
		m := needsGo.FindSubmatch(out)
		if m == nil {
			return fmt.Errorf("go mod tidy: %v\n%s", err, out)
		}
		v := string(m[3])
		if strings.Count(v, ".") == 1 {
			v += ".0"
		}
		tc = "go" + v
		fmt.Fprintf(log, "kverify: %s@%s requires go >= %s: this release is built with %s (GOTOOLCHAIN)\n", m[1], m[2], m[3], tc)
		if err := os.WriteFile(filepath.Join(dir, ToolchainFile), []byte(tc+"\n"), 0o644); err != nil {
			return err
		}
	}
	return errors.New("go mod tidy: the release's modules keep asking for a newer Go")
}

// copyFindings copies the client-go reproducers, each without its ours
// side (files built with the kverify_ours tag), into dir/findings.
func copyFindings(root, dir string) error {
	ids, err := filepath.Glob(filepath.Join(root, FindingsDir, "*", "main.go"))
	if err != nil {
		return err
	}
	for _, m := range ids {
		d := filepath.Dir(m)
		files, err := filepath.Glob(filepath.Join(d, "*.go"))
		if err != nil {
			return err
		}
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			if bytes.Contains(src, []byte("//go:build kverify_ours")) {
				continue
			}
			dst := filepath.Join(dir, "findings", filepath.Base(d), filepath.Base(f))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(dst, src, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// FindingsDir holds client-go's reproducers, one directory each, relative
// to the module root.
var FindingsDir = filepath.Join("traces", "findings", "client-go")
