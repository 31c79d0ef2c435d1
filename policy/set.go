package policy

import (
	"bytes"
	"net/http"
	pathpkg "path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/internal/errlist"
	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// MaxPolicies is the largest number of policies in a Set.
const MaxPolicies = 64

// maxCachedSubsets bounds the cache of header values per subset of policies.
const maxCachedSubsets = 1024

// A Set is an ordered list of policies evaluated together: for each request
// every policy that applies becomes one [algorithms.Check], and all of them
// are decided by one Store call, all or nothing (see [Result.Take]). A Set
// whose policies carry methods and routes is a rule table; one without is a
// plain stack (say 10 per second and 100 per minute per IP).
//
// A Set is immutable and safe for concurrent use.
type Set struct {
	policies    []*Policy
	keySrc      []int8 // keySrc[i]: the nearest earlier policy with the same key function, or -1
	chiRoutes   bool   // some policy has a route whose chi form differs (Policy.chiRoutes)
	countIf     uint64 // the policies with CountIf
	guarded     uint64 // the policies with a guard (Policy.Guard)
	folds       uint64 // the policies checked on their first guard's state alone (Policy.folds)
	carried     uint64 // the policies with a reload's guard (Policy.WithGuard)
	lowered     uint64 // the policies with a cost function and a capacity below their configured one (see Result.AboveLimit)
	always      bool   // no policy has methods, routes or a predicate
	pattern     func(*http.Request) string
	ownPattern  bool                // pattern was set by WithPatternFunc
	chiPattern  bool                // pattern is one of ChiPattern's: its patterns are chi's
	muxPattern  bool                // pattern is one of ServeMuxPattern's: its patterns are never chi's
	unrouted    func(*http.Request) // see WithUnroutedFunc; nil if none
	head        *headRules          // the HEAD entries, which take HEAD from GET ones; nil if none
	headMethods uint64              // the policies whose methods name HEAD
	headRoutes  uint64              // the policies with a route on HEAD

	all     uint64 // every policy
	allIETF string // RateLimit-Policy for all, draft -11
	allOld  string // RateLimit-Policy for all, drafts -6/-7

	mu    sync.Mutex // serialises writers of cache
	cache atomic.Pointer[map[uint64]policyHeaders]
}

type policyHeaders struct{ ietf, old string }

// A SetOption configures a Set.
type SetOption func(*Set) error

// WithPatternFunc sets the function that returns the route pattern of a
// request, read only when some policy has routes (see [WithRoutes]). The
// default is [RoutePattern]. [ServeMuxPattern] resolves the pattern of a
// request that has not reached its ServeMux yet. A route key part
// (keyfunc.Route) then reads the pattern this function finds (see
// [Set.Prepare]), and [NoRoute] when it returns "", which it must return
// only for a request that no route of the router matches.
func WithPatternFunc(pattern func(*http.Request) string) SetOption {
	return func(s *Set) error {
		if pattern == nil {
			return &Error{Field: "PatternFunc", Reason: "is nil"}
		}
		s.pattern, s.ownPattern = pattern, true
		s.chiPattern = funcCode(pattern) == chiPatternCode
		s.muxPattern = funcCode(pattern) == muxPatternCode
		return nil
	}
}

// WithUnroutedFunc sets a function called with each request for which a
// policy with routes (see [WithRoutes]) needed the route pattern and the
// pattern function did not know it (returned ""): no such policy applies
// to that request. A request no route matched (a 404) is one (a
// ServeMux's redirect of its own is not: see [MuxRedirect]); every
// request being one means that the Set is asked before the router has
// routed, without a pattern function that can tell ([ServeMuxPattern],
// [ChiPattern]), so that the policies with routes never apply. f runs on
// the request's goroutine and must be safe for concurrent use.
func WithUnroutedFunc(f func(*http.Request)) SetOption {
	return func(s *Set) error {
		if f == nil {
			return &Error{Field: "UnroutedFunc", Reason: "is nil"}
		}
		s.unrouted = f
		return nil
	}
}

// NewSet returns the Set of policies, in order. Names must be unique (they
// identify the policies in headers); there must be 1 to [MaxPolicies]
// policies. Every problem is reported, each an *Error, several joined
// with [errors.Join] (errors.As gives the first): each nil policy, each
// name several policies share (once, where it is given the second time,
// naming them all), and each bad option; under [ChiPattern], each route
// that chi cannot tell apart from another policy's ("GET /x/" beside
// "GET /x": chi reports both as "/x", see [WithRoutes]).
func NewSet(policies []*Policy, opts ...SetOption) (*Set, error) {
	if len(policies) == 0 {
		return nil, &Error{Field: "Policies", Reason: "is empty; give at least one policy"}
	}
	var errs []error
	if len(policies) > MaxPolicies {
		errs = append(errs, &Error{Field: "Policies", Reason: "holds " + strconv.Itoa(len(policies)) + " policies; at most " + strconv.Itoa(MaxPolicies)})
	}
	s := &Set{policies: make([]*Policy, len(policies)), pattern: RoutePattern}
	named := make(map[string][]int, len(policies))
	for i, p := range policies {
		if p != nil && p.key != nil {
			named[p.name] = append(named[p.name], i)
		}
	}
	for i, p := range policies {
		if p == nil || p.key == nil {
			errs = append(errs, &Error{Field: "Policies", Reason: "hold a nil or zero Policy at index " + strconv.Itoa(i)})
			continue
		}
		if at := named[p.name]; len(at) > 1 {
			if i == at[1] {
				errs = append(errs, &Error{Policy: p.name, Field: "Name", Reason: "is the name of policies " + indexList(at) + " of the set"})
			}
			continue
		}
		if len(errs) > 0 {
			continue // only the problems are wanted now
		}
		s.policies[i] = p
		s.keySrc = append(s.keySrc, -1)
		for j := i - 1; j >= 0; j-- {
			if sameFunc(policies[j].key, p.key) {
				s.keySrc[i] = int8(j) // the nearest: Prepare walks the chain
				break
			}
		}
		s.chiRoutes = s.chiRoutes || p.chiRoutes
		s.head = p.addHeadRules(s.head)
	}
	for i, opt := range opts {
		if opt == nil {
			errs = append(errs, &Error{Field: "Options", Reason: "hold a nil SetOption at index " + strconv.Itoa(i)})
			continue
		}
		errs = appendErrors(errs, opt(s))
	}
	if len(errs) == 0 && s.chiPattern {
		errs = chiTwins(s.policies)
	}
	if len(errs) > 0 {
		return nil, errlist.Join(errs)
	}
	s.always = true
	for _, p := range s.policies {
		s.always = s.always && len(p.methods) == 0 && len(p.routes) == 0 && p.match == nil
	}
	for i, p := range s.policies {
		if p.countIf != nil {
			s.countIf |= 1 << i
		}
		if _, ok := p.Guard(); ok {
			s.guarded |= 1 << i
		}
		if p.folds() {
			s.folds |= 1 << i
		}
		if p.carry[0].Algorithm != "" {
			s.carried |= 1 << i
		}
		if p.cost != nil && p.capacity < p.Configured().Capacity() {
			// A cost may be above its capacity but within its
			// configured one: Take denies it.
			s.lowered |= 1 << i
		}
		if slices.Contains(p.methods, http.MethodHead) {
			s.headMethods |= 1 << i
		}
		if slices.ContainsFunc(p.routes, p.onHead) {
			s.headRoutes |= 1 << i
		}
	}
	s.all = uint64(1)<<len(policies) - 1
	if len(policies) == 64 {
		s.all = ^uint64(0)
	}
	h := s.build(s.all)
	s.allIETF, s.allOld = h.ietf, h.old
	return s, nil
}

// chiTwins returns an error for each route of a policy that chi cannot
// tell apart from another policy's route with another path on a method
// both take: chi reports the pattern of a route registered as "/x/" as
// that of "/x" (see chiReported), so that under ChiPattern each of the
// two policies would apply to the requests of both routes ("GET /x" and
// "GET /x/" are two routes to ServeMux, one to chi). The same route in
// two policies, or twice in one, is no such error.
func chiTwins(ps []*Policy) []error {
	var errs []error
	for j, q := range ps {
		for _, b := range q.routes {
			for _, p := range ps[:j] {
				for _, a := range p.routes {
					if a.path == b.path || a.chiPath != b.chiPath || !methodsMeet(p, a, q, b) {
						continue
					}
					errs = append(errs, q.errorf("Routes", "%q and policy %q's route %q are one route to chi, whose route pattern is %q for both: "+
						"each policy would apply to the requests of both routes; under chi write one route for them (or, for two routes, give them paths that differ otherwise)",
						routeText(b), p.name, routeText(a), b.chiPath))
				}
			}
		}
	}
	return errs
}

// routeText writes rt as a route of WithRoutes: "GET /x", or "/x".
func routeText(rt route) string {
	if rt.method == "" {
		return rt.path
	}
	return rt.method + " " + rt.path
}

// methodsMeet reports whether a route a of p and a route b of q may
// apply to requests of one method: each route's method, or else its
// policy's methods (none: every method), share one (GET covering HEAD).
func methodsMeet(p *Policy, a route, q *Policy, b route) bool {
	ma, mb := routeMethods(p, a), routeMethods(q, b)
	if ma == nil || mb == nil {
		return true
	}
	for _, m := range ma {
		for _, n := range mb {
			if m == n || m == http.MethodGet && n == http.MethodHead || m == http.MethodHead && n == http.MethodGet {
				return true
			}
		}
	}
	return false
}

// routeMethods returns the methods of rt, a route of p: its own, else
// p's; nil means every method.
func routeMethods(p *Policy, rt route) []string {
	if rt.method != "" {
		return []string{rt.method}
	}
	return p.methods
}

// indexList writes the indexes at, in order, as "0, 3 and 6".
func indexList(at []int) string {
	b := []byte(nil)
	for k, i := range at {
		switch {
		case k == len(at)-1 && k > 0:
			b = append(b, " and "...)
		case k > 0:
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, int64(i), 10)
	}
	return string(b)
}

// Policies returns the policies of s, in order (a copy).
func (s *Set) Policies() []*Policy { return append([]*Policy(nil), s.policies...) }

// Policy returns the i-th policy of s (0 <= i < Len), in the order of
// Policies, without copying them.
func (s *Set) Policy(i int) *Policy { return s.policies[i] }

// CountIfMask returns the policies of s that count only some responses
// ([CountIf]), as a bit mask over s.
func (s *Set) CountIfMask() uint64 { return s.countIf }

// Len returns the number of policies in s.
func (s *Set) Len() int { return len(s.policies) }

// Match returns the subset of s that applies to r, as a bit mask: bit i is
// set when s.Policies()[i] applies. The route pattern is looked up only if
// a policy needs it.
//
// A policy on GET covers HEAD (see [Policy.Applies]) only where no HEAD
// entry of the Set applies, as a ServeMux HEAD pattern takes HEAD from the
// GET one of its own path: with policies on "GET /x" and "HEAD /x", a
// HEAD request to /x is under the second only (as with a policy on the
// method HEAD and the route "/x", see [WithMethods]), and with policies
// on the methods GET and HEAD, a HEAD request is under the second only; but a
// HEAD request that the HEAD entry's policy does not apply to (for its
// routes or its predicate) is under the GET one.
func (s *Set) Match(r *http.Request) uint64 {
	mask, _ := s.MatchRoute(r)
	return mask
}

// MatchRoute is [Set.Match], also reporting whether r is unrouted: a policy
// with routes needed r's route pattern and the pattern function did not
// know it, so that no such policy applies (see [WithUnroutedFunc], which
// is called for it as by Match). It lets a caller act on that with the
// request in hand, as a middleware marking the request it counted does.
func (s *Set) MatchRoute(r *http.Request) (mask uint64, unrouted bool) {
	if s.always {
		return s.all, false
	}
	pattern, resolved, byChi := "", false, false
	match := func(i int, p *Policy, h *headRules, methodHead, routeHead bool) {
		if p.needsPattern() && !resolved {
			pattern, resolved = s.pattern(r), true
			if pattern == "" {
				unrouted = true
				if s.unrouted != nil {
					s.unrouted(r)
				}
			}
			// The pattern is chi's when ChiPattern asked chi for it (a
			// limiter around the whole router runs before chi has put
			// its route context in r's), or when chi routes r and the
			// pattern is not a ServeMux's (one mounted in chi: see
			// chiRouted).
			byChi = s.chiRoutes && (s.chiPattern || !s.muxPattern && chiRouted(r, pattern))
		}
		if p.applies(r, pattern, h, byChi, methodHead, routeHead) {
			mask |= 1 << i
		}
	}
	heads := s.headMethods | s.headRoutes
	if heads == 0 || r.Method != http.MethodHead {
		for i, p := range s.policies {
			match(i, p, s.head, true, true)
		}
		return mask, unrouted
	}
	// A HEAD request: the HEAD entries first, since one that applies takes
	// it from the GET entries (a method HEAD from the methods GET, a route
	// on HEAD from the GET routes of its path).
	for i, p := range s.policies {
		if heads&(1<<i) != 0 {
			match(i, p, s.head, true, true)
		}
	}
	methodHead := mask&s.headMethods == 0
	routeHead := true
	if taken := mask & s.headRoutes; taken != 0 {
		path := patternPath(pattern)
		for i, p := range s.policies {
			if taken&(1<<i) != 0 && p.headRouteOn(path, byChi) {
				routeHead = false
				break
			}
		}
	}
	// A HEAD entry that did not apply may have left a GET route on the
	// path to HEAD routes (s.head) whose policies do not apply either:
	// then it is decided again, as the others are, by the HEAD routes
	// that apply (routeHead).
	again := false
	if routeHead && s.head != nil {
		path := patternPath(pattern)
		again = s.head.paths[path] || byChi && s.head.chiPaths[path]
	}
	for i, p := range s.policies {
		if heads&(1<<i) == 0 || again && mask&(1<<i) == 0 {
			match(i, p, nil, methodHead, routeHead)
		}
	}
	return mask, unrouted
}

// PolicyHeader returns the value of the RateLimit-Policy field (draft -11
// syntax) for the policies in mask: `"per-second";q=10;w=1, "per-minute";q=100;w=60`.
// Values are computed once per subset and cached.
func (s *Set) PolicyHeader(mask uint64) string {
	if mask == s.all {
		return s.allIETF
	}
	return s.headers(mask).ietf
}

// LegacyPolicyHeader returns the value of the RateLimit-Policy field in the
// syntax of drafts -06 and -07 for the policies in mask: `10;w=1, 100;w=60`.
//
// Those drafts identify a quota policy by its quota value (RateLimit-Limit
// names the policy it reports by it): two members MUST NOT share one. Of
// the policies of mask that share a quota value, the list keeps the one
// with the longest window, the stricter statement (q units in an hour
// admit no more than q in any minute of it), the first in the Set's order
// among equal windows; the others keep their places in order. So 100 per
// minute and 100 per hour give `100;w=3600`, and a RateLimit-Limit of 100
// reported for the minute's policy (keyed otherwise, its remaining lower)
// refers the client to the hour's window. [Set.PolicyHeader] names each
// policy and lists them all.
func (s *Set) LegacyPolicyHeader(mask uint64) string {
	if mask == s.all {
		return s.allOld
	}
	return s.headers(mask).old
}

func (s *Set) headers(mask uint64) policyHeaders {
	if m := s.cache.Load(); m != nil {
		if h, ok := (*m)[mask]; ok {
			return h
		}
	}
	h := s.build(mask)
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.cache.Load()
	if old != nil && len(*old) >= maxCachedSubsets {
		return h
	}
	m := make(map[uint64]policyHeaders, 1+lenMap(old))
	if old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	m[mask] = h
	s.cache.Store(&m)
	return h
}

func lenMap(m *map[uint64]policyHeaders) int {
	if m == nil {
		return 0
	}
	return len(*m)
}

func (s *Set) build(mask uint64) policyHeaders {
	var ietf, old strings.Builder
	for i, p := range s.policies {
		if mask&(1<<i) == 0 {
			continue
		}
		if ietf.Len() > 0 {
			ietf.WriteString(", ")
		}
		ietf.WriteString(p.member)
		if s.shadowed(mask, i) {
			continue
		}
		if old.Len() > 0 {
			old.WriteString(", ")
		}
		old.WriteString(p.legacy)
	}
	return policyHeaders{ietf.String(), old.String()}
}

// shadowed reports whether the i-th policy of s is left out of the draft
// -06/-07 RateLimit-Policy list of the policies in mask, where quota
// values must be distinct (see [Set.LegacyPolicyHeader]): another of them
// has its quota value and a longer window, or the same window and an
// earlier place.
func (s *Set) shadowed(mask uint64, i int) bool {
	p := s.policies[i]
	for j, o := range s.policies {
		if j == i || mask&(1<<j) == 0 || o.capacity != p.capacity {
			continue
		}
		if o.window > p.window || o.window == p.window && j < i {
			return true
		}
	}
	return false
}

// RoutePattern returns the route pattern of r as the router set it, a
// ServeMux pattern with its method and host ("GET /users/{id}", "HEAD
// /x", "example.com/login"; a policy's routes match its path, see
// [Policy.Applies]): [http.Request.Pattern], which ServeMux sets before
// calling the handler it routed to and chi sets before calling the routed
// handler (with its r.With middlewares), or else the pattern in chi's
// route context; "" before routing, including while chi has not routed
// yet under an outer ServeMux (whose r.Pattern, the "/" of
// mux.Handle("/", chiRouter), is not the request's route). Around a
// ServeMux mounted in another (outer.Handle("/api/", inner)), which has
// not routed yet, it is the outer mux's pattern ("/api/"), which nothing
// tells apart from a route the outer mux took: policies with routes of
// inner never apply there, and the request does not count as unrouted
// ([WithUnroutedFunc]); resolve it with [ServeMuxPattern](inner). It is what
// [keyfunc.Route] reads, and so the key of a route wherever the limiter
// sits: the same as [ServeMuxPattern] and [ChiPattern] find before
// routing.
func RoutePattern(r *http.Request) string {
	p, err := routeKey(r)
	if err != nil {
		return ""
	}
	return p
}

var routeKey = keyfunc.Route()

// MuxRedirect is the pattern [ServeMuxPattern] reports for a request its
// ServeMux answers with a redirect of its own, not with a route's handler:
// to the path with a trailing slash (POST /login to /login/, "POST
// /login/" being registered and "POST /login" not), or to the cleaned path
// (/a/../login/ and //login/ to /login/). It is no route pattern (those
// start with '/' or hold one), so no policy with routes ([WithRoutes])
// applies to the redirect: the client sends the request again to the new
// path, and only that one counts under the route's policies, as when the
// limiter wraps the routed handler, which the redirect never reaches. It
// is not an unknown route either ([WithUnroutedFunc] is not called). The
// policies without routes apply to the redirect as to any request, and a
// route key part (keyfunc.Route) keys it as MuxRedirect, apart from every
// route.
const MuxRedirect = "(redirect)"

// NoRoute is the route a route key part (keyfunc.Route) reads, in a Set
// with a pattern function of its own ([WithPatternFunc]), for a request
// that the function says no route matches: the router's 404, which the
// router is left to answer. All of one client's unrouted requests share
// that key, so a scanner's 404s count under the policy, apart from every
// route. Without a pattern function of its own, a Set cannot tell a 404
// from a limiter placed before routing, and a route key part's
// keyfunc.ErrNoRoute stands (see [OnKeyError]).
const NoRoute = "(none)"

// ServeMuxPattern returns a pattern function that asks mux which pattern r
// will match (as registered, with its method and host, as [RoutePattern]
// reads it once mux has routed), for a middleware that wraps the whole
// ServeMux (and so runs before it routes):
// http.ListenAndServe(addr, m.Handler(mux)). Each call costs a lookup in
// mux: one per request that a policy with routes meets ([Set.Match]), and
// one more in [Set.Prepare] when a key function reads the route
// (keyfunc.Route) or the request carries an outer router's pattern. It
// always asks mux: r.Pattern, when set, is an outer router's
// (mux mounted with outer.Handle("/api/", http.StripPrefix("/api",
// m.Handler(mux)))), not the route mux will take.
//
// For a request mux answers with a redirect of its own it returns
// [MuxRedirect], not the pattern the redirected request will match (the
// one ServeMux.Handler reports), under whose policies the request would
// count twice: once redirected, once sent again. For "OPTIONS *", which
// mux answers 400 without routing, it returns "". The redirects are those
// of the Go 1.22 ServeMux (not of GODEBUG=httpmuxgo121=1).
//
//go:noinline
func ServeMuxPattern(mux *http.ServeMux) func(*http.Request) string {
	return func(r *http.Request) string {
		if r.RequestURI == "*" {
			return "" // ServeMux.ServeHTTP answers 400 before routing
		}
		// ServeMux matches the escaped path, cleaned but for CONNECT,
		// and redirects any other request whose path cleaning changes.
		path := r.URL.EscapedPath()
		connect := r.Method == http.MethodConnect
		if !connect && canonicalPath(path) != path {
			return MuxRedirect
		}
		h, pattern := mux.Handler(r)
		if pattern == "" {
			return ""
		}
		if muxRedirects(mux, r, h, path, pattern, connect) {
			return MuxRedirect
		}
		return pattern
	}
}

// muxRedirects reports whether mux answers r, whose escaped path is path
// (canonical unless connect), with its trailing-slash redirect: mux found
// no exact match for path, which does not end in '/', and an exact one
// for path+"/", whose pattern ServeMux.Handler reported (h, pattern).
//
// A pattern matching a path has one segment per '/' (a trailing '/' and
// "{$}" are segments, as are literals, "{x}" and "{x...}"; its method and
// host hold none), and each consumes one of the path's segments at least
// but for a trailing "{x...}" or '/', which may consume the empty rest
// after a trailing slash: so the pattern of an exact match for path+"/"
// holds one '/' more than path, and any pattern matching path holds no
// more than path does.
//
// A CONNECT request's path is not cleaned, so it may hold empty and dot
// segments, which break that count. There the handler of the redirect is
// one made for r by http.RedirectHandler, a new one at each lookup, while
// a route's (which may be a RedirectHandler too) is the same each time.
func muxRedirects(mux *http.ServeMux, r *http.Request, h http.Handler, path, pattern string, connect bool) bool {
	if !connect {
		return strings.Count(pattern, "/") > strings.Count(path, "/")
	}
	if path == "" || strings.HasSuffix(path, "/") || reflect.TypeOf(h) != redirectType {
		return false
	}
	again, _ := mux.Handler(r) // h's type is comparable, a pointer
	return again != h
}

// redirectType is the type of the handlers of http.RedirectHandler,
// which ServeMux answers its redirects with.
var redirectType = reflect.TypeOf(http.RedirectHandler("/", http.StatusTemporaryRedirect))

// canonicalPath returns p as ServeMux routes it: rooted, without "." and
// ".." segments nor empty ones, a trailing '/' kept ("" becomes "/").
func canonicalPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	c := pathpkg.Clean(p)
	if c != "/" && strings.HasSuffix(p, "/") {
		c += "/"
	}
	return c
}

// ChiPattern returns a pattern function that asks chi's router r which
// route a request will take, for a middleware installed with r.Use on r
// itself, which runs before chi routes (r may be a sub-router, of r.Route
// or r.Mount: the pattern then starts with the mount's, as chi reports
// it once routed, "/api/users/{id}"), or wrapping r from outside
// (http.ListenAndServe(addr, m.Handler(r))):
//
//	r := chi.NewRouter()
//	r.Use(middleware.MustNew(store, policies,
//		middleware.WithPatternFunc(policy.ChiPattern(r))).Handler)
//
// It asks with the method and path chi routes by: the route context's
// RouteMethod when set (chi's middleware.GetHead routes a HEAD with no HEAD
// route as GET), its RoutePath when set (chi's middleware.StripSlashes and
// CleanPath rewrite it: /login/ and //login are served from "/login"),
// else the escaped path when the URL has one (/users/a%2Fb is served from
// "/users/{id}"), else the path, else "/" (an absolute-form request
// without a path, "GET http://host", is served from "/"); and it answers
// the pattern as chi's RoutePattern gives it once routed (Find's own
// answer keeps a trailing slash RoutePattern trims: "/api/" for the root
// of r.Route("/api")). A request for the path a sub-router is mounted at
// (/api and /api/ for r.Route("/api", ...)) is asked of the sub-router as
// chi routes it there, as "/" (Find stops at the mount and answers "/api"
// for any method): the sub-router's route ("/api", or "/api/*" for its
// "/*"), or none when chi answers 404 or 405. What r's routes say of a
// pattern (whether it is such a mount point) is read at its first lookup
// and kept: register the routes before serving, as chi requires.
// Asked another way, such requests would escape the route's policies. For
// the same reason install the limiter after every middleware that rewrites
// the path (r.Use(middleware.StripSlashes) before it). Asked after
// routing, by a handler of r or of a sub-router mounted in r (the
// middleware's Peek and Reset), it answers the route chi routed the
// request to. Each call costs a
// lookup in r, without allocating a route context: as for
// [ServeMuxPattern], one per request that a policy with routes meets, and
// one more in [Set.Prepare] for a route key or under an outer pattern.
//
//go:noinline
func ChiPattern(r chi.Routes) func(*http.Request) string {
	var mounts sync.Map // chiMountKey: *chiMount, see chiPastStubs
	return func(req *http.Request) string {
		method, path := req.Method, ""
		var above []string // the patterns matched so far
		reqRC := chi.RouteContext(req.Context())
		if reqRC != nil {
			if reqRC.RouteMethod != "" {
				method = reqRC.RouteMethod
			}
			path = reqRC.RoutePath
			above = reqRC.RoutePatterns
		}
		if path == "" {
			path = req.URL.RawPath
		}
		if path == "" {
			path = req.URL.Path
		}
		if path == "" {
			path = "/" // as chi routes it ("GET http://host HTTP/1.1")
		}
		rc := chiContexts.Get().(*chi.Context)
		defer chiContexts.Put(rc)
		rc.Reset()
		// r mounted in another router (r.Route, r.Mount): its route
		// comes after the mount's ("/api/*"), as RoutePattern joins them
		// once routed. Copied: the pooled context keeps no request's.
		rc.RoutePatterns = append(rc.RoutePatterns, above...)
		if r.Find(rc, method, path) == "" || !chiPastStubs(&mounts, r, rc, len(above), method) {
			// Asked from the top-level router chi keeps in the
			// context (r, unless r is a sub-router: its root is not
			// the request's, and the mount stub's "/x/" holding the
			// context may be a route "/x/" of r's own).
			top := r
			if reqRC != nil && reqRC.Routes != nil {
				top = reqRC.Routes
			}
			if len(above) > 0 && routedFrom(&mounts, top, rc, method, req, above) &&
				chiOnPath(&mounts, top, r, above) {
				// The request is routed from the root, into a
				// sub-router whose RoutePath chi set (r.Route,
				// r.Mount): a handler asking (Middleware.Peek, Reset)
				// after routing.
				return reqRC.RoutePattern()
			}
			return ""
		}
		if own := rc.RoutePatterns[len(above):]; len(own) <= len(above) &&
			slices.Equal(above[len(above)-len(own):], own) &&
			endsWith(reqRC.URLParams, rc.URLParams) &&
			(!emptyCatchAll(rc.URLParams) || routedAbove(&mounts, r, reqRC, req, method, len(above)-len(own))) {
			// r has routed the request already (a middleware of an
			// r.Group of r, after routing): its patterns are there,
			// and so are the parameters it found. (Before r routes,
			// the patterns may end with r's own by chance, the mount's
			// "/files/*" for r's route "/files/*", but the mount's
			// wildcard holds more of the path than r's, unless r's
			// holds nothing: chi's Mount empties the mount's before
			// the sub-router routes, and routedAbove tells.)
			return reqRC.RoutePattern()
		}
		return rc.RoutePattern()
	}
}

// chiPastStubs follows, in rc, the request chi's Find found a route for
// in r (its patterns from rc.RoutePatterns[at] on) past the stubs of a
// mount, and reports whether chi routes it to a route. chi's Mount
// registers the paths "/m" and "/m/" beside "/m/*" (for every method),
// to hand a request for the mount point itself to the sub-router, which
// routes it as "/": Find stops there and answers "/m" for any method,
// while chi serves the sub-router's "/" route (its pattern "/m/"), or its
// "/*" ("/m/*"), or answers 404 or 405 when it has none for the method.
// A route of r's own registered on the stub's path after the mount, for
// some methods (r.Get("/m") after r.Mount("/m", sub)), keeps them.
// mounts caches what r's routes say of each pattern (see chiMountOf).
func chiPastStubs(mounts *sync.Map, r chi.Routes, rc *chi.Context, at int, method string) bool {
	for {
		pats := rc.RoutePatterns
		if at >= len(pats) {
			return true
		}
		m := chiMountOf(mounts, r, pats[at])
		if at < len(pats)-1 {
			// A mount Find went through ("/api/*"): its sub-router
			// found the next pattern.
			if m.through == nil {
				return true
			}
			r, at = m.through, at+1
			continue
		}
		if m.stubOf == nil || slices.Contains(m.own, method) || slices.Contains(m.own, "*") {
			return true
		}
		if m.stubOf.Find(rc, method, "/") == "" {
			return false
		}
		r, at = m.stubOf, at+1
	}
}

// A chiMount is what a chi router's routes say of one of its patterns.
type chiMount struct {
	through chi.Routes // the sub-router mounted with the pattern ("/api/*"), or nil
	stubOf  chi.Routes // the sub-router the pattern is a stub of ("/api", "/api/"), or nil
	own     []string   // the methods of a route of the router's own on a stub's path
}

type chiMountKey struct {
	r       chi.Routes
	pattern string
}

// chiMountOf returns what r's routes say of pattern, a pattern of r
// (from mounts, once found: routes are registered before requests are
// served).
func chiMountOf(mounts *sync.Map, r chi.Routes, pattern string) *chiMount {
	key := chiMountKey{r, pattern}
	if m, ok := mounts.Load(key); ok {
		return m.(*chiMount)
	}
	mount := pattern + "/*"
	if strings.HasSuffix(pattern, "/") {
		mount = pattern + "*"
	}
	m := &chiMount{}
	for _, rt := range r.Routes() {
		switch rt.Pattern {
		case pattern:
			m.through = rt.SubRoutes
			for k := range rt.Handlers {
				m.own = append(m.own, k)
			}
		case mount:
			m.stubOf = rt.SubRoutes
		}
	}
	if m.through != nil || strings.HasSuffix(pattern, "*") {
		m.stubOf = nil
	}
	mounts.Store(key, m)
	return m
}

// emptyCatchAll reports whether the last URL parameter is a catch-all
// ("*") holding nothing, as the mount's is once chi's Mount has passed
// the request on to the sub-router.
func emptyCatchAll(ps chi.RouteParams) bool {
	n := len(ps.Keys)
	return n > 0 && n == len(ps.Values) && ps.Keys[n-1] == "*" && ps.Values[n-1] == ""
}

// routedAbove reports whether reqRC, the route context of req, holds the
// patterns of a request r has routed already, depth being the number of
// its patterns above r's own: routed from the top-level router chi put in
// reqRC (r itself when depth is 0), with req's method and its URL's path,
// the request takes the patterns reqRC holds. A request r has not routed
// yet, r being mounted, holds the mount's pattern in place of r's own.
// Without a top-level router in reqRC, it reports true.
func routedAbove(mounts *sync.Map, r chi.Routes, reqRC *chi.Context, req *http.Request, method string, depth int) bool {
	top := reqRC.Routes
	if top == nil || depth == 0 && same(top, r) {
		return true
	}
	path := req.URL.RawPath
	if path == "" {
		path = req.URL.Path
	}
	if path == "" {
		path = "/"
	}
	rc := chiContexts.Get().(*chi.Context)
	defer chiContexts.Put(rc)
	rc.Reset()
	return top.Find(rc, method, path) != "" && chiPastStubs(mounts, top, rc, 0, method) &&
		slices.Equal(rc.RoutePatterns, reqRC.RoutePatterns)
}

// chiOnPath reports whether chi's router r is one the request whose
// patterns chi's top-level router top matched (pats) went through: top,
// or a sub-router mounted along the way (past a mount "/api/*", or a
// mount point's stub "/api").
func chiOnPath(mounts *sync.Map, top, r chi.Routes, pats []string) bool {
	at := top
	for i, p := range pats {
		if same(at, r) {
			return true
		}
		if i == len(pats)-1 {
			break
		}
		switch m := chiMountOf(mounts, at, p); {
		case m.through != nil:
			at = m.through
		case m.stubOf != nil:
			at = m.stubOf
		default:
			return false
		}
	}
	return same(at, r)
}

// endsWith reports whether the URL parameters all end with tail's, keys
// and values.
func endsWith(all, tail chi.RouteParams) bool {
	n, k := len(all.Keys), len(tail.Keys)
	return k <= n && k == len(tail.Values) && n == len(all.Values) &&
		slices.Equal(all.Keys[n-k:], tail.Keys) && slices.Equal(all.Values[n-k:], tail.Values)
}

// routedFrom reports whether chi's router r, asked from its root with the
// request's method and its URL's path, routes req to the route chi has
// routed it to (above: its route context's patterns), past the stubs of
// a mount as chi routes it (see chiPastStubs: a mount point's stub, "/a",
// is no route). rc is a pooled context, reset here.
func routedFrom(mounts *sync.Map, r chi.Routes, rc *chi.Context, method string, req *http.Request, above []string) bool {
	path := req.URL.RawPath
	if path == "" {
		path = req.URL.Path
	}
	rc.Reset()
	return path != "" && r.Find(rc, method, path) != "" && chiPastStubs(mounts, r, rc, 0, method) &&
		slices.Equal(rc.RoutePatterns, above)
}

// chiPatternCode is the code of the functions ChiPattern returns, by
// which a Set knows that its pattern function answers chi's patterns
// (trailing slash trimmed: see WithRoutes) even for a request chi has not
// seen yet, around the whole router. ChiPattern is never inlined, so that
// every function it returns runs this one code.
var chiPatternCode = funcCode(ChiPattern(nil))

// muxPatternCode is the code of the functions ServeMuxPattern returns, by
// which a Set knows that its patterns are a ServeMux's, never chi's, even
// under a chi router that the mux is mounted in. ServeMuxPattern is never
// inlined, for the same reason as ChiPattern.
var muxPatternCode = funcCode(ServeMuxPattern(nil))

// chiRouted reports whether pattern, the route pattern found for r, is
// chi's, as a route written with a trailing slash matches it in chi's
// trimmed form (see WithRoutes): chi routes r (its route context is in
// r's), and pattern is not a ServeMux's that chi routed r to, mounted in
// it (r.Mount("/legacy", http.StripPrefix("/legacy", mux))), which reports
// its patterns as registered ("/x" and "/x/" are two routes there). A
// pattern with a method or a host ("GET /x") is a ServeMux's; one the
// router set as r.Pattern is chi's only if it is chi's RoutePattern, since
// chi sets r.Pattern so before calling the handler it routed to, and a
// ServeMux after it overwrites it with its own. Another pattern (the
// Set's pattern function's own) is taken for chi's.
func chiRouted(r *http.Request, pattern string) bool {
	rc := chi.RouteContext(r.Context())
	if rc == nil || !strings.HasPrefix(pattern, "/") {
		return false
	}
	return pattern != r.Pattern || chiRoutePatternIs(rc, pattern)
}

// chiRoutePatternIs reports whether rc.RoutePattern() is p, without
// joining the patterns into a string of their own: chi's RoutePattern
// joins them, replaces every "/*/" with "/" until none is left, and trims
// a trailing "//" and then "/" but from "/".
func chiRoutePatternIs(rc *chi.Context, p string) bool {
	var buf [128]byte
	b := buf[:0]
	for _, s := range rc.RoutePatterns {
		b = append(b, s...)
	}
	for {
		n, i := 0, 0
		for i < len(b) {
			if i+3 <= len(b) && b[i] == '/' && b[i+1] == '*' && b[i+2] == '/' {
				b[n] = '/'
				n, i = n+1, i+3
				continue
			}
			b[n] = b[i]
			n, i = n+1, i+1
		}
		if n == len(b) {
			break
		}
		b = b[:n]
	}
	if string(b) != "/" {
		b = bytes.TrimSuffix(b, []byte("//"))
		b = bytes.TrimSuffix(b, []byte("/"))
	}
	return string(b) == p
}

// funcCode returns the code f runs: the same for every closure of one
// function literal, whatever it captured.
func funcCode(f func(*http.Request) string) unsafe.Pointer {
	return *(*unsafe.Pointer)(*(*unsafe.Pointer)(unsafe.Pointer(&f)))
}

// chiContexts recycles the route contexts of ChiPattern's lookups
// (RoutePattern's answer is a string of its own).
var chiContexts = sync.Pool{New: func() any { return chi.NewRouteContext() }}

// sameFunc reports whether f and g are the same func value: the same
// closure object (or the same top-level function), which returns the same
// key for the same request. Distinct closures of one function literal are
// not the same; comparing them would need their captured state.
func sameFunc(f, g keyfunc.Func) bool {
	return *(*unsafe.Pointer)(unsafe.Pointer(&f)) == *(*unsafe.Pointer)(unsafe.Pointer(&g))
}
