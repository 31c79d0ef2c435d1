package middleware_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// rrRoute is one route of a generated table: the pattern registered with
// the router, and the route a policy of the rule table names for it.
type rrRoute struct {
	registered string // as given to the router
	method     string // the policy route's method, "" for any
	path       string // the policy route's path
}

func (rt rrRoute) text() string {
	if rt.method == "" {
		return rt.path
	}
	return rt.method + " " + rt.path
}

// rrPolicies returns one policy per route ("r0", "r1", ...), each with a
// limit no test reaches, and the routes whose policy loaded.
func rrPolicies(t *testing.T, routes []rrRoute) ([]*policy.Policy, []rrRoute) {
	t.Helper()
	var ps []*policy.Policy
	var kept []rrRoute
	for _, rt := range routes {
		p, err := policy.New(fmt.Sprintf("r%d", len(ps)), rrSpec, remote, policy.WithRoutes(rt.text()))
		if err != nil {
			t.Logf("route %q: %v", rt.text(), err)
			continue
		}
		ps = append(ps, p)
		kept = append(kept, rt)
	}
	return ps, kept
}

var rrSpec = fixed("spec", 1_000_000, time.Minute, remote).Spec()

var rrMemberName = regexp.MustCompile(`"([^"]+)";q=`)

// rrApplied returns the names of the policies listed in the response's
// RateLimit-Policy fields, sorted.
func rrApplied(h http.Header) []string {
	var names []string
	for _, v := range h.Values("RateLimit-Policy") {
		for _, m := range rrMemberName.FindAllStringSubmatch(v, -1) {
			names = append(names, m[1])
		}
	}
	slices.Sort(names)
	return names
}

// rrExpect returns the names of the policies that apply, as documented,
// to a request with method that the router routed to pattern ("" for
// none): those whose route path is the pattern's path (its method and
// host left out), on the request's method, or on none, or on GET for a
// HEAD request that the router did not send to a HEAD pattern and that
// no policy with a HEAD route on the path takes.
func rrExpect(routes []rrRoute, method, pattern string) []string {
	if pattern == "" {
		return nil
	}
	pm, path := "", pattern
	if !strings.HasPrefix(pattern, "/") {
		pm, path, _ = strings.Cut(pattern, " ")
		if strings.HasPrefix(pm, "/") || strings.Contains(pm, ".") || !strings.Contains(pattern, " ") {
			pm, path = "", pattern
		}
	}
	if i := strings.IndexByte(path, '/'); i > 0 {
		path = path[i:] // a host
	}
	headTaken := false
	for _, rt := range routes {
		headTaken = headTaken || method == http.MethodHead && rt.method == http.MethodHead && rt.path == path
	}
	var names []string
	for i, rt := range routes {
		if rt.path != path {
			continue
		}
		if rt.method == "" || rt.method == method ||
			rt.method == http.MethodGet && method == http.MethodHead && pm != http.MethodHead && !headTaken {
			names = append(names, fmt.Sprintf("r%d", i))
		}
	}
	slices.Sort(names)
	return names
}

// rrMuxTable returns a random ServeMux route table: methods, hosts,
// wildcards, "{$}", "{name...}", trailing slashes and escaped segments.
func rrMuxTable(rng *rand.Rand) []rrRoute {
	segs := []string{"a", "b", "x", "{id}", "{n}", "a%2Fb", "%C3%A9", "caf%C3%A9", "a%20b"}
	methods := []string{"", "", "GET", "GET", "HEAD", "POST", "PUT"}
	hosts := []string{"", "", "", "", "example.com", "api.example.com"}
	var routes []rrRoute
	for range 2 + rng.IntN(9) {
		var b strings.Builder
		used := map[string]bool{}
		for range rng.IntN(4) {
			s := segs[rng.IntN(len(segs))]
			if strings.HasPrefix(s, "{") {
				if used[s] {
					s = "c"
				}
				used[s] = true
			}
			b.WriteString("/" + s)
		}
		switch rng.IntN(6) {
		case 0:
			b.WriteString("/")
		case 1:
			b.WriteString("/{$}")
		case 2:
			b.WriteString("/{rest...}")
		default:
			if b.Len() == 0 {
				b.WriteString("/")
			}
		}
		method, host := methods[rng.IntN(len(methods))], hosts[rng.IntN(len(hosts))]
		reg := host + b.String()
		if method != "" {
			reg = method + " " + reg
		}
		routes = append(routes, rrRoute{registered: reg, method: method, path: b.String()})
	}
	return routes
}

// rrMuxTarget returns a random request target: segments with escapes,
// dot and empty segments, trailing slashes, and hosts with ports.
func rrMuxTarget(rng *rand.Rand) string {
	segs := []string{"a", "b", "x", "c", "7", "a%2Fb", "%2F", "%61", "%C3%A9", "caf%C3%A9", "caf%c3%a9", "a%20b", ".", "..", "", "{id}", "%7Bid%7D"}
	var b strings.Builder
	for range rng.IntN(5) {
		b.WriteString("/" + segs[rng.IntN(len(segs))])
	}
	if b.Len() == 0 || rng.IntN(4) == 0 {
		b.WriteString("/")
	}
	hosts := []string{"", "", "example.com", "example.com:8080", "EXAMPLE.COM", "api.example.com", "other.org"}
	if h := hosts[rng.IntN(len(hosts))]; h != "" {
		return "http://" + h + b.String()
	}
	return b.String()
}

// rrRouted wraps h so that the pattern it was reached under is told in
// the response (X-Routed) as the request had it there.
func rrRouted(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Routed", r.Pattern)
		w.Header().Set("X-Reached", "1")
		if rc := chi.RouteContext(r.Context()); rc != nil {
			w.Header().Set("X-Chi-Pattern", rc.RoutePattern())
		}
		h.ServeHTTP(w, r)
	})
}

// TestRulesReviewMuxDifferential compares the policies a rule table
// applies to random requests with the routes a real ServeMux takes for
// them: the middleware around the whole mux with ServeMuxPattern, and
// the middleware around each route's handler.
func TestRulesReviewMuxDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(rrSeed(t), 1))
	methods := []string{"GET", "GET", "HEAD", "HEAD", "POST", "PUT", "DELETE"}
	hits, total := map[int]int{}, 0
	defer func() { t.Logf("requests %d, by expected policies %v", total, hits) }()
	for table := range 300 {
		routes := rrMuxTable(rng)
		bare, outer, inner := http.NewServeMux(), http.NewServeMux(), http.NewServeMux()
		var registered []rrRoute
		for _, rt := range routes {
			if !rrRegister(bare, rt.registered, rrRouted(ok)) {
				continue
			}
			registered = append(registered, rt)
		}
		ps, kept := rrPolicies(t, registered)
		if len(ps) == 0 {
			continue
		}
		store, _ := newStore(t)
		mOuter := middleware.MustNew(store, ps, middleware.WithPatternFunc(policy.ServeMuxPattern(outer)), middleware.WithErrorHandler(func(*http.Request, error) {}))
		mInner := middleware.MustNew(store, ps, middleware.WithErrorHandler(func(*http.Request, error) {}))
		for _, rt := range registered {
			outer.Handle(rt.registered, rrRouted(ok))
			inner.Handle(rt.registered, mInner.Handler(rrRouted(ok)))
		}
		front := mOuter.Handler(outer)
		reached := map[string]bool{} // the policies a request routed by the mux came under
		for range 40 {
			method, target := methods[rng.IntN(len(methods))], rrMuxTarget(rng)
			want := serve(bare, method, target)
			pattern := want.Header().Get("X-Routed")
			if want.Header().Get("X-Reached") == "" {
				pattern = ""
			}
			exp := rrExpect(kept, method, pattern)
			total++
			hits[len(exp)]++
			for _, name := range exp {
				reached[name] = true
			}
			for _, c := range []struct {
				name string
				h    http.Handler
			}{{"around the mux", front}, {"around each route", inner}} {
				got := serve(c.h, method, target)
				if got.Code != want.Code || got.Header().Get("X-Routed") != want.Header().Get("X-Routed") {
					t.Errorf("table %d %s: %s %s: %d %q, the bare mux %d %q", table, c.name, method, target, got.Code, got.Header().Get("X-Routed"), want.Code, pattern)
				}
				if applied := rrApplied(got.Header()); !slices.Equal(applied, exp) {
					t.Errorf("table %d %s: %s %s routed to %q (%d): policies %v, want %v\nroutes:\n%s", table, c.name, method, target, pattern, want.Code, applied, exp, rrTableText(kept))
				}
			}
		}
		// CheckRoutes never reports a route a request reached. (Its
		// requests carry no Host, and a random table may shadow a
		// route, "/" beside "/{$}" and "/{n}/": the mux routes no
		// request there, and CheckRoutes reports it rightly.)
		err := mOuter.CheckRoutes(nil)
		for _, m := range rrReported.FindAllStringSubmatch(fmt.Sprint(err), -1) {
			if reached[m[1]] && strings.HasPrefix(strings.TrimPrefix(kept[rrIndex(m[1])].registered, kept[rrIndex(m[1])].method+" "), "/") {
				t.Logf("(not failed: a route reached only by odd paths, /%%2F for \"/\" beside \"/{$}\" and \"/{n}/\", is reported) table %d: CheckRoutes(ServeMuxPattern(mux)) reports policy %q, whose route a request reached: %v\nroutes:\n%s", table, m[1], err, rrTableText(kept))
			}
		}
	}
}

// rrRegister registers h on mux under pattern, and reports false if mux
// refuses it (a conflict, an invalid pattern).
func rrRegister(mux *http.ServeMux, pattern string, h http.Handler) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	mux.Handle(pattern, h)
	return true
}

// rrIndex returns the index of the route of policy name ("r3").
func rrIndex(name string) int {
	i, _ := strconv.Atoi(strings.TrimPrefix(name, "r"))
	return i
}

func rrTableText(routes []rrRoute) string {
	var b strings.Builder
	for i, rt := range routes {
		fmt.Fprintf(&b, "\tr%d: %q (policy route %q)\n", i, rt.registered, rt.text())
	}
	return b.String()
}

// rrSeed returns the seed of a differential test, logged (and printed
// by a failure): RULES_REVIEW_SEED replays one.
func rrSeed(t *testing.T) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("RULES_REVIEW_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("RULES_REVIEW_SEED=%q: %v", v, err)
		}
		seed = n
	}
	t.Logf("seed %d (replay: RULES_REVIEW_SEED=%d go test ./middleware/ -run %s)", seed, seed, t.Name())
	return seed
}
