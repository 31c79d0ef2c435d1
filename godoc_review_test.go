package ratekeeper_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"unicode"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestGodocNamesNoUnexported reads the documentation of every library
// package as go doc shows it to a user (the package comment and the
// comments of exported declarations, their exported fields and methods)
// and fails where it sends the reader to an unexported function, method,
// type, variable or constant of the package ("see judgeOuter"): a name
// that go doc does not show and pkg.go.dev does not link, which a user
// cannot look up. Only camelCase names are checked (judgeOuter, not
// limit), so that an English word is never taken for an identifier.
func TestGodocNamesNoUnexported(t *testing.T) {
	dirs := map[string][]*ast.File{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch name := d.Name(); {
			case path == ".":
			case strings.HasPrefix(name, "."), name == "testdata", name == "examples",
				name == "cmd", name == "internal", name == "benchmarks":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		dirs[dir] = append(dirs[dir], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 10 {
		t.Fatalf("found the sources of %d packages; want the library's (algorithms, middleware, policy, ...)", len(dirs))
	}
	var names []string
	for dir := range dirs {
		names = append(names, dir)
	}
	sort.Strings(names)
	checked := 0
	for _, dir := range names {
		files := dirs[dir]
		unexported := unexportedCamel(files)
		if len(unexported) == 0 {
			continue
		}
		for _, c := range exportedDocs(files) {
			checked++
			for _, m := range identWord.FindAllString(c.text, -1) {
				if unexported[m] {
					t.Errorf("%s: the doc of %s names %s, unexported in package %s: go doc does not show it",
						fset.Position(c.pos), c.of, m, dir)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("checked no doc comment")
	}
}

var identWord = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// unexportedCamel returns the package-level unexported names of files
// (functions, methods, types, variables, constants) that hold an upper-case
// letter, as judgeOuter does and no English word.
func unexportedCamel(files []*ast.File) map[string]bool {
	out := map[string]bool{}
	add := func(id *ast.Ident) {
		if id == nil || id.IsExported() || id.Name == "_" {
			return
		}
		if strings.IndexFunc(id.Name, unicode.IsUpper) > 0 {
			out[id.Name] = true
		}
	}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				add(d.Name)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						add(s.Name)
					case *ast.ValueSpec:
						for _, n := range s.Names {
							add(n)
						}
					}
				}
			}
		}
	}
	return out
}

type docComment struct {
	of   string
	pos  token.Pos
	text string
}

// exportedDocs returns the comments go doc shows: the package comment and
// those of exported declarations, of their exported fields and interface
// methods, and of exported methods of exported types.
func exportedDocs(files []*ast.File) []docComment {
	var out []docComment
	add := func(of string, cgs ...*ast.CommentGroup) {
		for _, cg := range cgs {
			if cg != nil {
				out = append(out, docComment{of, cg.Pos(), cg.Text()})
			}
		}
	}
	for _, f := range files {
		add("the package", f.Doc)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv != nil && !exportedRecv(d.Recv) {
					continue
				}
				add(d.Name.Name, d.Doc)
			case *ast.GenDecl:
				shown := "" // the first exported name the group declares
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						if shown == "" {
							shown = s.Name.Name
						}
						add(s.Name.Name, s.Doc, s.Comment)
						var fields *ast.FieldList
						switch tt := s.Type.(type) {
						case *ast.StructType:
							fields = tt.Fields
						case *ast.InterfaceType:
							fields = tt.Methods
						}
						if fields == nil {
							continue
						}
						for _, fd := range fields.List {
							exported := len(fd.Names) == 0 // embedded
							for _, n := range fd.Names {
								exported = exported || n.IsExported()
							}
							if exported {
								add(s.Name.Name, fd.Doc, fd.Comment)
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								if shown == "" {
									shown = n.Name
								}
								add(n.Name, s.Doc, s.Comment)
								break
							}
						}
					}
				}
				if shown != "" {
					add(shown, d.Doc)
				}
			}
		}
	}
	return out
}

func exportedRecv(recv *ast.FieldList) bool {
	if len(recv.List) == 0 {
		return false
	}
	t := recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}

// TestGodocNestedPoliciesOfOneName holds package middleware's doc to what
// nested middlewares do with two policies of one name and Spec (distinct
// *policy.Policy values, on one store, under one key): the request counts
// once, decided further out, and the one further in tells ErrCountedTwice.
// The package doc said they "count every request twice in one state", and
// ErrCountedTwice's doc named a single *policy.Policy only.
func TestGodocNestedPoliciesOfOneName(t *testing.T) {
	store, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ip := keyfunc.Must(keyfunc.IP())
	var told atomic.Int64
	outer := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.PerMinute("api", 10, ip))})
	inner := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.PerMinute("api", 10, ip))},
		middleware.WithErrorHandler(func(_ *http.Request, err error) {
			if errors.Is(err, middleware.ErrCountedTwice) {
				told.Add(1)
			}
		}))
	mux := http.NewServeMux()
	mux.Handle("GET /", outer.Handler(inner.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))))
	for i := range 3 {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		got := w.Header().Values("RateLimit")
		if want := fmt.Sprintf(`"api";r=%d;`, 9-i); w.Code != http.StatusOK || len(got) != 1 || !strings.HasPrefix(got[0], want) {
			t.Fatalf("request %d: %d %q; want 200 and one member %s... (counted once)", i+1, w.Code, got, want)
		}
	}
	if told.Load() != 1 {
		t.Errorf("ErrCountedTwice told %d times; want once", told.Load())
	}

	fset := token.NewFileSet()
	pkgDoc, errDoc := "", ""
	for _, name := range []string{"middleware/doc.go", "middleware/twice.go"} {
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil {
			pkgDoc += f.Doc.Text()
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR && g.Doc != nil && strings.Contains(g.Doc.Text(), "ErrCountedTwice is") {
				errDoc = g.Doc.Text()
			}
		}
	}
	flat := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	if strings.Contains(flat(pkgDoc), "count every request twice") {
		t.Errorf("package middleware's doc says that two policies of one name and spec count every request twice; they count it once (ErrCountedTwice)")
	}
	if !strings.Contains(flat(errDoc), "of one name and Spec") {
		t.Errorf("ErrCountedTwice's doc does not name two policies of one name and Spec, which it is told of:\n%s", errDoc)
	}
}

// TestGodocChiRoutesBeforeRouting holds package middleware's doc on chi
// to what a user gets: a rule-table middleware in the r.Use of a sub-router
// (r.Route) applies its route-restricted policies when given
// WithPatternFunc(policy.ChiPattern(sub)), as the README and policy's
// ChiPattern say. The package doc said that there "they never apply", and
// named "chi's Find" rather than policy.ChiPattern for the top-level
// router.
func TestGodocChiRoutesBeforeRouting(t *testing.T) {
	store, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ip := keyfunc.Must(keyfunc.IP())
	r := chi.NewRouter()
	r.Route("/api", func(sub chi.Router) {
		sub.Use(middleware.MustNew(store, []*policy.Policy{policy.Must(policy.Login(ip, policy.WithRoutes("POST /api/login")))},
			middleware.WithPatternFunc(policy.ChiPattern(sub))).Handler)
		sub.Post("/login", func(http.ResponseWriter, *http.Request) {})
	})
	var codes []int
	for range policy.LoginLimit + 1 {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/api/login", nil))
		codes = append(codes, w.Code)
	}
	if codes[policy.LoginLimit-1] != http.StatusOK || codes[policy.LoginLimit] != http.StatusTooManyRequests {
		t.Fatalf("POST /api/login under a sub-router's r.Use with policy.ChiPattern(sub): %v; want the login policy to apply (%d allowed, then 429)", codes, policy.LoginLimit)
	}

	f, err := parser.ParseFile(token.NewFileSet(), "middleware/doc.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(f.Doc.Text()), " ")
	if strings.Contains(doc, "they never apply, so put") {
		t.Errorf("package middleware's doc says a sub-router's route-restricted policies never apply; with policy.ChiPattern(sub) they do")
	}
	if !strings.Contains(doc, "policy.ChiPattern(sub)") || !strings.Contains(doc, "policy.ChiPattern(r)") {
		t.Errorf("package middleware's doc on chi's r.Use does not name policy.ChiPattern(r) and policy.ChiPattern(sub), the pattern functions that make route policies apply there")
	}
}
