package app_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const appPath = "github.com/ratekeeper/ratekeeper/examples/internal/app"

// TestImportersSayCopyApp: a user who copies an example command into a
// module of their own gets "use of internal package ... not allowed" for
// every helper of this package it uses, directly or through a package
// beside it (examples/chi's chiapp). examples/config said nothing of it,
// nor did examples/chi and examples/stdlib (only the README did), and this
// package's documentation named the examples using it but config. Each
// example command's documentation now says so, and this package's names
// each of them.
func TestImportersSayCopyApp(t *testing.T) {
	examples := filepath.Join("..", "..")
	dirs, err := os.ReadDir(examples)
	if err != nil {
		t.Fatal(err)
	}
	appDoc := packageDoc(t, ".")
	found := 0
	for _, d := range dirs {
		if !d.IsDir() || d.Name() == "internal" {
			continue
		}
		dir := filepath.Join(examples, d.Name())
		if !importsApp(t, dir) {
			continue
		}
		found++
		if doc := packageDoc(t, dir); !strings.Contains(doc, "examples/internal/app") || !strings.Contains(doc, "cannot import") {
			t.Errorf("examples/%s uses package app, and its documentation does not say that another module cannot import examples/internal/app:\n%s", d.Name(), doc)
		}
		if !strings.Contains(appDoc, "examples/"+d.Name()) {
			t.Errorf("package app's documentation does not name examples/%s, which uses it:\n%s", d.Name(), appDoc)
		}
	}
	if found < 4 {
		t.Fatalf("found %d examples using package app, want at least 4 (chi, config, redis, stdlib)", found)
	}
}

// importsApp reports whether a non-test Go file in dir or below imports
// package app.
func importsApp(t *testing.T, dir string) bool {
	t.Helper()
	uses := false
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == appPath {
				uses = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return uses
}

// packageDoc returns the package documentation of the non-test Go files
// directly in dir.
func packageDoc(t *testing.T, dir string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var doc strings.Builder
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil {
			doc.WriteString(f.Doc.Text())
		}
	}
	return doc.String()
}

// TestImportersNameHelpers: each example command's documentation tells a
// user who copies it out to copy the helpers of this package it uses; it
// names each of them (app.Name), those of a package beside it (chiapp)
// included. The lists were in words and short: examples/stdlib and
// examples/chi left out the error hook (LogError) and the argument check
// (NoArgs), examples/config NoArgs, examples/redis NoArgs and CheckAddr,
// so that the copy did not build until they were found.
func TestImportersNameHelpers(t *testing.T) {
	examples := filepath.Join("..", "..")
	dirs, err := os.ReadDir(examples)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() || d.Name() == "internal" {
			continue
		}
		dir := filepath.Join(examples, d.Name())
		doc := packageDoc(t, dir)
		for _, name := range helpersUsed(t, dir) {
			if !strings.Contains(doc, "app."+name) {
				t.Errorf("examples/%s uses app.%s, which its documentation does not name among the helpers to copy:\n%s", d.Name(), name, doc)
			}
		}
	}
}

// helpersUsed returns the names of package app's identifiers that the
// non-test Go files in dir or below use, sorted.
func helpersUsed(t *testing.T, dir string) []string {
	t.Helper()
	used := map[string]bool{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		local := ""
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == appPath {
				local = "app"
				if imp.Name != nil {
					local = imp.Name.Name
				}
			}
		}
		if local == "" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == local {
					used[sel.Sel.Name] = true
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return slices.Sorted(maps.Keys(used))
}
