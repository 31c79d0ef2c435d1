package policy

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/errlist"
	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// MaxNameLen is the longest policy name.
const MaxNameLen = 64

// A Policy is one named limit: an [algorithms.Spec], the [keyfunc.Func] that
// says whose allowance a request uses, and optionally a per-request cost and
// the requests it applies to (methods and route patterns).
//
// The name identifies the policy in the RateLimit and RateLimit-Policy
// headers and in 429 bodies. It also namespaces the policy's keys: the store
// sees "name:key", so the same client under two policies never shares state
// even when their Specs are equal. Conversely, one policy (or two with the
// same name and Spec) used by two middlewares on one store is one shared
// allowance: a per-user quota spanning several routes, say.
//
// A Policy is immutable once built and safe for concurrent use. Build one
// with [New] or a shorthand such as [PerMinute]; the zero Policy is not
// usable.
type Policy struct {
	name    string
	spec    algorithms.Spec
	key     keyfunc.Func
	cost    func(*http.Request) int64
	match   func(*http.Request) bool
	methods []string // upper case; empty means any
	routes  []route  // empty means any
	onKey   KeyAction
	countIf func(*http.Request, int) bool // nil: every admitted request counts
	// routeFallback: the key has a route part among the alternatives of a
	// keyfunc.FirstOf (a configuration's key with a fallback), so that
	// Set.Prepare hands it the route up front instead of on its
	// ErrNoRoute (which FirstOf returns: the key is not computed twice).
	routeFallback bool

	// chiRoutes: a route's path ends in '/', which chi trims from the
	// pattern it reports (see route.chiPath).
	chiRoutes bool

	// guard is the Spec a policy made by WithLimit at a lower limit also
	// counts each request under: that of the policy it was made from (the
	// zero Spec when there is none). See WithLimit.
	guard algorithms.Spec
	// carry holds the Specs given by WithGuard (the Specs reloads
	// replaced), first given first, the zero Spec past the last; copies
	// made by WithLimit keep each while it holds their capacity and their
	// limit is below its own, or while it is judged at their limit.
	carry [MaxCarries]algorithms.Spec
	// ownHeld: p's own Spec is a reload's replaced Spec (given to
	// WithGuard, which drops it as p's own), whose counters hold requests
	// counted before the reload: p keeps its own check beside its
	// guard's, unfolded (see folds).
	ownHeld bool
	// configured is the Spec of the policy WithLimit first made p from,
	// kept by the copies made from p (the zero Spec for a policy WithLimit
	// did not make): a cost above p's capacity but within that Spec's is
	// admissible once the limit is back (see Configured).
	configured algorithms.Spec

	capacity int64
	window   int64  // whole seconds, rounded up, at least 1
	member   string // `"name";q=10;w=1`, the RateLimit-Policy list member
	legacy   string // `10;w=1`, the draft-6/7 RateLimit-Policy member
}

// A route is one pattern a policy matches: an optional method and a path
// pattern as the router reports it.
type route struct {
	method string // "" means any
	path   string
	// chiPath is path as chi reports the pattern of a route registered
	// so: without a trailing slash, as chi's RoutePattern trims it
	// ("/login" for r.Post("/login/"), "/api" for the root of
	// r.Route("/api")).
	chiPath string
}

// chiReported returns a route path as chi's RoutePattern reports the
// pattern of a route registered with it: a trailing "//" or "/" trimmed,
// but for "/" itself.
func chiReported(path string) string {
	if path == "/" {
		return path
	}
	if t := strings.TrimSuffix(strings.TrimSuffix(path, "//"), "/"); t != "" {
		return t
	}
	return path
}

// A KeyAction says what happens to a request whose key a policy cannot
// extract (its [keyfunc.Func] returns an error, for example
// [keyfunc.ErrNoUser] on an anonymous request). No choice falls back to a
// shared bucket: the request is either rejected or not limited by that
// policy.
type KeyAction int

const (
	// RejectBadRequest rejects the request with 400 Bad Request, consuming
	// nothing from any policy. It is the default.
	RejectBadRequest KeyAction = iota
	// RejectForbidden rejects the request with 403 Forbidden, consuming
	// nothing from any policy.
	RejectForbidden
	// SkipPolicy evaluates the request without this policy: the other
	// applicable policies still decide, and the headers omit this one. Use
	// it for policies that only make sense when the part exists, such as a
	// per-user limit on a route that also serves anonymous clients.
	SkipPolicy
)

// String returns the name of the action.
func (a KeyAction) String() string {
	switch a {
	case RejectBadRequest:
		return "reject-400"
	case RejectForbidden:
		return "reject-403"
	case SkipPolicy:
		return "skip"
	}
	return "KeyAction(" + strconv.Itoa(int(a)) + ")"
}

// Status returns the HTTP status a rejecting action answers with, or 0 for
// SkipPolicy.
func (a KeyAction) Status() int {
	switch a {
	case RejectBadRequest:
		return http.StatusBadRequest
	case RejectForbidden:
		return http.StatusForbidden
	}
	return 0
}

// An Option configures a Policy at construction.
type Option func(*Policy) error

// WithCost sets the function that returns the cost of a request (the
// number of units it takes from the allowance); without it every request
// costs 1. A cost below 1 or above the policy's capacity makes the request
// fail with a *CostError (the middleware rejects it with 429 and no
// Retry-After, since it can never be admitted); but a cost above the
// capacity of a copy at a lowered limit ([Policy.WithLimit]) that the
// configured capacity holds ([Policy.Configured]) can be admitted once
// the limit is back: the policy denies the request ([Result.AboveLimit]),
// as it denies one it has no room for now.
func WithCost(cost func(*http.Request) int64) Option {
	return func(p *Policy) error {
		if cost == nil {
			return p.errorf("Cost", "is nil")
		}
		p.cost = cost
		return nil
	}
}

// CountIf makes the policy count only the admitted requests for which
// count(r, status) reports true, status being their response's: after the
// handler has answered, the middleware gives the units of the others back
// to the store (express-rate-limit's
// skipSuccessfulRequests and skipFailedRequests; see
// [algorithms.GiveBacker] for what comes back under each algorithm, and
// [Result.GiveBack]). status is the response's: the first final status the
// handler wrote, 200 when it wrote none, 500 when it panicked (even after
// writing one), 499 (nginx's "client closed request") when its client went
// away before it wrote one, and 101 when it took over the connection
// (http.Hijacker). [CountFailed] counts failed logins and lets successful
// ones go: the canonical use. The store must be an [algorithms.GiveBacker]
// (both of this module's are); the middleware refuses a CountIf policy
// over one that is not.
//
// The request is counted first, when it is decided, and given back only
// once its handler has returned, as express-rate-limit does. So while a
// request runs it counts: a burst of concurrent slow requests that will
// all succeed can be refused meanwhile, and the rate-limit headers sent
// with a response report the allowance with the request counted (except
// where they are still unsent when the units come back: see package
// middleware, "Counting only some responses"). Only a
// request the policies admitted is given back, never one shadow mode let
// through denied, and only the units of the policies whose count says no:
// the others, stacked with it, keep theirs.
//
// Under token_bucket and leaky_bucket a request gets back its cost, but
// no more than its Take's decision reckons the bucket's deficit then, less
// the refill since: the units of a request that does not count were the
// last of the deficit, so the units ahead of it, those of the requests that
// do, go on refilling while it runs (5 a minute counting failures,
// handlers of 2 s: four failures, then a minute of successes, leave 5
// units, as if the successes never came). That is exact when the
// key's give-backs come newest first (each handler's before the next
// request's Take, or at its very instant, as one client's requests one
// after the other are). A request given back after an older one of its
// key was (overlapping requests finishing out of order) gets back only
// what its own units have not refilled: the store keeps a note of the
// key's latest give-back, so that a give-back never takes units that came
// back already, and the key never admits more than the world without the
// requests that do not count; the refill of the deficit ahead of that
// request is lost while it ran. See [algorithms.GiveBacker]. The window
// kinds lose nothing so.
func CountIf(count func(r *http.Request, status int) bool) Option {
	return func(p *Policy) error {
		if count == nil {
			return p.errorf("CountIf", "is nil")
		}
		p.countIf = count
		return nil
	}
}

// CountFailed is a count for [CountIf] that counts the responses with a
// status of 400 or above (and so panics and requests whose client went
// away): a login policy under it limits failed attempts and never a user
// who signs in. express-rate-limit's skipSuccessfulRequests.
func CountFailed(_ *http.Request, status int) bool { return status >= 400 }

// CountSucceeded is a count for [CountIf] that counts the responses with a
// status below 400 (express-rate-limit's skipFailedRequests): a quota of
// work done, which failed requests do not use up.
func CountSucceeded(_ *http.Request, status int) bool { return status < 400 }

// Counts reports whether p counts a request r answered with status: always
// without [CountIf].
func (p *Policy) Counts(r *http.Request, status int) bool {
	return p.countIf == nil || p.countIf(r, status)
}

// CountsAll reports whether p counts every admitted request (it has no
// [CountIf]).
func (p *Policy) CountsAll() bool { return p.countIf == nil }

// WithMethods restricts the policy to requests with one of these methods
// (case-sensitive, as HTTP methods are; "POST", not "post", which is an
// error since such a policy would never apply; so are a wildcard, "*",
// "ANY" or "ALL", for which leave the methods out, and methods joined in
// one, "GET|POST", for which list each). "GET" also
// covers HEAD, which asks the same of the handler (as ServeMux routes HEAD
// to GET patterns), unless another policy of the [Set] whose methods name
// HEAD applies to the request. With
// [WithRoutes] too, a route on a method these exclude ("POST /login" under
// WithMethods("GET")) is an error: the policy would never apply there;
// and a route without a method is one on each of these methods, so that
// "GET" covers HEAD there as a GET route does (WithMethods("GET") with
// WithRoutes("/x") is WithRoutes("GET /x"): not a HEAD request the router
// sent to a HEAD pattern, nor one a HEAD route of the Set takes), and
// "HEAD" makes it a HEAD route, which takes HEAD from the Set's GET
// routes of its path as "HEAD /x" does (WithMethods("HEAD") with
// WithRoutes("/x")).
func WithMethods(methods ...string) Option {
	return func(p *Policy) error {
		if len(methods) == 0 {
			return p.errorf("Methods", "is empty")
		}
		var errs []error
		for _, m := range methods {
			if err := p.methodError(m); err != nil {
				errs = append(errs, err)
				continue
			}
			p.methods = append(p.methods, m)
		}
		return errlist.Join(errs)
	}
}

// methodError returns the *Error of m, a method given to WithMethods
// that no client sends, or nil.
func (p *Policy) methodError(m string) error {
	// Methods joined by characters a token does not hold ("GET, POST",
	// "GET POST", as a file's list is written in prose) are told so too.
	if ms := joinedMethods(m); ms != nil {
		return p.errorf("Methods", "%q joins several methods: list each (%s)", m, quoteList(ms, ""))
	}
	if !isToken(m) {
		return p.errorf("Methods", "%q is not a method token", m)
	}
	if wildcardMethod(m) {
		return p.errorf("Methods", "%q is no method a client sends: leave methods out for every method", m)
	}
	if up := miscased(m); up != "" {
		return p.errorf("Methods", "%q: methods are case-sensitive and clients send %q", m, up)
	}
	return nil
}

// WithRoutes restricts the policy to requests whose route pattern is one of
// patterns. A pattern is a path pattern exactly as the router reports it
// ("/users/{id}" for both chi and [http.ServeMux]), optionally preceded by a
// method and a space (or tabs, as ServeMux allows), in the Go 1.22 ServeMux
// style: "POST /login"; as in
// ServeMux, a GET route also matches HEAD requests, unless the router sent
// the request to an explicit HEAD pattern or a policy of the [Set] with a
// HEAD route for the path applies to the request. With chi, whose
// patterns carry no method, a HEAD request to a route registered with
// r.Head is under a "GET" route of the same path unless such a policy of
// the Set with that HEAD route applies to it too. The
// request's pattern comes from the Set's pattern function (see
// [WithPatternFunc]); a host and method in a ServeMux pattern are ignored
// when comparing paths. A route written with a trailing slash, as it was
// registered with chi ("POST /login/" for r.Post("/login/"), "GET /api/"
// for the root of r.Route("/api")), also matches the pattern chi reports
// for it, which lacks the slash ("/login", "/api"), when chi routes the
// request (its route context is in the request's, as for a middleware
// installed within chi) or the Set's pattern function is [ChiPattern]'s;
// under ServeMux, which reports patterns as they were registered,
// "/static/" and "/static" stay two routes, also for a ServeMux mounted
// in chi (r.Mount("/legacy", http.StripPrefix("/legacy", mux))): there
// the pattern is the mux's when it holds a method or a host, when it is
// the request's Pattern and that is not chi's (the mux set it), or when
// the Set's pattern function is [ServeMuxPattern]'s. So under chi the
// routes "/x" and "/x/" are one: chi registers them as two, but reports
// both as "/x", and a policy on either applies to the requests of both;
// two policies of a Set whose routes chi cannot tell apart so ("GET /x"
// in one, "GET /x/" in another) are an error of [NewSet] under
// [ChiPattern] (under another pattern function the Set cannot know that
// chi routes). Under ServeMux "/x/" is a subtree pattern: it takes /x/
// and every path under it (/x/y), and a request for /x, which no "/x"
// pattern takes, is redirected to /x/ (the redirect is no request of the
// route, which no policy of it applies to: the request that follows it
// is).
//
// A route that neither router can register is an error naming it, since
// the policy would silently never apply: its path must be a ServeMux one
// (segments of literals and whole-segment wildcards "{name}", a last
// "{name...}" or "{$}", names distinct Go identifiers; with a method
// other than CONNECT a clean path, as ServeMux cleans the request's) or a
// chi one (each '{' closed, "{key}" or "{key:regexp}" with a regexp that
// compiles, keys distinct, '*' last), and it may hold no blank nor control
// character outside a chi regexp's braces: "POST /login " and "/login
// POST" are errors (both routers end the method at the first blank; a
// space in a path is written %20); nor a query or a fragment there
// ("/search?q=1", "/docs#top": the routers match the path alone, which
// holds '?' and '#' only escaped); nor a rune that prints as nothing or as
// a blank (a non-breaking space, a zero-width one, a direction override)
// or a typographic double quote, which text pasted from a page brings
// along ("/login\u200b" looks like /login and matches no request for
// it). A segment written as express,
// httprouter and gin write a parameter (":id") is accepted: ServeMux and
// chi read it as literal text (write "{id}" for them), but a
// middleware.WithPatternFunc reading httprouter's, gin's or echo's
// pattern reports it so. A host ("example.com/login") is not
// accepted either, nor a method [WithMethods] refuses ("post /login",
// "ANY /login", "GET|POST /login").
//
// The route pattern is only known after routing. With [http.ServeMux] it is
// set before the mux calls the handler, so wrap the handler (or resolve the
// pattern with ServeMux.Handler, see [ServeMuxPattern]); around a mux
// mounted in another, the pattern before it routes is the outer mux's
// ("/api/"), under which its routes' policies never apply. With chi, install
// the middleware where chi has already routed: on the route with r.With, or
// with r.Use inside an r.Group (at the top or within r.Route). A middleware
// installed with r.Use on chi's top-level router runs before routing and
// sees no pattern, and one in the r.Use of r.Route's function or of a
// router given to r.Mount runs before that sub-router routes and sees only
// the mount's "/api/*", so their route-restricted policies never apply
// (and, that pattern being known, no request counts as unrouted, see
// [WithUnroutedFunc]), unless the pattern function asks the router for
// the route chi will take: [WithPatternFunc] with [ChiPattern](r), r
// being the router (top-level or mounted) whose r.Use installs it, which
// asks with the method and path chi routes by (a path rewritten by chi's
// StripSlashes or CleanPath, an escaped one) and answers the pattern as
// chi's RoutePattern gives it. The limiter must then come after every
// middleware that rewrites the path (r.Use(middleware.StripSlashes) before
// r.Use(m.Handler)).
func WithRoutes(patterns ...string) Option {
	return func(p *Policy) error {
		if len(patterns) == 0 {
			return p.errorf("Routes", "is empty")
		}
		var errs []error
		for _, pat := range patterns {
			rt, err := p.parseRoute(pat)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			p.chiRoutes = p.chiRoutes || rt.chiPath != rt.path
			p.routes = append(p.routes, rt)
		}
		return errlist.Join(errs)
	}
}

// parseRoute returns the route pat, a pattern given to WithRoutes, or
// the *Error saying why neither router can register it.
func (p *Policy) parseRoute(pat string) (route, error) {
	rt := route{path: pat}
	// A pattern starting with '/' is a path, even when a chi regexp in
	// it holds a space (as patternPath reads it).
	if i := strings.IndexAny(pat, blanks); i >= 0 && !strings.HasPrefix(pat, "/") {
		rt.method, rt.path = pat[:i], strings.TrimLeft(pat[i+1:], blanks)
		if !isToken(rt.method) {
			return rt, p.errorf("Routes", "%q: %q is not a method token", pat, rt.method)
		}
		// The route each advises to write is one that loads: its path's
		// own fault, if any, is told too (see mend).
		if wildcardMethod(rt.method) {
			if pathProblem("", rt.path) != "" {
				return rt, p.errorf("Routes", "%q: %q is no method a client sends: for every method, a route has none; %s", pat, rt.method, mend("", rt.path))
			}
			return rt, p.errorf("Routes", "%q: %q is no method a client sends: write the route without a method (%q) for every method", pat, rt.method, rt.path)
		}
		if ms := joinedMethods(rt.method); ms != nil {
			if pathProblem(ms[0], rt.path) != "" {
				return rt, p.errorf("Routes", "%q: %q joins several methods: one route for each (%s); %s", pat, rt.method, strings.Join(ms, ", "), mend(ms[0], rt.path))
			}
			return rt, p.errorf("Routes", "%q: %q joins several methods: write a route for each (%s)", pat, rt.method, quoteList(ms, " "+rt.path))
		}
		if up := miscased(rt.method); up != "" {
			return rt, p.errorf("Routes", "%q: methods are case-sensitive and clients send %q", pat, up)
		}
	}
	if !strings.HasPrefix(rt.path, "/") {
		return rt, p.errorf("Routes", "%q%s", pat, notAPath(rt.method, rt.path))
	}
	if reason := routePathError(rt.method, rt.path); reason != "" {
		return rt, p.errorf("Routes", "%q %s", pat, reason)
	}
	rt.chiPath = chiReported(rt.path)
	return rt, nil
}

// notAPath returns why path, the path of a route on method ("" for any),
// which does not start with '/', is refused: it names a host (a ServeMux
// pattern "example.com/login"), it is a URL, or it is no path.
func notAPath(method, path string) string {
	what, host := "", ""
	if scheme, rest, ok := strings.Cut(path, "://"); ok && scheme != "" && !strings.Contains(scheme, "/") {
		what, path = " is a URL", rest
		if i := strings.IndexByte(path, '/'); i >= 0 {
			path = path[i:]
		} else {
			path = "/"
		}
	} else if i := strings.IndexByte(path, '/'); i > 0 {
		host, path = path[:i], path[i:]
		what = " names a host (" + host + ")"
	} else {
		return ": the path must start with '/'"
	}
	return what + ": a route is a path alone, compared under any host; " + mend(method, path)
}

// WithMatch restricts the policy to requests for which match returns true,
// in addition to any methods and routes.
func WithMatch(match func(*http.Request) bool) Option {
	return func(p *Policy) error {
		if match == nil {
			return p.errorf("Match", "is nil")
		}
		p.match = match
		return nil
	}
}

// OnKeyError sets what happens to a request whose key the policy cannot
// extract; the default is [RejectBadRequest].
func OnKeyError(a KeyAction) Option {
	return func(p *Policy) error {
		if a < RejectBadRequest || a > SkipPolicy {
			return p.errorf("OnKeyError", "unknown action %d; want RejectBadRequest, RejectForbidden or SkipPolicy", int(a))
		}
		p.onKey = a
		return nil
	}
}

// routeBehindFallback marks a policy whose key has a route part among the
// alternatives of a keyfunc.FirstOf (see Policy.routeFallback).
func routeBehindFallback() Option {
	return func(p *Policy) error {
		p.routeFallback = true
		return nil
	}
}

// WithAlgorithm replaces the algorithm of the Spec (the shorthands such as
// [PerMinute] use [algorithms.SlidingWindow]).
func WithAlgorithm(k algorithms.Kind) Option {
	return func(p *Policy) error {
		p.spec.Algorithm = k
		return nil
	}
}

// WithBurst sets the capacity of a token_bucket or leaky_bucket policy.
// A burst equal to the limit is the default, and the policy's Spec reads
// 0 for it ([Policy.Spec]): a bucket is one Spec however it is written,
// so that a reload from one spelling to the other keeps its counters.
// (Versions before 2026-12-05 kept such a burst in the Spec, and keyed
// the counters by it: on a shared store, Redis, a policy written that
// way starts its clients afresh once on upgrade, and the two versions
// count apart while both run.)
func WithBurst(burst int64) Option {
	return func(p *Policy) error {
		p.spec.Burst = burst
		return nil
	}
}

// WithBuckets sets the number of sub-windows of a sliding_buckets policy
// (it must divide the window; see [algorithms.Spec]): the shorthands such as
// [PerMinute] with [WithAlgorithm](algorithms.SlidingBuckets) need it.
func WithBuckets(n int) Option {
	return func(p *Policy) error {
		p.spec.Buckets = n
		return nil
	}
}

// WithMaxDelay sets how long a leaky_queue policy may hold a request
// before passing it on ([algorithms.Spec].MaxDelay). Without it a
// leaky_queue holds none: it passes a request at once when its slot is
// due, and refuses any that would have to wait.
func WithMaxDelay(d time.Duration) Option {
	return func(p *Policy) error {
		p.spec.MaxDelay = d
		return nil
	}
}

// New returns a policy named name that limits requests by spec, keyed by
// key. Options are applied in order. The name must be 1 to [MaxNameLen]
// characters from A-Z, a-z, 0-9, '-', '_' and '.': it is sent in headers as
// a Structured Field string and used as the key namespace. The policy
// keeps spec in the one spelling that every Spec deciding as it does has
// ([Policy.Spec]).
//
// Every problem is reported as an *Error naming the policy and the field:
// every one that does not depend on another one reported, in the order
// New judges them (the name, the key, each option in order, the routes
// against the methods, the Spec's fields), several joined with
// [errors.Join], one per line, so that errors.As gives the first. A value
// judged against another (a route against the methods, a burst against
// the limit and window, buckets against the window, any of the three
// against the algorithm) is not judged when that one is refused.
func New(name string, spec algorithms.Spec, key keyfunc.Func, opts ...Option) (*Policy, error) {
	p := &Policy{name: name, spec: spec, key: key}
	var errs []error
	if err := validName(name); err != nil {
		errs = append(errs, p.errorf("Name", "%s", err))
	}
	if key == nil {
		errs = append(errs, p.errorf("Key", "is nil"))
	}
	methodsOK := true
	for i, opt := range opts {
		if opt == nil {
			errs = append(errs, p.errorf("Options", "hold a nil Option at index %d", i))
			continue
		}
		err := opt(p)
		if err == nil {
			continue
		}
		errs = appendErrors(errs, err)
		var pe *Error
		if errors.As(err, &pe) && pe.Field == "Methods" {
			methodsOK = false // the methods meant are not known
		}
	}
	if methodsOK {
		errs = appendErrors(errs, p.checkRouteMethods())
	}
	errs = append(errs, p.specErrors("Spec", p.spec)...)
	if len(errs) > 0 {
		return nil, errlist.Join(errs)
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	return p, nil
}

// checkRouteMethods reports each route of p on a method that p's methods
// exclude: a request has one method, so the policy would never apply
// there. (A HEAD request reaches both a GET route and a GET method.)
func (p *Policy) checkRouteMethods() error {
	if len(p.methods) == 0 {
		return nil
	}
	var errs []error
	for _, rt := range p.routes {
		if rt.method != "" && !containsMethod(p.methods, rt.method, true) &&
			!(rt.method == http.MethodGet && containsMethod(p.methods, http.MethodHead, true)) {
			errs = append(errs, p.errorf("Routes", "%q is on %s, which Methods %q exclude: the policy would never apply there", rt.method+" "+rt.path, rt.method, p.methods))
		}
	}
	return errlist.Join(errs)
}

// specErrors returns every problem of s, a Spec given to p as field
// ("Spec", "Guard"), each an *Error naming the Spec's field
// ("Spec.Limit"), in the order of [algorithms.Spec.Validate]; none when s
// is valid.
func (p *Policy) specErrors(field string, s algorithms.Spec) []error {
	errs := specErrors(s, specRefused{})
	for i, err := range errs {
		errs[i] = p.specError(field, err)
	}
	return errs
}

// specError returns err, an error of a Spec given to p as field ("Spec",
// "Guard"), as an *Error naming the Spec's field ("Spec.Limit").
func (p *Policy) specError(field string, err error) error {
	var se *algorithms.SpecError
	if errors.As(err, &se) {
		return p.errorf(field+"."+se.Field, "%s", se.Reason)
	}
	return p.errorf(field, "%s", err)
}

// finish validates p's Spec, reporting every problem of it (as New
// does), and derives the values headers report.
func (p *Policy) finish() error {
	if errs := p.specErrors("Spec", p.spec); len(errs) > 0 {
		return errlist.Join(errs)
	}
	p.spec = canonical(p.spec)
	p.capacity = p.spec.Capacity()
	p.window = ceilSeconds(p.spec.Window)
	if p.window < 1 {
		p.window = 1
	}
	p.member = `"` + p.name + `";q=` + strconv.FormatInt(p.capacity, 10) + ";w=" + strconv.FormatInt(p.window, 10)
	p.legacy = strconv.FormatInt(p.capacity, 10) + ";w=" + strconv.FormatInt(p.window, 10)
	return nil
}

// canonical returns s, a valid Spec, spelled as every Spec that decides
// as it does is: a token_bucket or leaky_bucket Burst equal to its Limit
// is 0, the default it equals. The stores key their state by Spec, so
// the two spellings of one bucket ("burst: 10" beside "limit: 10", or
// none) would keep two states of it, and a reload from one to the other
// would hand every client a fresh bucket. (Only a field's default has two
// spellings: two Specs that differ otherwise decide differently, or
// differ in what the headers report, or are of two kinds.)
func canonical(s algorithms.Spec) algorithms.Spec {
	if (s.Algorithm == algorithms.TokenBucket || s.Algorithm == algorithms.LeakyBucket) && s.Burst == s.Limit {
		s.Burst = 0
	}
	return s
}

// WithLimit returns a copy of p whose Spec allows limit per window instead
// of Spec.Limit; everything else (name, key, cost, methods, routes) is
// shared. A Burst set explicitly is scaled in proportion (rounded down, at
// least 1). p itself is unchanged; limit equal to Spec.Limit returns p.
// A limit below 1 is an error, and so is a copy's Spec that is invalid (a
// limit above [algorithms.MaxLimit], a Burst scaled past it): every
// problem of it, as [New] reports them.
// The adaptive and fleet controllers of package middleware/adaptive use it,
// through the middleware's SetLimit and SetLimitUnguarded (a copy without
// the guard, [Policy.Unguarded]).
//
// The stores key their state by Spec and key, so the copy's counters are
// not p's: under the copy alone, a client would start from a full
// allowance at the new level, and every change of level would hand it a
// fresh quota (a client that used its 100 per minute would get 80 more
// when the limit dropped to 80). So a copy at a lower limit is guarded
// ([Policy.Guard]): every request it decides is also checked and counted,
// in the same store call and all or nothing, under p's Spec, whose
// counters no change of level resets. A client is admitted then only
// when both allow it, and a request's decision reports the stricter of
// the two (see [Result.Decision]). For a window kind the guard's check
// alone decides (see below): the two are one check.
//
// How far the guard holds a client depends on the kind. The window kinds
// (fixed_window, sliding_window, sliding_log, sliding_buckets) count the
// requests whatever the limit, so the guard's state is judged at the
// copy's limit ([Policy.GuardLimit], [algorithms.Check.Limit]): within a
// window, a client never gets more than the limit in force, counting
// everything it used in that window at every level it went through. One
// that used 40 of 100 gets 10 more when the limit drops to 50 (none when
// it used 50 or more), and, having so used 50, 50 more when the limit is
// raised back to 100 in that window. The guard's state then holds every
// request the copy's own Spec's counters would (each request counted
// under the copy's Spec is counted under p's, all or nothing) and more,
// so that, judged at the copy's limit, it decides what both would: a
// [Result] checks such a copy once, under p's Spec judged at the copy's
// limit, as cheaply as an unlowered policy, and counts nothing under the
// copy's own Spec ([Result.Reset] forgets that state still). The bucket kinds (token_bucket, leaky_bucket, leaky_queue)
// keep a level that is a function of their rate (a bucket refilled at
// 100 a minute is not one refilled at 50), which cannot be judged at
// another: their guard is checked at p's limit, so that within one
// window a client never gets more than p's limit, however many levels it
// goes through, nor more than the new limit since the change (one that
// used 40 of 100 gets 50 more when the limit drops to 50): each request
// is checked twice, under the copy's Spec and under p's.
//
// A copy at a higher limit is guarded alike, and folded, when p's kind
// counts requests whatever the limit and its state can hold more than
// its limit's: fixed_window, sliding_window and sliding_buckets ([algorithms.Check.Limit]).
// One that used 100 of 100 gets 50 more when the limit is raised to 150,
// not 150. A sliding_log's log keeps the instants of no more than its
// limit's requests, and a bucket's level is a function of its rate: their
// copies at a higher limit have no guard, and start from a full
// allowance.
//
// A copy made from a copy keeps the first one's guard (the limit as
// configured), and a copy at the guard's limit has none (nor one at a
// higher limit, but for the kinds above); each guard given by
// [Policy.WithGuard] is kept beside it while the copy's limit is lower
// than its own and it holds the copy's capacity, or while it is judged
// at the copy's limit.
func (p *Policy) WithLimit(limit int64) (*Policy, error) {
	if limit == p.spec.Limit {
		return p, nil
	}
	if limit < 1 {
		return nil, p.errorf("Spec.Limit", "must be at least 1, not %d", limit)
	}
	q := *p
	if b := p.spec.Burst; b > 0 {
		q.spec.Burst = max(1, mulDiv(b, limit, p.spec.Limit))
	}
	q.spec.Limit = limit
	if err := q.finish(); err != nil {
		return nil, err
	}
	g := p.spec
	if p.guard.Algorithm != "" {
		g = p.guard
	}
	q.guard = algorithms.Spec{}
	if limit < g.Limit && q.capacity <= g.Capacity() || q.judged(g) != 0 {
		q.guard = g
	}
	q.ownHeld = false // a new Spec: only WithGuard tells its counters hold some
	if p.configured.Algorithm == "" {
		q.configured = p.spec
	}
	q.carry = [MaxCarries]algorithms.Spec{}
	n := 0
	for _, c := range p.carry {
		if c.Algorithm != "" && (limit < c.Limit && q.capacity <= c.Capacity() || q.judged(c) != 0) {
			q.carry[n] = c
			n++
		}
	}
	return &q, nil
}

// WithGuard returns a copy of p whose requests are also checked and
// counted under spec, as those of a policy lowered by [Policy.WithLimit]
// are under the Spec it was made from ([Policy.Guards]), beside the
// Specs given to p by WithGuard before: up to [MaxCarries] of them, in
// the order given (spec given already returns p; one more than
// MaxCarries is an error). Package middleware guards a policy a reload
// tightened (a lower limit, burst or rate, a longer window that holds
// the old one, finer buckets) with the Spec it replaced, for as long as
// that Spec's counters can hold requests counted before the reload, and
// a policy tightened again meanwhile with that Spec and the one the
// later reload replaced, each for its own time (see its SetPolicies). A spec that is p's
// Spec at a higher limit, of a window kind, is judged at p's limit, as a
// guard of WithLimit's is (a client that used 40 under the replaced 100
// gets 10 more at 50), as is one at a lower limit of fixed_window,
// sliding_window or sliding_buckets (a client that used 100 under the
// replaced 100 gets 10 more at 110); any other (a bucket kind's, or one
// of another window, algorithm or buckets) at its own
// ([Policy.GuardLimit]). A copy
// of it made by WithLimit keeps that guard (while its limit is below
// spec's and spec holds its capacity, or spec is judged at its limit)
// beside its own, judged at the copy's limit. spec must be valid and hold
// at least p's capacity (every cost p admits must fit it), unless it is
// judged at p's limit. A spec the
// policy's requests are already counted under (its own Spec, or the guard
// WithLimit gave it) is no guard: checked twice, a request would count
// twice in one state. The copy then has no more guards of WithGuard's
// (and loses spec from those it has); given its own Spec, a copy made by
// WithLimit keeps its own check beside its guard's instead of folding it
// into the guard's: that Spec's counters hold the requests of before the
// reload.
func (p *Policy) WithGuard(spec algorithms.Spec) (*Policy, error) {
	if errs := p.specErrors("Guard", spec); len(errs) > 0 {
		return nil, errlist.Join(errs)
	}
	spec = canonical(spec)
	if c := spec.Capacity(); c < p.capacity && p.judged(spec) == 0 {
		return nil, p.errorf("Guard", "holds %d, less than the policy's capacity %d", c, p.capacity)
	}
	q := *p
	if spec == p.spec || spec == p.guard {
		q.carry = [MaxCarries]algorithms.Spec{}
		n := 0
		for _, c := range p.carry {
			if c.Algorithm != "" && c != spec {
				q.carry[n] = c
				n++
			}
		}
		// Its own Spec's counters hold the requests of before the
		// reload: its own check must count them.
		q.ownHeld = q.ownHeld || spec == p.spec
		return &q, nil
	}
	for k, c := range p.carry {
		switch {
		case c == spec:
			return p, nil // given already
		case c.Algorithm == "":
			q.carry[k] = spec
			return &q, nil
		}
	}
	return nil, p.errorf("Guard", "has %d guards given by WithGuard already, the most a policy has", MaxCarries)
}

// Unguarded returns p without its guard (see [Policy.WithLimit]): a copy,
// or p itself when it has none. Its requests are counted under its own
// Spec alone, whose counters, at a limit new to them, start from a full
// allowance.
func (p *Policy) Unguarded() *Policy {
	if p.guard.Algorithm == "" && p.carry[0].Algorithm == "" {
		return p
	}
	q := *p
	q.guard, q.carry = algorithms.Spec{}, [MaxCarries]algorithms.Spec{}
	return &q
}

// MaxCarries is the most guards [Policy.WithGuard] gives a policy: the
// Specs of as many reloads, or of as many states of the policy a reload
// replaced (its configured Spec, the one of a lowered limit in force),
// whose counters hold its requests of before: three reloads of a policy
// held lower by SetLimit within a guard's time (package middleware), and
// with the Spec WithLimit guards with, [MaxGuards] checks beside the
// policy's own, eight in one store call.
const MaxCarries = 6

// MaxGuards is the most guards a policy has ([Policy.Guards]): the Spec
// a copy made by [Policy.WithLimit] was made from, and the MaxCarries
// given by [Policy.WithGuard].
const MaxGuards = 1 + MaxCarries

// Guard returns the first of the policy's guards ([Policy.Guards]), and
// true; the zero Spec and false for a policy without one.
func (p *Policy) Guard() (algorithms.Spec, bool) {
	if p.guard.Algorithm != "" {
		return p.guard, true
	}
	return p.carry[0], p.carry[0].Algorithm != ""
}

// Guards returns the Specs the policy also checks and counts every request
// under: for a policy made by [Policy.WithLimit] at a limit lower than the
// one it was made from (or higher, for fixed_window, sliding_window and
// sliding_buckets), that one's Spec (see WithLimit); then the Specs
// given by [Policy.WithGuard], to it or to the policy it was made from,
// in the order given: [MaxGuards] at most.
// It returns none for any other policy. A request is checked under each
// at the limit [Policy.GuardLimit] reports: the policy's own for a guard
// of its window kind and shape, the guard's own otherwise. The first
// guard of a copy made by WithLimit so judged stands for the policy's own
// check too: a [Result] checks the request once, under it.
func (p *Policy) Guards() []algorithms.Spec {
	gs, n := p.guardList()
	if n == 0 {
		return nil
	}
	return append([]algorithms.Spec(nil), gs[:n]...)
}

// guardList returns the policy's guards, as Guards does, in an array
// (no allocation), and their number.
func (p *Policy) guardList() (gs [MaxGuards]algorithms.Spec, n int) {
	if p.guard.Algorithm != "" {
		gs[n] = p.guard
		n++
	}
	for _, c := range p.carry {
		if c.Algorithm == "" {
			break
		}
		gs[n] = c
		n++
	}
	return gs, n
}

// GuardLimit returns the limit a request of the policy is judged at under
// g, one of its guards ([Policy.Guards]): the policy's own Spec.Limit when
// g is its Spec at a higher limit (the same algorithm, window and buckets)
// of a window kind ([algorithms.Kind.Windowed]: fixed_window,
// sliding_window, sliding_log, sliding_buckets), whose state counts the
// requests whatever the limit, or at a lower limit of fixed_window,
// sliding_window or sliding_buckets, whose state can count more than
// its limit's (a sliding_log's holds the instants of no more than its
// limit's requests); g.Limit for any other guard (a
// token_bucket, leaky_bucket or leaky_queue one, whose state is a
// function of its rate, or one of another shape given by
// [Policy.WithGuard]). The check under g is judged at it, on g's state
// ([algorithms.Check.Limit], 0 when it is g's own): see
// [Policy.WithLimit].
func (p *Policy) GuardLimit(g algorithms.Spec) int64 {
	if l := p.judged(g); l != 0 {
		return l
	}
	return g.Limit
}

// judged returns the [algorithms.Check.Limit] of the check of a request
// of p under its guard g (see GuardLimit): p's Spec.Limit when g is p's
// Spec at a higher limit of a window kind, or at a lower one of a kind
// that counts above it ([algorithms.Kind.Raisable]), and 0 (g's own limit) otherwise.
func (p *Policy) judged(g algorithms.Spec) int64 {
	if !g.Algorithm.Windowed() || g.Limit == p.spec.Limit || g.Limit < p.spec.Limit && !g.Algorithm.Raisable() {
		return 0
	}
	s := p.spec
	s.Limit = g.Limit
	if s != g {
		return 0 // another shape: its own limit
	}
	return p.spec.Limit
}

// guardCheck returns c, a check of p, made under its guard g: g's state,
// judged at the limit GuardLimit reports.
func (p *Policy) guardCheck(c algorithms.Check, g algorithms.Spec) algorithms.Check {
	c.Spec, c.Limit = g, p.judged(g)
	return c
}

// folds reports whether p's requests are decided by one check on its
// first guard's state, judged at p's limit, in place of the check under
// its own Spec and that guard's: p is a copy made by WithLimit at a lower
// limit whose guard is the Spec it was made from, of a window kind and
// the same shape (judged is not 0), or at a higher one of a kind that
// counts above its Spec's limit ([algorithms.Kind.Raisable]). That state counts every request the
// state under p's own Spec would count, and more (both are counted in
// each store call, all or nothing, and each request counted under p's
// Spec was counted under the guard's before the copy was made): judged
// at p's limit it is the stricter, and the check under p's Spec decides
// nothing. A reload's guard (a carry) is never folded: the policy's own
// state is the one it will keep once the carry ends. Nor is a copy whose
// own Spec is the Spec a reload replaced (ownHeld: the carry it dropped as
// its own): its counters hold the requests of before the reload, which
// the guard's do not, so it keeps both checks while the reload's carry
// stands (package middleware makes it anew without the carry after).
func (p *Policy) folds() bool {
	return p.guard.Algorithm != "" && !p.ownHeld && p.judged(p.guard) != 0
}

// nGuards returns the number of the policy's guards.
func (p *Policy) nGuards() int {
	n := 0
	if p.guard.Algorithm != "" {
		n++
	}
	for _, c := range p.carry {
		if c.Algorithm == "" {
			break
		}
		n++
	}
	return n
}

// mulDiv returns a*b/c rounded down, for positive a, b, c without overflow
// where the result fits.
func mulDiv(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(c))
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// Configured returns the Spec p was made from by [Policy.WithLimit] (by
// the first of the copies, for a copy made from a copy): the policy as
// configured, whose limit the middleware's SetLimit and
// SetLimitUnguarded, and package middleware/adaptive through them, set
// back. It returns p's own Spec for a policy WithLimit did not make.
//
// A request whose cost is above p's capacity but within that Spec's
// capacity (a limit lowered below the cost) is not out of range: it
// could be admitted once the limit is back, and [Set.Prepare] lets it
// through to [Result.Take], which denies it ([Result.AboveLimit]).
func (p *Policy) Configured() algorithms.Spec {
	if p.configured.Algorithm != "" {
		return p.configured
	}
	return p.spec
}

// Must returns p, and panics if err is not nil. It is meant for
// package-level variables and tests: Must(PerSecond("api", 10, key)).
func Must(p *Policy, err error) *Policy {
	if err != nil {
		panic(err)
	}
	return p
}

// Per returns a policy allowing limit requests per window under the sliding
// window counter (two integers per key, no boundary burst of 2·limit);
// choose another algorithm with [WithAlgorithm].
func Per(name string, limit int64, window time.Duration, key keyfunc.Func, opts ...Option) (*Policy, error) {
	spec := algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: limit, Window: window}
	return New(name, spec, key, opts...)
}

// PerSecond returns a policy allowing limit requests per second; see [Per].
func PerSecond(name string, limit int64, key keyfunc.Func, opts ...Option) (*Policy, error) {
	return Per(name, limit, time.Second, key, opts...)
}

// PerMinute returns a policy allowing limit requests per minute; see [Per].
func PerMinute(name string, limit int64, key keyfunc.Func, opts ...Option) (*Policy, error) {
	return Per(name, limit, time.Minute, key, opts...)
}

// PerHour returns a policy allowing limit requests per hour; see [Per].
func PerHour(name string, limit int64, key keyfunc.Func, opts ...Option) (*Policy, error) {
	return Per(name, limit, time.Hour, key, opts...)
}

// PerDay returns a policy allowing limit requests per day; see [Per].
func PerDay(name string, limit int64, key keyfunc.Func, opts ...Option) (*Policy, error) {
	return Per(name, limit, 24*time.Hour, key, opts...)
}

// Name returns the policy's name.
func (p *Policy) Name() string { return p.name }

// Spec returns the policy's Spec, in the one spelling of it that the
// policy counts under: a token_bucket or leaky_bucket Burst equal to its
// Limit reads 0, the default it equals (see [WithBurst]).
func (p *Policy) Spec() algorithms.Spec { return p.spec }

// Capacity returns the largest Remaining the policy reports (the q of
// RateLimit-Policy): [algorithms.Spec.Capacity].
func (p *Policy) Capacity() int64 { return p.capacity }

// WindowSeconds returns the policy's window in whole seconds, rounded up and
// at least 1 (the w of RateLimit-Policy).
func (p *Policy) WindowSeconds() int64 { return p.window }

// KeyAction returns what the policy does with a request whose key cannot be
// extracted.
func (p *Policy) KeyAction() KeyAction { return p.onKey }

// String returns the policy's RateLimit-Policy list member, such as
// `"per-minute";q=100;w=60`.
func (p *Policy) String() string { return p.member }

// Applies reports whether the policy applies to r, whose route pattern (as
// the router reports it; "" when unknown) is pattern. A policy on GET (by
// method or route) applies to HEAD too, as ServeMux routes HEAD to GET
// patterns, except, on its routes, to a request the router sent to an
// explicit HEAD pattern ("HEAD /x"). In a [Set], HEAD is also left to the Set's own
// HEAD entries: see [Set.Match]. A route written with a trailing slash
// matches chi's pattern without it when chi routes r and pattern is
// chi's, not that of a ServeMux mounted in chi (see [WithRoutes]).
func (p *Policy) Applies(r *http.Request, pattern string) bool {
	return p.applies(r, pattern, nil, p.chiRoutes && chiRouted(r, pattern), true, true)
}

// headRules are the HEAD route entries of a Set: the paths of routes
// naming HEAD. Set.Match decides a HEAD request under the policies holding
// HEAD entries first, whose GET routes leave HEAD to these paths; under
// the others, a GET route leaves HEAD only to a HEAD route whose policy
// applies to the request (and a method GET to a method HEAD alike).
type headRules struct {
	paths map[string]bool
	// chiPaths are the paths as chi reports them (route.chiPath), for
	// requests chi routes.
	chiPaths map[string]bool
}

// applies is Applies in a Set. byChi says that chi routes r (its pattern
// is chi's: a route's chiPath matches it). For a HEAD request: methodHead
// says whether a GET in p's methods covers it (no policy of the Set whose
// methods name HEAD applies to r); a GET route of p covers it if
// routeHead (no policy of the Set with a HEAD route on r's path applies
// to r) and h, the Set's HEAD route entries (nil for none), has none on
// r's path.
func (p *Policy) applies(r *http.Request, pattern string, h *headRules, byChi, methodHead, routeHead bool) bool {
	// viaGet: r is a HEAD request that p's methods admit only as they
	// admit GET; on p's routes it is then under the rule of a GET route
	// (WithMethods("GET") with WithRoutes("/x") says "GET /x").
	viaGet := false
	if len(p.methods) > 0 {
		if !containsMethod(p.methods, r.Method, methodHead) {
			return false
		}
		viaGet = r.Method == http.MethodHead && !slices.Contains(p.methods, http.MethodHead)
	}
	if len(p.routes) > 0 {
		path := patternPath(pattern)
		if path == "" {
			return false
		}
		// A GET route covers HEAD unless the router chose a HEAD pattern
		// or a HEAD route of the Set for the path takes it (routeHead;
		// h, among the policies holding HEAD entries).
		getHead := patternMethod(pattern) != http.MethodHead && routeHead &&
			(h == nil || !h.paths[path] && !(byChi && h.chiPaths[path]))
		ok := false
		for _, rt := range p.routes {
			if (rt.path == path || byChi && rt.chiPath == path) && routeMethod(rt.method, r.Method, getHead) &&
				(!viaGet || getHead || rt.method == r.Method) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return p.match == nil || p.match(r)
}

// onHead reports whether rt, a route of p, is on HEAD: it names HEAD, or
// it names no method and p's methods name HEAD (WithMethods("HEAD") with
// WithRoutes("/x") says "HEAD /x").
func (p *Policy) onHead(rt route) bool {
	return rt.method == http.MethodHead || rt.method == "" && slices.Contains(p.methods, http.MethodHead)
}

// headRouteOn reports whether p has a route on HEAD (see onHead) for
// path (as chi reports it when byChi).
func (p *Policy) headRouteOn(path string, byChi bool) bool {
	for _, rt := range p.routes {
		if p.onHead(rt) && (rt.path == path || byChi && rt.chiPath == path) {
			return true
		}
	}
	return false
}

// routeMethod reports whether a request with method matches a route's
// method: any method when the route names none, and, as in ServeMux
// patterns, HEAD for a GET route when getHead (ServeMux routes HEAD
// requests to GET patterns, whose handlers do the same work, unless a HEAD
// pattern is registered).
func routeMethod(route, method string, getHead bool) bool {
	return route == "" || route == method || getHead && route == http.MethodGet && method == http.MethodHead
}

// blanks separate the method of a ServeMux pattern from the rest, as
// ServeMux parses it: spaces and tabs, any number.
const blanks = " \t"

// patternMethod returns the method of a Go 1.22 ServeMux pattern
// ("HEAD /x"), or "" (chi patterns have none).
func patternMethod(pattern string) string {
	if i := strings.IndexAny(pattern, blanks); i > 0 && isToken(pattern[:i]) {
		return pattern[:i]
	}
	return ""
}

// addHeadRules returns h with p's HEAD route entries added (h itself is
// not written): the paths of its routes on HEAD (see onHead).
func (p *Policy) addHeadRules(h *headRules) *headRules {
	var heads []route
	for _, rt := range p.routes {
		if p.onHead(rt) {
			heads = append(heads, rt)
		}
	}
	if len(heads) == 0 {
		return h
	}
	n := &headRules{paths: map[string]bool{}, chiPaths: map[string]bool{}}
	if h != nil {
		maps.Copy(n.paths, h.paths)
		maps.Copy(n.chiPaths, h.chiPaths)
	}
	for _, rt := range heads {
		n.paths[rt.path] = true
		n.chiPaths[rt.chiPath] = true
	}
	return n
}

// needsPattern reports whether Applies reads the route pattern.
func (p *Policy) needsPattern() bool { return len(p.routes) > 0 }

// Routed reports whether p applies only on some routes ([WithRoutes]).
func (p *Policy) Routed() bool { return p.needsPattern() }

// Routes returns the routes p is restricted to ([WithRoutes]), in order,
// each as "METHOD /path" or "/path" (one blank after a method); nil for
// none.
func (p *Policy) Routes() []string {
	var out []string
	for _, rt := range p.routes {
		if rt.method != "" {
			out = append(out, rt.method+" "+rt.path)
		} else {
			out = append(out, rt.path)
		}
	}
	return out
}

// Methods returns the methods p is restricted to ([WithMethods]), in
// order; nil for any.
func (p *Policy) Methods() []string { return slices.Clone(p.methods) }

// Key returns the key function p was built with.
func (p *Policy) Key() keyfunc.Func { return p.key }

// patternPath returns the path of a route pattern: a Go 1.22 ServeMux
// pattern "[METHOD ][HOST]/path" loses its method and host.
func patternPath(pattern string) string {
	if strings.HasPrefix(pattern, "/") {
		return pattern // a path already (a chi regexp may hold a space)
	}
	if i := strings.IndexAny(pattern, blanks); i >= 0 {
		pattern = strings.TrimLeft(pattern[i+1:], blanks)
	}
	if i := strings.IndexByte(pattern, '/'); i > 0 {
		pattern = pattern[i:]
	}
	return pattern
}

// containsMethod reports whether a request with method matches one of
// methods (see routeMethod: GET covers HEAD when getHead).
func containsMethod(methods []string, method string, getHead bool) bool {
	for _, m := range methods {
		if routeMethod(m, method, getHead) {
			return true
		}
	}
	return false
}

// ceilSeconds returns d in whole seconds, rounded up.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

func validName(name string) error {
	if name == "" {
		return errors.New("is empty")
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("is longer than %d bytes", MaxNameLen)
	}
	for i := 0; i < len(name); i++ {
		if !nameChar(name[i]) {
			return fmt.Errorf("%q contains %s; use A-Z, a-z, 0-9, '-', '_' and '.'", name, quoteCharAt(name, i))
		}
	}
	return nil
}

// quoteCharAt quotes the character of s that starts at byte i, as the
// file has it: the whole of a multi-byte UTF-8 sequence, or the byte
// (escaped) where s is not UTF-8.
func quoteCharAt(s string, i int) string {
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && size <= 1 {
		return fmt.Sprintf(`'\x%02x'`, s[i])
	}
	return strconv.QuoteRune(r)
}

func nameChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.'
}

// miscased returns the standard method (RFC 9110 and PATCH) that m spells
// in another case, such as "POST" for "post", or "". A policy on "post"
// would never apply: methods are case-sensitive, and clients, ServeMux and
// chi all use the upper-case names.
func miscased(m string) string {
	if up := strings.ToUpper(m); up != m && standardMethod(up) {
		return up
	}
	return ""
}

// standardMethod reports whether m is a method of RFC 9110 or PATCH.
func standardMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}

// wildcardMethod reports whether m, in any case, is a wildcard of other
// tools ("*" in CORS's Access-Control-Allow-Methods, ANY in API gateways
// and routers, ALL): no client sends it, so a policy on it would never
// apply.
func wildcardMethod(m string) bool {
	switch strings.ToUpper(m) {
	case "*", "ANY", "ALL":
		return true
	}
	return false
}

// joinedMethods returns the standard methods (RFC 9110 and PATCH) that m
// joins with a character other than a letter, a digit, '-' or '_'
// ("GET|POST", "get+post"), in upper case; nil when m is not two or more
// of them so joined. No client sends such a method: a policy on it would
// never apply.
func joinedMethods(m string) []string {
	parts := strings.FieldsFunc(m, func(c rune) bool {
		return !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_')
	})
	if len(parts) < 2 {
		return nil
	}
	for i, part := range parts {
		if parts[i] = strings.ToUpper(part); !standardMethod(parts[i]) {
			return nil
		}
	}
	return parts
}

// quoteList writes each of words with suffix, quoted, separated by ", ".
func quoteList(words []string, suffix string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = strconv.Quote(w + suffix)
	}
	return strings.Join(q, ", ")
}

// isToken reports whether s is an RFC 9110 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if nameChar(c) {
			continue
		}
		if !strings.ContainsRune("!#$%&'*+^`|~", rune(c)) {
			return false
		}
	}
	return true
}
