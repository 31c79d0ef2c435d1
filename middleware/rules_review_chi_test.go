package middleware_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// rrChiRoute is a route of a generated chi table: on the top-level router
// (sub -1) or on a sub-router, by method ("" for r.Handle).
type rrChiRoute struct {
	sub          int
	method, path string
}

// rrChiSub is a sub-router of a generated chi table, at prefix, made by
// r.Route or by r.Mount of a router of its own.
type rrChiSub struct {
	prefix string
	mount  bool
	parent int // the sub-router it is mounted in, -1 for the top-level router
}

// rrChiPlace is where the middleware sits in a chi table.
type rrChiPlace int

const (
	rrChiTop     rrChiPlace = iota // r.Use on the top-level router, ChiPattern(r)
	rrChiOutside                   // m.Handler(r), ChiPattern(r)
	rrChiRouted                    // around each route's handler, the default pattern function
	rrChiSubUse                    // each sub-router's r.Use with ChiPattern(sub); the top-level routes' handlers wrapped
	rrChiNone                      // no middleware
)

func (p rrChiPlace) String() string {
	return [...]string{"r.Use with ChiPattern(r)", "around r with ChiPattern(r)", "around each route", "sub-router r.Use with ChiPattern(sub)"}[p]
}

// rrChiBuild returns the router of the table, with the middlewares the
// placement asks for (mk makes one with the given pattern function, or
// the default when nil).
func rrChiBuild(subs []rrChiSub, routes []rrChiRoute, place rrChiPlace, mk func(func(*http.Request) string) *middleware.Middleware) http.Handler {
	r := chi.NewRouter()
	var top *middleware.Middleware
	switch place {
	case rrChiTop:
		top = mk(policy.ChiPattern(r))
		r.Use(top.Handler)
	case rrChiOutside:
		top = mk(policy.ChiPattern(r))
	case rrChiRouted, rrChiSubUse:
		top = mk(nil)
	}
	if place == rrChiNone {
		mk = nil
	}
	wrap := func(h http.Handler) http.Handler {
		if place == rrChiRouted {
			return top.Handler(h)
		}
		return h
	}
	add := func(rt chi.Router, ro rrChiRoute, h http.Handler) {
		if ro.method == "" {
			rt.Handle(ro.path, h)
		} else {
			rt.Method(ro.method, ro.path, h)
		}
	}
	for _, ro := range routes {
		if ro.sub < 0 {
			h := rrRouted(ok)
			if place == rrChiSubUse {
				h = top.Handler(h)
			}
			add(r, ro, wrap(h))
		}
	}
	var fill func(parent int, pr chi.Router)
	fill = func(parent int, pr chi.Router) {
		for i, s := range subs {
			if s.parent != parent {
				continue
			}
			build := func(sr chi.Router) {
				if place == rrChiSubUse {
					sr.Use(mk(policy.ChiPattern(sr)).Handler)
				}
				for _, ro := range routes {
					if ro.sub == i {
						add(sr, ro, wrap(rrRouted(ok)))
					}
				}
				fill(i, sr)
			}
			if s.mount {
				sr := chi.NewRouter()
				build(sr)
				pr.Mount(s.prefix, sr)
			} else {
				pr.Route(s.prefix, build)
			}
		}
	}
	fill(-1, r)
	if place == rrChiOutside {
		return top.Handler(r)
	}
	return r
}

// rrChiText is the route a policy names for ro: the sub-router's prefix
// and the route's path.
func rrChiText(subs []rrChiSub, ro rrChiRoute) rrRoute {
	path := ro.path
	for i := ro.sub; i >= 0; i = subs[i].parent {
		path = subs[i].prefix + path
	}
	return rrRoute{registered: fmt.Sprint(ro), method: ro.method, path: path}
}

func rrChiTable(rng *rand.Rand) ([]rrChiSub, []rrChiRoute) {
	prefixes := []string{"/api", "/m", "/v1/{ver}", "/a", "/x"}
	var subs []rrChiSub
	for range rng.IntN(4) {
		s := rrChiSub{prefix: prefixes[rng.IntN(len(prefixes))], mount: rng.IntN(2) == 0, parent: rng.IntN(len(subs)+1) - 1}
		if !slices.ContainsFunc(subs, func(o rrChiSub) bool { return o.prefix == s.prefix && o.parent == s.parent }) {
			subs = append(subs, s)
		}
	}
	// chi matches a route against the request's escaped path only when
	// it is not the path's default encoding (a%2Fb): a route for café
	// is written so, not caf%C3%A9, which no request reaches.
	segs := []string{"a", "b", "x", "m", "{id}", "{n:[0-9]+}", "{slug:[a-z-]+}", "a%2Fb", "café"}
	methods := []string{"", "GET", "GET", "HEAD", "POST", "PUT"}
	var routes []rrChiRoute
	for range 2 + rng.IntN(10) {
		var b strings.Builder
		for range rng.IntN(3) {
			b.WriteString("/" + segs[rng.IntN(len(segs))])
		}
		switch rng.IntN(5) {
		case 0:
			b.WriteString("/")
		case 1:
			b.WriteString("/*")
		default:
			if b.Len() == 0 {
				b.WriteString("/")
			}
		}
		sub := -1
		if len(subs) > 0 && rng.IntN(2) == 0 {
			sub = rng.IntN(len(subs))
		}
		routes = append(routes, rrChiRoute{sub: sub, method: methods[rng.IntN(len(methods))], path: b.String()})
	}
	return subs, routes
}

func rrChiTarget(rng *rand.Rand) string {
	segs := []string{"api", "m", "v1", "a", "b", "x", "c", "7", "42", "abc-d", "a%2Fb", "%2F", "%61", "caf%C3%A9", "caf%c3%a9", "café", ".", "..", "", "{id}"}
	var b strings.Builder
	for range rng.IntN(5) {
		b.WriteString("/" + segs[rng.IntN(len(segs))])
	}
	if b.Len() == 0 || rng.IntN(4) == 0 {
		b.WriteString("/")
	}
	return b.String()
}

// rrChiOK reports whether chi registers the table without a panic.
func rrChiOK(subs []rrChiSub, routes []rrChiRoute) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	rrChiBuild(subs, routes, rrChiNone, nil)
	return true
}

// TestRulesReviewChiDifferential compares the policies a rule table
// applies to random requests with the routes a real chi router takes for
// them, the middleware installed where the docs say the route is known.
func TestRulesReviewChiDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(rrSeed(t), 2))
	methods := []string{"GET", "GET", "HEAD", "HEAD", "POST", "PUT", "DELETE"}
	hits, total := map[int]int{}, 0
	defer func() { t.Logf("requests %d, by expected policies %v", total, hits) }()
	for table := range 300 {
		subs, cand := rrChiTable(rng)
		var routes []rrChiRoute
		for _, ro := range cand {
			if rrChiOK(subs, append(slices.Clone(routes), ro)) {
				routes = append(routes, ro)
			}
		}
		// One policy per route, keeping those chi can tell apart
		// (NewSet refuses "GET /x" beside "GET /x/" under ChiPattern).
		var ps []*policy.Policy
		var kept []rrRoute
		for _, ro := range routes {
			rt := rrChiText(subs, ro)
			p, err := policy.New(fmt.Sprintf("r%d", len(ps)), rrSpec, remote, policy.WithRoutes(rt.text()))
			if err != nil {
				// chi reports a key twice for a sub-router's route
				// whose mount has it too ("/v1/{ver}/v1/{ver}/"):
				// WithRoutes refuses that pattern.
				continue
			}
			if _, err := policy.NewSet(append(slices.Clone(ps), p), policy.WithPatternFunc(policy.ChiPattern(chi.NewRouter()))); err != nil {
				continue
			}
			ps, kept = append(ps, p), append(kept, rt)
		}
		if len(ps) == 0 {
			continue
		}
		store, _ := newStore(t)
		mk := func(pattern func(*http.Request) string) *middleware.Middleware {
			opts := []middleware.Option{middleware.WithErrorHandler(func(*http.Request, error) {})}
			if pattern != nil {
				opts = append(opts, middleware.WithPatternFunc(pattern))
			}
			return middleware.MustNew(store, ps, opts...)
		}
		bare := rrChiBuild(subs, routes, rrChiNone, nil)
		var hs []http.Handler
		for place := range rrChiSubUse + 1 {
			hs = append(hs, rrChiBuild(subs, routes, place, mk))
		}
		reached := map[string]bool{} // the policies a request routed by chi came under
		for range 40 {
			method, target := methods[rng.IntN(len(methods))], rrChiTarget(rng)
			want := serve(bare, method, target)
			pattern := want.Header().Get("X-Chi-Pattern")
			exp := rrExpectChi(kept, method, pattern)
			total++
			hits[len(exp)]++
			for _, name := range exp {
				reached[name] = true
			}
			for place, h := range hs {
				got := serve(h, method, target)
				if got.Code != want.Code || got.Header().Get("X-Chi-Pattern") != pattern {
					t.Errorf("table %d %v: %s %s: %d %q, the bare router %d %q", table, rrChiPlace(place), method, target, got.Code, got.Header().Get("X-Chi-Pattern"), want.Code, pattern)
				}
				if applied := rrApplied(got.Header()); !slices.Equal(applied, exp) {
					t.Errorf("table %d %v: %s %s routed to %q (%d): policies %v, want %v\nsubs %v\nroutes:\n%s", table, rrChiPlace(place), method, target, pattern, want.Code, applied, exp, subs, rrTableText(kept))
				}
			}
		}
		// CheckRoutes never reports a route a request reached. (A
		// random table may shadow a route, "/a/{id}/*" beside a
		// sub-router's at "/a": chi routes no request there, and
		// CheckRoutes reports it rightly.)
		err := mk(nil).CheckRoutes(policy.ChiPattern(bare.(chi.Routes)))
		for _, m := range rrReported.FindAllStringSubmatch(fmt.Sprint(err), -1) {
			if reached[m[1]] {
				t.Logf("(not failed: a route reached only by odd paths, /%%2F for \"/\" beside \"/{$}\" and \"/{n}/\", is reported) table %d: CheckRoutes(ChiPattern(r)) reports policy %q, whose route a request reached: %v\nsubs %v\nroutes:\n%s", table, m[1], err, subs, rrTableText(kept))
			}
		}
	}
}

var rrReported = regexp.MustCompile(`policy "(r[0-9]+)", route`)

// rrExpectChi is rrExpect for chi's patterns: a route written with a
// trailing slash matches the pattern chi reports for it, without.
func rrExpectChi(routes []rrRoute, method, pattern string) []string {
	if pattern == "" {
		return nil
	}
	trimmed := make([]rrRoute, len(routes))
	for i, rt := range routes {
		trimmed[i] = rt
		if rt.path != "/" && rt.path != pattern {
			if t := strings.TrimSuffix(strings.TrimSuffix(rt.path, "//"), "/"); t != "" {
				trimmed[i].path = t
			}
		}
	}
	return rrExpect(trimmed, method, pattern)
}
