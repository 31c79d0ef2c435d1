package ratekeeper_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	chimw "github.com/go-chi/chi/v5/middleware"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestChiHeadOnGetRouteCounted: keyfunc.Method's doc said chi serves a
// HEAD with the GET handler "with its GetHead middleware", but not what
// happens without it: chi answers a HEAD to a GET-only route 405, and a
// limiter in r.Use, which runs before chi routes, has counted the request
// by then, under the key "GET" (one in r.With on the route is never
// reached). Through a real chi router, with and without GetHead, and the
// doc now says so.
func TestChiHeadOnGetRouteCounted(t *testing.T) {
	for _, tc := range []struct {
		name    string
		getHead bool
		with    bool // the limiter in r.With on the route, not r.Use
		want    []int
	}{
		{"r.Use, no GetHead", false, false, []int{405, 200, 429}},
		{"r.Use, GetHead", true, false, []int{200, 200, 429}},
		{"r.With, no GetHead", false, true, []int{405, 200, 200}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, err := algorithms.NewMemoryStore()
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 2, Window: time.Minute}
			p := policy.Must(policy.New("per-method", spec, keyfunc.Method()))
			m := middleware.MustNew(store, []*policy.Policy{p})
			r := chi.NewRouter()
			if tc.getHead {
				r.Use(chimw.GetHead)
			}
			ok := func(http.ResponseWriter, *http.Request) {}
			if tc.with {
				r.With(m.Handler).Get("/items", ok)
			} else {
				r.Use(m.Handler)
				r.Get("/items", ok)
			}
			srv := httptest.NewServer(r)
			defer srv.Close()
			var codes []int
			for _, method := range []string{"HEAD", "GET", "GET"} {
				req, _ := http.NewRequest(method, srv.URL+"/items", nil)
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				codes = append(codes, resp.StatusCode)
			}
			for i := range tc.want {
				if codes[i] != tc.want[i] {
					t.Fatalf("HEAD, GET, GET with a limit of 2: %v, want %v", codes, tc.want)
				}
			}
		})
	}

	doc := funcDoc(t, "keyfunc", "Method")
	for _, want := range []string{"405", "GetHead", "still counts"} {
		if !strings.Contains(doc, want) {
			t.Errorf("keyfunc.Method's doc does not say %q (chi's 405 to a HEAD without GetHead, which the limiter still counts):\n%s", want, doc)
		}
	}
}

// funcDoc returns the doc comment of the function name in the non-test
// .go files of directory dir, its white space folded.
func funcDoc(t *testing.T, dir, name string) string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == name {
				return strings.Join(strings.Fields(fd.Doc.Text()), " ")
			}
		}
	}
	t.Fatalf("no func %s in %s", name, dir)
	return ""
}
