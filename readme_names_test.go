package ratekeeper_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmePackages are ratekeeper's packages by the name the README writes
// before a dot (middleware.WithBreaker), with their directories.
var readmePackages = map[string]string{
	"algorithms":  "algorithms",
	"algotest":    "algorithms/algotest",
	"redisstore":  "algorithms/redisstore",
	"keyfunc":     "keyfunc",
	"policy":      "policy",
	"reload":      "policy/reload",
	"middleware":  "middleware",
	"adaptive":    "middleware/adaptive",
	"prommetrics": "middleware/prommetrics",
	"otelmetrics": "middleware/otelmetrics",
	"client":      "client",
}

// exportedAPI returns the exported package-level names of the package in
// dir, and for each exported type the names of its exported methods and
// fields.
func exportedAPI(t *testing.T, dir string) (names map[string]bool, members map[string]map[string]bool) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	names, members = map[string]bool{}, map[string]map[string]bool{}
	member := func(typ, name string) {
		if members[typ] == nil {
			members[typ] = map[string]bool{}
		}
		members[typ][name] = true
	}
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					names[d.Name.Name] = true
					continue
				}
				typ := d.Recv.List[0].Type
				if s, ok := typ.(*ast.StarExpr); ok {
					typ = s.X
				}
				if g, ok := typ.(*ast.IndexExpr); ok {
					typ = g.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					member(id.Name, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = true
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, fld := range st.Fields.List {
								for _, n := range fld.Names {
									member(s.Name.Name, n.Name)
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
						}
					}
				}
			}
		}
	}
	return names, members
}

// TestReadmeNamesExist: every exported name of ratekeeper that the README,
// a package overview (doc.go), an example's or the command's documentation
// writes as pkg.Name, or pkg.Type.Member, is declared in that package, so
// that a new user looking one up (go doc, pkg.go.dev) finds it: a renamed
// or removed option must take its mentions with it.
func TestReadmeNamesExist(t *testing.T) {
	files := []string{"README.md", "cmd/ratekeeper/main.go"}
	for _, pattern := range []string{"doc.go", "*/doc.go", "*/*/doc.go", "examples/*/main.go", "examples/*/*/*.go"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	ref := regexp.MustCompile(`\b([a-z]+)\.([A-Z][A-Za-z0-9_]*)(?:\.([A-Z][A-Za-z0-9_]*))?`)
	type api struct {
		names   map[string]bool
		members map[string]map[string]bool
	}
	apis := map[string]api{}
	checked := 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if file != "README.md" {
				// Documentation only: the comments, not the code.
				_, c, ok := strings.Cut(line, "//")
				if !ok {
					continue
				}
				line = c
			}
			for _, m := range ref.FindAllStringSubmatch(line, -1) {
				dir, ok := readmePackages[m[1]]
				if !ok {
					continue
				}
				a, ok := apis[dir]
				if !ok {
					a.names, a.members = exportedAPI(t, dir)
					apis[dir] = a
				}
				checked++
				if !a.names[m[2]] {
					t.Errorf("%s:%d: %s.%s: package %s declares no %s", file, i+1, m[1], m[2], dir, m[2])
					continue
				}
				if m[3] != "" && a.members[m[2]] != nil && !a.members[m[2]][m[3]] {
					t.Errorf("%s:%d: %s.%s.%s: type %s of package %s has no method or field %s", file, i+1, m[1], m[2], m[3], m[2], dir, m[3])
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked %d names; want the many the README and the docs give (middleware.WithDenyHandler, ...)", checked)
	}
}
