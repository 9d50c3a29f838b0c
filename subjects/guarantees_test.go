package subjects_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	pbo "github.com/kverify/kverify/props/backoff"
	"github.com/kverify/kverify/props/checkkit"
	pfifo "github.com/kverify/kverify/props/fifo"
	pinf "github.com/kverify/kverify/props/informer"
	prl "github.com/kverify/kverify/props/ratelimit"
	prefl "github.com/kverify/kverify/props/reflector"
	pring "github.com/kverify/kverify/props/ring"
	pwq "github.com/kverify/kverify/props/workqueue"
	"github.com/kverify/kverify/subjects"
	"github.com/kverify/kverify/traces"
	"github.com/kverify/kverify/traces/vectors"
)

// guaranteePackages are the props packages that declare guarantees, by
// folder under props/, each with its Guarantees function. checkkit's are
// the toolkit's, shared by every component.
var guaranteePackages = []struct {
	dir        string
	guarantees func() []string
}{
	{"checkkit", checkkit.Guarantees},
	{"backoff", pbo.Guarantees},
	{"fifo", pfifo.Guarantees},
	{"informer", pinf.Guarantees},
	{"ratelimit", prl.Guarantees},
	{"reflector", prefl.Guarantees},
	{"ring", pring.Guarantees},
	{"workqueue", pwq.Guarantees},
}

// TestGuarantees holds every guarantee name to the declared ones: each
// props package declares its guarantees once, in guarantees.go, and
// lists them in its Guarantees function.
//
//   - literals: no check names a guarantee with a string literal (or a
//     concatenation): a call to Broke, Recorder.Fail, Worst or a helper
//     that hands its parameter on to them, a checkkit.Problem or
//     checkkit.Violation literal, or a local or result that ends up there.
//   - unbreakable: every declared guarantee is used by the package's code
//     outside guarantees.go (checkkit's: by checkkit or a component
//     package), else it is a guarantee that no check can break; and
//     Guarantees lists every constant of guarantees.go, once.
//   - divergences: every guarantee a registry row's divergence narrows
//     to is one of subjects.Guarantees(component).
//   - vectors: every guarantee a golden vector's header names, generated
//     or committed under traces/vectors/data, is one of its component's.
func TestGuarantees(t *testing.T) {
	pkgs := map[string]*srcPackage{}
	for _, gp := range guaranteePackages {
		pkgs[gp.dir] = parseProps(t, gp.dir)
	}
	t.Run("literals", func(t *testing.T) {
		for _, gp := range guaranteePackages {
			for _, s := range findGuaranteeLiterals(pkgs[gp.dir]) {
				file := gp.dir + "/" + filepath.Base(s.pos.Filename)
				what := fmt.Sprintf("the string literal %q", s.value)
				if s.concat {
					what = "built by concatenation (" + s.value + ")"
				}
				t.Errorf("props/%s:%d: a guarantee is %s, %s: use the constant declared in guarantees.go (declare it there if it is new)",
					file, s.pos.Line, what, s.how)
			}
		}
	})
	t.Run("unbreakable", func(t *testing.T) {
		decls := map[string]*declared{}
		for _, gp := range guaranteePackages {
			decls[gp.dir] = declaredGuarantees(t, pkgs[gp.dir], gp.guarantees())
		}
		// What each package's code outside guarantees.go uses, and the
		// checkkit constants it uses, also through an alias.
		kitUses := map[string]bool{}
		for n := range pkgs["checkkit"].uses() {
			kitUses[n] = true
		}
		for _, gp := range guaranteePackages {
			d := decls[gp.dir]
			if gp.dir == "checkkit" {
				continue
			}
			uses := pkgs[gp.dir].uses()
			for name := range uses {
				if k, ok := strings.CutPrefix(name, "checkkit."); ok {
					kitUses[k] = true
				}
			}
			for name, alias := range d.aliases {
				if uses[name] {
					kitUses[alias] = true
				}
			}
			for _, name := range d.listed {
				if _, isAlias := d.aliases[name]; !uses[name] && !isAlias {
					t.Errorf("props/%s: %s (%q) is used nowhere in the package outside guarantees.go: a guarantee that no check can break", gp.dir, name, d.values[name])
				} else if isAlias && !uses[name] {
					t.Errorf("props/%s: %s (checkkit.%s) is used nowhere in the package outside guarantees.go: drop it from Guarantees, or use it", gp.dir, name, d.aliases[name])
				}
			}
		}
		for _, name := range decls["checkkit"].listed {
			if !kitUses[name] {
				t.Errorf("props/checkkit: %s (%q) is used nowhere in checkkit or a component package outside guarantees.go: a guarantee that no check can break", name, decls["checkkit"].values[name])
			}
		}
		all := prefl.Guarantees()
		for _, g := range prefl.InformerGuarantees() {
			if !slices.Contains(all, g) {
				t.Errorf("props/reflector: InformerGuarantees has %q, which Guarantees lacks", g)
			}
		}
	})
	t.Run("divergences", func(t *testing.T) {
		for _, c := range subjects.Registry() {
			gs := subjects.Guarantees(c.Name)
			if len(gs) == len(checkkit.Guarantees()) {
				t.Errorf("subjects.Guarantees(%q) has only checkkit's: map the component to its props packages in subjects/guarantees.go", c.Name)
			}
			for _, b := range []struct {
				subject string
				ds      []checkkit.Divergence
			}{{subjects.Upstream, c.Upstream.Divergences}, {subjects.Ours, c.Ours.Divergences}} {
				for _, d := range b.ds {
					for _, g := range d.Guarantees {
						if !slices.Contains(gs, g) {
							t.Errorf("%s's divergence %s (component %s) names guarantee %q, which is not one of the component's (subjects.Guarantees)", b.subject, d.Check, c.Name, g)
						}
					}
				}
			}
		}
		if gs := subjects.Guarantees("no-such-component"); gs != nil {
			t.Errorf("subjects.Guarantees of an unknown component = %q, want nil", gs)
		}
	})
	t.Run("vectors", func(t *testing.T) {
		check := func(source, component string, vs []traces.Vector) {
			gs := subjects.Guarantees(component)
			bad := map[string][]uint64{}
			for _, v := range vs {
				for _, g := range v.Header.Guarantees {
					if !slices.Contains(gs, g) {
						bad[g] = append(bad[g], v.Header.Seed)
					}
				}
			}
			for g, seeds := range bad {
				t.Errorf("%s: %d %s vector(s) (seeds %v) name guarantee %q, which is not one of the component's (subjects.Guarantees)", source, len(seeds), component, seeds[:min(len(seeds), 5)], g)
			}
		}
		for _, c := range vectors.Components() {
			vs, err := vectors.Generate(c)
			if err != nil {
				t.Fatal(err)
			}
			check("vectors.Generate("+c+")", c, vs)
		}
		files, err := filepath.Glob(filepath.Join("..", "traces", "vectors", "data", "*.jsonl"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no committed vectors under traces/vectors/data (%v)", err)
		}
		for _, f := range files {
			r, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			vs, err := traces.DecodeVectors(r)
			r.Close()
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			check("traces/vectors/data/"+filepath.Base(f), strings.TrimSuffix(filepath.Base(f), ".jsonl"), vs)
		}
	})
}

// srcPackage is a props package's non-test Go files, parsed.
type srcPackage struct {
	dir   string
	fset  *token.FileSet
	files map[string]*ast.File // by base name
}

func parseProps(t *testing.T, dir string) *srcPackage {
	t.Helper()
	p := &srcPackage{dir: dir, fset: token.NewFileSet(), files: map[string]*ast.File{}}
	path := filepath.Join("..", "props", dir)
	ents, err := os.ReadDir(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(p.fset, filepath.Join(path, n), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		p.files[n] = f
	}
	return p
}

// sortedFiles returns the package's file names in order, for stable
// reports.
func (p *srcPackage) sortedFiles() []string {
	var ns []string
	for n := range p.files {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns
}

// uses returns the identifiers the package's code outside guarantees.go
// (and deprecated.go, whose old names stand for the constants) refers
// to: a name of the package, or "pkg.Name" for an imported one.
func (p *srcPackage) uses() map[string]bool {
	out := map[string]bool{}
	for n, f := range p.files {
		if n == "guarantees.go" || n == "deprecated.go" {
			continue
		}
		imports := importNames(f)
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && imports[x.Name] {
					out[x.Name+"."+n.Sel.Name] = true
					return false
				}
				ast.Inspect(n.X, func(m ast.Node) bool {
					if id, ok := m.(*ast.Ident); ok {
						out[id.Name] = true
					}
					return true
				})
				return false
			case *ast.Ident:
				out[n.Name] = true
			}
			return true
		})
	}
	return out
}

// importNames returns the names a file's imports are known by.
func importNames(f *ast.File) map[string]bool {
	out := map[string]bool{}
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		out[name] = true
	}
	return out
}

// declared is what a package's guarantees.go declares.
type declared struct {
	listed  []string          // the constants Guarantees returns, in order
	values  map[string]string // constant -> its value (from Guarantees)
	aliases map[string]string // constant -> the checkkit constant it stands for
}

// declaredGuarantees reads guarantees.go: its constants and the ones its
// Guarantees function lists, and holds them to what Guarantees returns.
func declaredGuarantees(t *testing.T, p *srcPackage, runtime []string) *declared {
	t.Helper()
	d := &declared{values: map[string]string{}, aliases: map[string]string{}}
	f := p.files["guarantees.go"]
	if f == nil {
		t.Errorf("props/%s has no guarantees.go", p.dir)
		return d
	}
	var consts []string
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.GenDecl:
			if decl.Tok != token.CONST {
				continue
			}
			for _, spec := range decl.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					consts = append(consts, n.Name)
					if i < len(vs.Values) {
						if se, ok := vs.Values[i].(*ast.SelectorExpr); ok {
							if x, ok := se.X.(*ast.Ident); ok && x.Name == "checkkit" {
								d.aliases[n.Name] = se.Sel.Name
							}
						}
					}
				}
			}
		case *ast.FuncDecl:
			if decl.Name.Name != "Guarantees" || decl.Recv != nil || decl.Body == nil {
				continue
			}
			ast.Inspect(decl.Body, func(n ast.Node) bool {
				if r, ok := n.(*ast.ReturnStmt); ok && len(r.Results) == 1 {
					if cl, ok := r.Results[0].(*ast.CompositeLit); ok {
						for _, el := range cl.Elts {
							if id, ok := el.(*ast.Ident); ok {
								d.listed = append(d.listed, id.Name)
							} else {
								t.Errorf("props/%s/guarantees.go: Guarantees lists %s: list the package's constants by name", p.dir, p.fset.Position(el.Pos()))
							}
						}
					}
				}
				return true
			})
		}
	}
	if len(d.listed) != len(runtime) {
		t.Errorf("props/%s/guarantees.go: Guarantees lists %d constants in one return statement, returns %d: return one literal list of the constants", p.dir, len(d.listed), len(runtime))
		return d
	}
	for i, name := range d.listed {
		d.values[name] = runtime[i]
		if runtime[i] == "" {
			t.Errorf("props/%s: %s is empty", p.dir, name)
		}
		if j := slices.Index(runtime, runtime[i]); j < i {
			t.Errorf("props/%s: %s and %s are both %q: declare a guarantee once", p.dir, d.listed[j], name, runtime[i])
		}
	}
	for _, c := range consts {
		if !slices.Contains(d.listed, c) {
			t.Errorf("props/%s/guarantees.go declares %s, which Guarantees does not list", p.dir, c)
		}
	}
	return d
}

// A literalSite is a string literal, or a concatenation, that becomes a
// violation's guarantee.
type literalSite struct {
	pos    token.Position
	value  string // the literal's value, or the expression
	concat bool
	how    string // the way it reaches the violation
}

// findGuaranteeLiterals follows guarantees through one package, by
// syntax alone: from the positions that name a violation's guarantee
// (Broke's first argument, Recorder.Fail's second, Worst's order, the
// Guarantee of a checkkit.Problem or checkkit.Violation literal) back to
// the parameters of the package's functions, methods and named closures
// that reach them, the locals assigned to them and the functions whose
// results they are, until nothing new is found; then reports every
// string literal, or concatenation, in those positions.
func findGuaranteeLiterals(p *srcPackage) []literalSite {
	g := &guaranteeFlow{
		p: p,
		sinks: map[string]map[int]bool{
			"Broke": {0: true}, "Fail": {1: true}, "Recorder.Fail": {1: true},
		},
		results: map[string]bool{},
		locals:  map[*ast.FuncDecl]map[string]bool{},
		methods: map[string]map[string]bool{},
		funcs:   map[string]bool{},
	}
	for _, f := range p.files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				if fd.Recv == nil {
					g.funcs[fd.Name.Name] = true
				} else {
					r := typeName(fd.Recv.List[0].Type)
					if g.methods[fd.Name.Name] == nil {
						g.methods[fd.Name.Name] = map[string]bool{}
					}
					g.methods[fd.Name.Name][r] = true
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			for _, name := range funcLitNames(n) {
				g.funcs[name] = true
			}
			return true
		})
	}
	for {
		g.changed, g.found = false, nil
		for _, n := range p.sortedFiles() {
			f := p.files[n]
			imports := importNames(f)
			for _, d := range f.Decls {
				w := &walker{g: g, imports: imports, litNames: map[*ast.FuncLit]string{}, elided: map[*ast.CompositeLit]string{}, types: map[string]string{}}
				if fd, ok := d.(*ast.FuncDecl); ok {
					if fd.Body == nil {
						continue
					}
					if g.locals[fd] == nil {
						g.locals[fd] = map[string]bool{}
					}
					w.locals, w.key = g.locals[fd], funcKey(fd)
					w.prepare(fd)
					w.stack = []frame{{w.key, paramIndexes(fd.Type)}}
					w.walk(fd.Body)
				} else {
					w.locals = map[string]bool{}
					w.prepare(d)
					w.walk(d)
				}
			}
		}
		if !g.changed {
			return g.found
		}
	}
}

type guaranteeFlow struct {
	p       *srcPackage
	sinks   map[string]map[int]bool // callee -> arguments that become a guarantee
	results map[string]bool         // callees whose result becomes a guarantee
	locals  map[*ast.FuncDecl]map[string]bool
	methods map[string]map[string]bool // method name -> receiver types
	funcs   map[string]bool            // functions and named closures
	changed bool
	found   []literalSite
}

// frame is a function being walked: its key ("" for an unnamed closure)
// and its parameters' indexes.
type frame struct {
	key    string
	params map[string]int
}

type walker struct {
	g        *guaranteeFlow
	imports  map[string]bool
	key      string
	stack    []frame
	locals   map[string]bool
	litNames map[*ast.FuncLit]string
	elided   map[*ast.CompositeLit]string // an element literal -> its elided type
	types    map[string]string            // variable -> its type's name, "" when ambiguous
}

func funcKey(fd *ast.FuncDecl) string {
	if fd.Recv == nil {
		return fd.Name.Name
	}
	return typeName(fd.Recv.List[0].Type) + "." + fd.Name.Name
}

func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return typeName(e.X)
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.IndexExpr:
		return typeName(e.X)
	case *ast.IndexListExpr:
		return typeName(e.X)
	case *ast.UnaryExpr:
		return typeName(e.X)
	case *ast.CompositeLit:
		return typeName(e.Type)
	}
	return ""
}

func paramIndexes(ft *ast.FuncType) map[string]int {
	ps := map[string]int{}
	i := 0
	for _, f := range ft.Params.List {
		if len(f.Names) == 0 {
			i++
		}
		for _, n := range f.Names {
			ps[n.Name] = i
			i++
		}
	}
	return ps
}

// funcLitNames returns the names n gives closures: name := func...,
// var name = func....
func funcLitNames(n ast.Node) []string {
	var out []string
	switch n := n.(type) {
	case *ast.AssignStmt:
		for i, r := range n.Rhs {
			if _, ok := r.(*ast.FuncLit); ok && i < len(n.Lhs) {
				if id, ok := n.Lhs[i].(*ast.Ident); ok {
					out = append(out, id.Name)
				}
			}
		}
	case *ast.ValueSpec:
		for i, r := range n.Values {
			if _, ok := r.(*ast.FuncLit); ok && i < len(n.Names) {
				out = append(out, n.Names[i].Name)
			}
		}
	}
	return out
}

// prepare notes, in a declaration, the closures' names and the variables'
// types, as far as the syntax tells them.
func (w *walker) prepare(d ast.Node) {
	setType := func(name, typ string) {
		if old, ok := w.types[name]; ok && old != typ {
			typ = ""
		}
		w.types[name] = typ
	}
	fields := func(fl *ast.FieldList) {
		if fl == nil {
			return
		}
		for _, f := range fl.List {
			for _, n := range f.Names {
				setType(n.Name, typeName(f.Type))
			}
		}
	}
	ast.Inspect(d, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			fields(n.Recv)
			fields(n.Type.Params)
		case *ast.FuncLit:
			fields(n.Type.Params)
		case *ast.AssignStmt:
			for i, r := range n.Rhs {
				if i >= len(n.Lhs) || len(n.Lhs) != len(n.Rhs) {
					break
				}
				id, ok := n.Lhs[i].(*ast.Ident)
				if !ok {
					continue
				}
				if fl, ok := r.(*ast.FuncLit); ok {
					w.litNames[fl] = id.Name
				} else if n.Tok == token.DEFINE {
					setType(id.Name, typeName(r))
				}
			}
		case *ast.ValueSpec:
			for i, nm := range n.Names {
				switch {
				case i < len(n.Values):
					if fl, ok := n.Values[i].(*ast.FuncLit); ok {
						w.litNames[fl] = nm.Name
					} else {
						setType(nm.Name, typeName(n.Values[i]))
					}
				case n.Type != nil:
					setType(nm.Name, typeName(n.Type))
				}
			}
		}
		return true
	})
}

func (w *walker) walk(n ast.Node) {
	ast.Inspect(n, func(m ast.Node) bool {
		switch m := m.(type) {
		case *ast.FuncLit:
			w.stack = append(w.stack, frame{w.litNames[m], paramIndexes(m.Type)})
			w.walk(m.Body)
			w.stack = w.stack[:len(w.stack)-1]
			return false
		case *ast.CallExpr:
			w.call(m)
		case *ast.CompositeLit:
			w.composite(m)
		case *ast.AssignStmt:
			if len(m.Lhs) == len(m.Rhs) {
				for i, l := range m.Lhs {
					if id, ok := l.(*ast.Ident); ok && w.locals[id.Name] {
						w.sink(m.Rhs[i], "assigned to "+id.Name)
					}
				}
			}
		case *ast.ValueSpec:
			for i, nm := range m.Names {
				if i < len(m.Values) && w.locals[nm.Name] {
					w.sink(m.Values[i], "assigned to "+nm.Name)
				}
			}
		case *ast.ReturnStmt:
			if len(w.stack) == 1 && w.g.results[w.key] && len(m.Results) == 1 {
				w.sink(m.Results[0], "returned by "+w.key)
			}
		}
		return true
	})
}

// callees returns the keys a call may reach: a function or named closure
// by its name, a method by receiver type and name when the receiver's type
// is known, else every method of that name.
func (w *walker) callees(c *ast.CallExpr) []string {
	switch f := c.Fun.(type) {
	case *ast.Ident:
		return []string{f.Name}
	case *ast.SelectorExpr:
		name := f.Sel.Name
		x, _ := f.X.(*ast.Ident)
		if x != nil && w.imports[x.Name] {
			return []string{name}
		}
		if x != nil {
			if typ := w.types[x.Name]; typ != "" {
				if w.g.methods[name][typ] {
					return []string{typ + "." + name}
				}
				return []string{name} // a func-typed field, or another package's method
			}
		}
		if w.g.funcs[name] || len(w.g.methods[name]) == 0 {
			return []string{name}
		}
		var out []string
		for r := range w.g.methods[name] {
			out = append(out, r+"."+name)
		}
		slices.Sort(out)
		return out
	}
	return nil
}

func (w *walker) call(c *ast.CallExpr) {
	keys := w.callees(c)
	if len(keys) == 0 {
		return
	}
	if keys[0] == "Worst" && len(c.Args) > 1 {
		for _, a := range c.Args[1:] {
			w.sink(a, "an order of Worst")
		}
	}
	// An argument carries a guarantee when every callee it may reach
	// hands that parameter on.
	for i, a := range c.Args {
		all := true
		for _, k := range keys {
			all = all && w.g.sinks[k][i]
		}
		if all {
			w.sink(a, fmt.Sprintf("argument %d of %s", i+1, strings.Join(keys, " or ")))
		}
	}
}

func (w *walker) composite(cl *ast.CompositeLit) {
	typ := typeName(cl.Type)
	if cl.Type == nil {
		typ = w.elided[cl]
	}
	var elem ast.Expr
	switch t := cl.Type.(type) {
	case *ast.ArrayType:
		elem = t.Elt
	case *ast.MapType:
		elem = t.Value
	}
	if elem != nil {
		for _, el := range cl.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				el = kv.Value
			}
			if ue, ok := el.(*ast.UnaryExpr); ok {
				el = ue.X
			}
			if c, ok := el.(*ast.CompositeLit); ok && c.Type == nil {
				w.elided[c] = typeName(elem)
			}
		}
	}
	if typ != "Problem" && typ != "Violation" {
		return
	}
	for i, el := range cl.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Guarantee" {
				w.sink(kv.Value, "the Guarantee of a "+typ)
			}
		} else if i == 0 {
			w.sink(el, "the Guarantee of a "+typ)
		}
	}
}

// sink handles e, an expression that becomes a violation's guarantee.
func (w *walker) sink(e ast.Expr, how string) {
	g := w.g
	switch e := e.(type) {
	case *ast.ParenExpr:
		w.sink(e.X, how)
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			v, _ := strconv.Unquote(e.Value)
			g.found = append(g.found, literalSite{pos: g.p.fset.Position(e.Pos()), value: v, how: how})
		}
	case *ast.BinaryExpr:
		g.found = append(g.found, literalSite{pos: g.p.fset.Position(e.Pos()), value: types.ExprString(e), concat: true, how: how})
	case *ast.Ident:
		for i := len(w.stack) - 1; i >= 0; i-- {
			if idx, ok := w.stack[i].params[e.Name]; ok {
				if k := w.stack[i].key; k != "" && !g.sinks[k][idx] {
					if g.sinks[k] == nil {
						g.sinks[k] = map[int]bool{}
					}
					g.sinks[k][idx], g.changed = true, true
				}
				return
			}
		}
		if !w.locals[e.Name] {
			w.locals[e.Name], g.changed = true, true
		}
	case *ast.CallExpr:
		for _, k := range w.callees(e) {
			if !g.results[k] {
				g.results[k], g.changed = true, true
			}
		}
	}
}
