package ratekeeper_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// These tests hold DESIGN.md's "Layout and who may import whom": imports
// point down the list keyfunc, algorithms < policy < middleware < examples
// and cmd, and each third-party dependency stays in the packages named for
// it. They read the import lines of every .go file of the module (the
// nested benchmarks module, which holds the peer comparisons, is its own).

const module = "github.com/ratekeeper/ratekeeper"

// goFile is one .go file of the module: its package directory (slash
// separated, "." for the root), whether it is a test file, and its imports.
type goFile struct {
	path    string
	dir     string
	test    bool
	imports []string
}

// moduleFiles parses the imports of every .go file under the module root,
// outside the benchmarks module and testdata directories.
func moduleFiles(t *testing.T) []goFile {
	t.Helper()
	var files []goFile
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != "." && (name == "benchmarks" && filepath.Dir(p) == "." || name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		gf := goFile{path: filepath.ToSlash(p), dir: filepath.ToSlash(filepath.Dir(p)), test: strings.HasSuffix(p, "_test.go")}
		for _, is := range f.Imports {
			ip, err := strconv.Unquote(is.Path.Value)
			if err != nil {
				return err
			}
			gf.imports = append(gf.imports, ip)
		}
		files = append(files, gf)
		return nil
	})
	if err != nil {
		t.Fatalf("reading the module's files: %v", err)
	}
	markTestSupport(files)
	// A walk that found too little would pass everything below.
	for _, want := range []string{"keyfunc", "algorithms", "algorithms/redisstore", "policy", "middleware", "middleware/prommetrics", "examples/redis", "cmd/ratekeeper"} {
		if !slices.ContainsFunc(files, func(f goFile) bool { return f.dir == want && !f.test }) {
			t.Fatalf("no non-test .go file found in %s: the walk is broken", want)
		}
	}
	return files
}

// markTestSupport marks as test files those of the test-support packages:
// an internal/ package that only test files import (such as
// middleware/internal/metrictest, the scenarios both metrics adapters'
// tests run) is test code, free to import what tests may.
func markTestSupport(files []goFile) {
	importers := map[string][]bool{} // package dir -> whether each importer is a test file
	for _, f := range files {
		for _, ip := range f.imports {
			if rel, ok := strings.CutPrefix(ip, module+"/"); ok {
				importers[rel] = append(importers[rel], f.test)
			}
		}
	}
	for i, f := range files {
		by := importers[f.dir]
		if !f.test && strings.Contains("/"+f.dir+"/", "/internal/") && len(by) > 0 && !slices.Contains(by, false) {
			files[i].test = true
		}
	}
}

// under reports whether dir is pkg or inside it.
func under(dir, pkg string) bool {
	return dir == pkg || strings.HasPrefix(dir, pkg+"/")
}

// underAny reports whether dir is under one of pkgs.
func underAny(dir string, pkgs ...string) bool {
	return slices.ContainsFunc(pkgs, func(p string) bool { return under(dir, p) })
}

// TestDesignImportGraph: keyfunc and algorithms import nothing of ours but
// the internal helpers; policy imports those two; middleware imports
// policy (and through it, or directly, the others); redisstore imports
// algorithms. No package imports middleware or redisstore but examples,
// cmd and tests (middleware's own adapter packages, which plug into it,
// excepted), and nothing imports upwards.
func TestDesignImportGraph(t *testing.T) {
	// The packages of ours each layer may import, besides those of
	// internal/ (the module's private helpers) whose own imports it may.
	type layer struct {
		pkg     string   // the layer's package, with its sub-packages
		imports []string // the packages of ours below it that it may import
	}
	allowed := []layer{
		{"keyfunc", nil},
		{"internal", []string{"algorithms"}},
		{"algorithms/algotest", []string{"algorithms"}},
		{"algorithms/redisstore", []string{"algorithms"}},
		{"algorithms", nil}, // after its sub-packages: the first match decides
		{"policy", []string{"algorithms", "keyfunc"}},
		{"middleware", []string{"algorithms", "keyfunc", "policy"}},
		// Not in DESIGN's list, beside it: an outbound client reading
		// the headers middleware writes. It imports nothing above
		// algorithms.
		{"client", []string{"algorithms"}},
	}
	files := moduleFiles(t)
	// What each private helper imports of ours outside internal/: a layer
	// may import a helper only if it may import those too (keyfunc must not
	// reach algorithms through internal/lowest).
	helperDeps := map[string][]string{}
	for _, f := range files {
		if f.test || !under(f.dir, "internal") {
			continue
		}
		for _, ip := range f.imports {
			if rel, ok := strings.CutPrefix(ip, module+"/"); ok && !under(rel, "internal") {
				helperDeps[f.dir] = append(helperDeps[f.dir], rel)
			}
		}
	}
	for _, f := range files {
		if f.test || f.dir == "." || underAny(f.dir, "examples", "cmd") {
			continue // tests, examples and cmd may import any public package
		}
		i := slices.IndexFunc(allowed, func(a layer) bool { return under(f.dir, a.pkg) })
		if i < 0 {
			t.Errorf("%s: package %s is in no layer of DESIGN.md's layout", f.path, f.dir)
			continue
		}
		for _, ip := range f.imports {
			rel, ok := strings.CutPrefix(ip, module+"/")
			if !ok {
				if ip == module {
					t.Errorf("%s imports the root package, which holds documentation only", f.path)
				}
				continue
			}
			// Its own layer's packages (the middleware adapters import
			// middleware, policy/reload imports policy), or a layer below.
			may := func(rel string) bool {
				return under(rel, allowed[i].pkg) || slices.Contains(allowed[i].imports, rel)
			}
			if under(rel, "internal") && !under(f.dir, "internal") {
				// A private helper (an internal/ package: test helpers
				// and small shared pieces), allowed when what it imports
				// of ours is.
				for _, dep := range helperDeps[rel] {
					if !may(dep) {
						t.Errorf("%s (layer %s) imports %s, which imports %s: DESIGN.md's layout does not let it import that", f.path, allowed[i].pkg, rel, dep)
					}
				}
				continue
			}
			if !may(rel) {
				t.Errorf("%s (layer %s) imports %s, which DESIGN.md's layout does not let it import", f.path, allowed[i].pkg, rel)
			}
		}
	}
}

// TestDesignDependencies: each third-party dependency stays where DESIGN.md
// puts it: go-redis in redisstore, chi where route patterns are read, the
// Prometheus client in its adapter, the YAML parser in config loading;
// httprate and x/time only in the benchmarks module. The dependencies
// DESIGN.md does not name, each confined to the package that needs it, are
// listed with the reason.
func TestDesignDependencies(t *testing.T) {
	// Where each dependency may be imported by non-test files, besides
	// examples/ (which may use any).
	where := map[string][]string{
		"github.com/redis/go-redis/v9": {"algorithms/redisstore"},
		// keyfunc reads chi's route pattern (DESIGN.md); policy asks chi's
		// router which route a request takes (ChiPattern, route rules
		// written as registered with chi); cmd/ratekeeper's replay routes
		// logged paths through chi as the server would.
		"github.com/go-chi/chi/v5":       {"keyfunc", "policy", "cmd/ratekeeper"},
		"github.com/prometheus/":         {"middleware/prommetrics"},
		"github.com/goccy/go-yaml":       {"policy/config_"}, // a file prefix: config loading only
		"go.opentelemetry.io/otel":       {"middleware/otelmetrics"},
		"github.com/fsnotify/fsnotify":   {"policy/reload"},
		"golang.org/x/net/idna":          {"client"},
		"golang.org/x/net/http/httpguts": {"cmd/ratekeeper"},
		// The command's stdin hint asks the system whether standard input
		// is a terminal (termios ioctls, the Windows console mode).
		"golang.org/x/sys/": {"cmd/ratekeeper/internal/tty"},
	}
	// Never in this module, test files included (DESIGN.md: side-by-side
	// tests and benchmarks only, which live in the benchmarks module).
	banned := []string{"github.com/go-chi/httprate", "golang.org/x/time"}
	for _, f := range moduleFiles(t) {
		for _, ip := range f.imports {
			if slices.ContainsFunc(banned, func(b string) bool { return ip == b || strings.HasPrefix(ip, b+"/") }) {
				t.Errorf("%s imports %s, which belongs in the benchmarks module only", f.path, ip)
				continue
			}
			host, _, _ := strings.Cut(ip, "/")
			if !strings.Contains(host, ".") || strings.HasPrefix(ip, module) {
				continue // the standard library, or ours
			}
			if f.test || under(f.dir, "examples") {
				continue // tests and examples may use any (go.mod lists them all)
			}
			var places []string
			for dep, ps := range where {
				if ip == dep || strings.HasPrefix(ip, strings.TrimSuffix(dep, "/")+"/") {
					places = ps
				}
			}
			if places == nil {
				t.Errorf("%s imports %s, a dependency DESIGN.md does not name and this test does not list", f.path, ip)
				continue
			}
			if !slices.ContainsFunc(places, func(p string) bool {
				return under(f.dir, p) || strings.HasPrefix(f.path, p) && path.Dir(f.path) == path.Dir(p+"x")
			}) {
				t.Errorf("%s imports %s, which belongs only in %v", f.path, ip, places)
			}
		}
	}
}
