package middleware

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/ratekeeper/ratekeeper/internal/errlist"
	"github.com/ratekeeper/ratekeeper/internal/errtext"
	"github.com/ratekeeper/ratekeeper/policy"
)

// ErrUnknownRoute is wrapped by the error [Middleware.CheckRoutes] returns
// for each route of a policy ([policy.WithRoutes]) that the router has no
// route for: the policy would never apply there, silently (a typo, "POST
// /logn" for "POST /login"; a wildcard named otherwise, "/api/{id}" for
// chi's "/api/{ID}"; a method the route is not registered with).
var ErrUnknownRoute = errors.New("middleware: a policy's route matches no route of the router")

// ErrIndistinctRoutes is wrapped by the error [Middleware.CheckRoutes]
// returns for each two policies whose routes differ only by a trailing
// slash ("GET /x" in one, "GET /x/" in another, on methods that meet)
// when the router reports both as one route: chi routes a request for
// /x/ to its route "/x/" but reports that route's pattern as "/x", so
// each policy applies to the requests of both routes (with 100/min on
// "/x" and 5/min on "/x/", the 5/min applies to /x too, silently). Both
// routes exist: the error does not wrap [ErrUnknownRoute]. A ServeMux,
// for which "/x" and "/x/" are two routes, never gets it, nor does one
// policy holding both routes.
var ErrIndistinctRoutes = errors.New("middleware: two policies' routes are one route to the router")

// probeMethods are the methods a route without one is looked up with
// (with those the policies name): RFC 9110's and PATCH.
var probeMethods = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace,
}

// CheckRoutes checks the routes of the middleware's policies
// ([policy.WithRoutes]) against the router's, and returns an error
// wrapping [ErrUnknownRoute] for each one under which the policy would
// never apply, since the router routes no request there (joined with
// [errors.Join]), and one wrapping [ErrIndistinctRoutes] for each two
// policies' routes the router reports as one (below); nil when every
// route is one the router has, and none is another's so. Call it
// once the routes are registered, before serving: it catches at start-up
// the typo that would otherwise leave, say, a stricter login limit
// silently absent. The routes of the policies in force are checked (call
// it again after [Middleware.SetPolicies]; for a reload, check the new
// configuration before it is applied, with [Middleware.CheckConfigRoutes]).
//
// pattern is the router's pattern function: [policy.ServeMuxPattern](mux)
// for a ServeMux (the one whose patterns the policies name, mounted in
// another or not), [policy.ChiPattern](r) for a chi router, r the
// top-level one; nil means the middleware's own ([WithPatternFunc]), and
// is an error without one, as is [policy.RoutePattern], which asks no
// router. A chi sub-router (r.Route, r.Mount) knows not where it is
// mounted: for a middleware in its r.Use, with its ChiPattern, give the
// top-level router's, which finds "/api/users/{id}" as chi reports it to
// the middleware (the error says so when the sub-router has the path
// without its first segments). It is asked, as the middleware asks it for
// a request, which route requests built from each policy route take:
//
//   - the method: the route's; for a route without one, the policy's
//     methods ([policy.WithMethods]), or else each of GET, HEAD, POST,
//     PUT, PATCH, DELETE, CONNECT, OPTIONS, TRACE and the methods any
//     policy of the middleware names;
//   - the path: the route's, as a request line holding it is read (an
//     escape such as "%20" decoded, as in a request for /a%20b), each
//     wildcard replaced by its own text
//     ("/api/{id}" is asked as the path /api/{id}, which only a
//     wildcard segment of either router matches, never a literal one), a
//     chi wildcard with a regexp by a few short values it matches
//     ("{n:[0-9]+}" by "0", "1" and "2", as a literal route "/n/0" beside
//     it takes the first), "{$}" by nothing; a path ending in
//     "{name...}", chi's '*' or '/' is asked with none, one and two
//     segments after it (and one ending in '/' without it too, but from a
//     ServeMux: a route "/login/" matches chi's "/login"), and another
//     path with a trailing slash too (chi reports its route "/login/" as
//     "/login", which a route "/login" matches).
//
// A route is reported when none of those requests is one the policy
// applies to, judged as the middleware judges requests ([policy.Set]:
// the route pattern the function answers compared with the policy's
// route, a trailing slash as chi reports it): the error names the policy,
// the route, and where the router sends the request built from it (to no
// route, its 404 or 405, or to the route it found: "GET /api/{ID}" for
// a route written "GET /api/{id}", the wildcard's name differing), and,
// for a request routed nowhere whose path the router has on another
// method, where it sends the path on that one ("GET /login" reported
// with the router's "POST /login"). A route, path or router pattern
// longer than 64 characters is quoted cut to its first 48, marked with
// its length (`"/aaaa"… (100001 bytes)`), not whole, and so is a
// method as long. The
// policy's other restrictions ([policy.WithMatch]) are not asked: they
// choose among the requests of a route that exists. A route on HEAD that
// chi has on GET alone is reported, as chi answers HEAD there 405 unless
// its GetHead middleware routes it as GET, which the check cannot see
// (the error says to write the route on GET, which covers HEAD).
//
// Two policies whose routes differ only by a trailing slash, one's
// "GET /x" and another's "GET /x/" on methods that meet (a route
// without a method meets every one, or its policy's
// [policy.WithMethods]; GET meets HEAD), are reported, with an error
// wrapping [ErrIndistinctRoutes] naming both policies and routes, when
// the router routes the request built from the one with the slash (GET
// /x/) to the other's pattern ("/x"): chi does (it reports its route
// "/x/" as "/x"), so each policy would apply to the requests of both
// routes, each limit on both, silently, wherever the middleware is
// installed after chi routes (r.With, r.Group, a sub-router's r.Use). The router is asked, whatever
// the pattern function (under ServeMuxPattern it is not: a ServeMux
// reports "/x" and "/x/" as two routes). One policy holding both routes
// is no such error; under [policy.ChiPattern] as the middleware's own
// pattern function ([WithPatternFunc]) the pair is already refused when
// the policies are set ([policy.NewSet]).
//
// No route of the router is reported as missing a policy, and a route
// the router has is never reported as unknown. A route is not checked (nor
// reported) when a request cannot be built for it: a chi regexp whose
// values this cannot write (one with lookarounds, say). The requests
// carry no Host: a ServeMux route registered only under a host
// ("api.example.com/login") is not found (the error says so); give a
// pattern function that sets r.Host before asking the mux. They carry
// no router's context either: with a pattern function of your own
// (neither ChiPattern's nor ServeMuxPattern's), which may be asking
// chi, a route "/login/" for which it answers "/login" is taken for
// chi's, as the middleware takes it for a request chi routes. A panic
// of the pattern function (one of a nil router's, say) is returned as
// an error naming the route and the request asked. The lookups serve no
// request: no handler runs, and nothing is counted.
func (m *Middleware) CheckRoutes(pattern func(*http.Request) string) error {
	return m.checkRoutes("CheckRoutes", m.set.Load().Policies(), pattern)
}

// CheckConfigRoutes checks the routes of the policies of cfg, a
// configuration not applied yet, as [Middleware.CheckRoutes] checks
// those in force, and returns the same errors (each wrapping
// [ErrUnknownRoute] or [ErrIndistinctRoutes]), or nil. It changes
// nothing: the hook for a reloader's check before it applies a new
// configuration, so that a reload naming a route the router does not
// have is refused as a file that does not load is, the rules in force
// kept (a typo, "POST /logn", would otherwise drop the limit the policy
// was meant to set):
//
//	w, err := reload.New(path, m.ApplyConfig, reload.InForce(cfg),
//		reload.WithCheck(func(c *policy.Config) error { return m.CheckConfigRoutes(c, nil) }))
//
// pattern is as for CheckRoutes (nil: the middleware's own).
func (m *Middleware) CheckConfigRoutes(cfg *policy.Config, pattern func(*http.Request) string) error {
	if cfg == nil {
		return errors.New("middleware: CheckConfigRoutes: config is nil")
	}
	return m.checkRoutes("CheckConfigRoutes", cfg.Policies, pattern)
}

// checkRoutes is CheckRoutes for the policies ps; call names the method
// in its errors about the pattern function.
func (m *Middleware) checkRoutes(call string, ps []*policy.Policy, pattern func(*http.Request) string) error {
	if pattern == nil {
		pattern = m.pattern
	}
	if pattern == nil {
		return fmt.Errorf("middleware: %s: no pattern function (give policy.ServeMuxPattern(mux) or policy.ChiPattern(r), or build the middleware WithPatternFunc)", call)
	}
	kind := kindOf(pattern)
	if kind == routePattern {
		return fmt.Errorf("middleware: %s: policy.RoutePattern reads the route a router has set on a request it routed, and the requests %s asks about are routed by none: give the router's pattern function (policy.ServeMuxPattern(mux), policy.ChiPattern(r))", call, call)
	}
	methods := slices.Clone(probeMethods)
	for _, p := range ps {
		if p == nil {
			continue
		}
		named := p.Methods()
		for _, rt := range p.Routes() {
			// "METHOD /path"; a route starting with '/' names none,
			// though a chi regexp in it may hold a blank.
			if m, _, ok := strings.Cut(rt, " "); ok && !strings.HasPrefix(rt, "/") {
				named = append(named, m)
			}
		}
		for _, m := range named {
			if !slices.Contains(methods, m) {
				methods = append(methods, m)
			}
		}
	}
	var errs []error
	for _, p := range ps {
		if p == nil {
			continue
		}
		for _, rt := range p.Routes() {
			if err := checkRoute(call, p, rt, pattern, kind, methods); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if kind != muxPattern {
		errs = append(errs, slashTwins(call, ps, pattern, methods)...)
	}
	return errlist.Join(errs)
}

// slashTwins returns an error wrapping ErrIndistinctRoutes for each route
// of a policy ending in '/' ("GET /x/") beside another policy's route
// with the path without it ("GET /x") on a method both take, when the
// router routes a request built from the first to the pattern of the
// second (chi's "/x"): each policy then applies to the requests of both
// routes. methods are those a route without one may take, when its
// policy names none. The router is asked, not told: a ServeMux answers
// "/x/", and a function of the user's own asking chi answers "/x". A
// panic of the pattern function is returned as an error naming the
// request it was asked for, once per route. call names the method in
// that error.
func slashTwins(call string, ps []*policy.Policy, pattern func(*http.Request) string, methods []string) []error {
	var errs []error
	for i, p := range ps {
		if p == nil {
			continue
		}
	routes:
		for _, a := range p.Routes() {
			am, apath := splitRoute(a)
			trimmed := strings.TrimSuffix(apath, "/")
			if trimmed == apath || trimmed == "" {
				continue
			}
			paths, ok := probePathsWith(apath, 0)
			if !ok {
				continue
			}
			for j, q := range ps {
				if j == i || q == nil || q.Name() == p.Name() {
					continue
				}
				for _, b := range q.Routes() {
					bm, bpath := splitRoute(b)
					if bpath != trimmed {
						continue
					}
					for _, m := range methods {
						if !takesMethod(p, am, m) || !takesMethod(q, bm, m) {
							continue
						}
						to, err := askPattern(call, p, a, pattern, m, paths[0])
						if err != nil {
							errs = append(errs, err)
							continue routes
						}
						if to == trimmed {
							errs = append(errs, fmt.Errorf("%w: policy %q, route %s, and policy %q, route %s: the router routes %s %s to %s, the pattern of the route %s too, so each policy applies to the requests of both routes; write one route for them (chi cannot tell them apart), or give them paths that differ otherwise",
								ErrIndistinctRoutes, p.Name(), errtext.Quote(a), q.Name(), errtext.Quote(b), errtext.Cut(m), errtext.Cut(paths[0]), errtext.Quote(to), errtext.Quote(bpath)))
							break
						}
					}
				}
			}
		}
	}
	return errs
}

// splitRoute returns the method (or "") and the path of rt, a route of
// policy.WithRoutes.
func splitRoute(rt string) (method, path string) {
	if strings.HasPrefix(rt, "/") {
		return "", rt
	}
	method, path, _ = strings.Cut(rt, " ")
	return method, path
}

// takesMethod reports whether a route of p with method rm ("" for none)
// applies to requests with method m: its method, else p's methods, else
// every method; a route on GET takes HEAD too.
func takesMethod(p *policy.Policy, rm, m string) bool {
	ms := p.Methods()
	if rm != "" {
		ms = []string{rm}
	}
	return len(ms) == 0 || slices.Contains(ms, m) || m == http.MethodHead && slices.Contains(ms, http.MethodGet)
}

// askPattern returns pattern's answer for a request with method m for
// path, or an error naming the policy p's route rt and the request when
// pattern panics.
func askPattern(call string, p *policy.Policy, rt string, pattern func(*http.Request) string, m, path string) (to string, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("middleware: %s: policy %q, route %s: the pattern function panicked on %s: %v", call, p.Name(), errtext.Quote(rt), errtext.Cut(m+" "+path), v)
		}
	}()
	return pattern(probeRequest(m, path)), nil
}

// patternKind tells the pattern functions of package policy apart from
// a user's own: a Set knows ChiPattern's answers for chi's (a route
// "/login/" matching chi's "/login") and ServeMuxPattern's for a mux's,
// even for a request that carries no router's context, as the requests
// CheckRoutes builds do not.
type patternKind int

const (
	ownPattern   patternKind = iota // a user's function: chi's or not, by the request
	chiPattern                      // policy.ChiPattern's
	muxPattern                      // policy.ServeMuxPattern's
	routePattern                    // policy.RoutePattern, which asks no router
)

// kindOf returns the kind of pattern, by its code (that of every
// function ChiPattern, or ServeMuxPattern, returns).
func kindOf(pattern func(*http.Request) string) patternKind {
	pc := reflect.ValueOf(pattern).Pointer()
	switch pc {
	case reflect.ValueOf(policy.ChiPattern(nil)).Pointer():
		return chiPattern
	case reflect.ValueOf(policy.ServeMuxPattern(nil)).Pointer():
		return muxPattern
	case reflect.ValueOf(policy.RoutePattern).Pointer():
		return routePattern
	}
	return ownPattern
}

// checkRoute returns the error of CheckRoutes for rt, a route of p, or
// nil when a request built from it is one p, restricted to rt alone,
// applies to under pattern. methods are those a route without one is
// asked with, when p names none. A panic of the pattern function is
// returned as an error naming the request it was asked for. call names
// the method in the errors that do not wrap ErrUnknownRoute.
func checkRoute(call string, p *policy.Policy, rt string, pattern func(*http.Request) string, kind patternKind, methods []string) (err error) {
	method, path := "", rt
	if !strings.HasPrefix(rt, "/") {
		method, path, _ = strings.Cut(rt, " ")
	}
	var opts []policy.Option
	if ms := p.Methods(); len(ms) > 0 {
		opts = append(opts, policy.WithMethods(ms...))
		if method == "" {
			methods = ms
		}
	}
	if method != "" {
		methods = []string{method}
	}
	one, err := policy.New(p.Name(), p.Spec(), p.Key(), append(opts, policy.WithRoutes(rt))...)
	if err != nil {
		return fmt.Errorf("middleware: %s: policy %q, route %s: %w", call, p.Name(), errtext.Quote(rt), err)
	}
	set, err := policy.NewSet([]*policy.Policy{one}, policy.WithPatternFunc(pattern))
	if err != nil {
		return fmt.Errorf("middleware: %s: policy %q, route %s: %w", call, p.Name(), errtext.Quote(rt), err)
	}
	paths, ok := probePaths(path)
	if !ok {
		return nil // no request can be built: not checked
	}
	var asked string // the request being asked about, for a panic
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("middleware: %s: policy %q, route %s: the pattern function panicked on %s: %v", call, p.Name(), errtext.Quote(rt), errtext.Cut(asked), v)
		}
	}()
	// A route ending in '/' is chi's route without it ("/login/" matches
	// chi's "/login", see policy.WithRoutes): the Set says so of
	// ChiPattern's answers; a function of the user's own may be asking
	// chi, which only the request served tells, so its answer of the
	// path without the slash, as chi gives it, is taken for chi's.
	trimmed := ""
	if t := strings.TrimSuffix(path, "/"); t != path && t != "" && !strings.ContainsAny(t, "{*") {
		trimmed = t
	}
	var sent string // where the first request the router routed went
	for _, m := range methods {
		for _, pa := range paths {
			asked = m + " " + pa
			if set.Match(probeRequest(m, pa)) != 0 {
				return nil
			}
			if to := pattern(probeRequest(m, pa)); to != "" && sent == "" {
				sent = fmt.Sprintf("routes %s %s to %s", errtext.Cut(m), errtext.Cut(pa), errtext.Quote(to))
			}
		}
		if trimmed != "" && kind != muxPattern {
			asked = m + " " + trimmed
			if set.Match(probeRequest(m, trimmed)) != 0 {
				return nil
			}
			if kind == ownPattern && pattern(probeRequest(m, trimmed)) == trimmed {
				return nil
			}
		}
	}
	if sent == "" {
		sent = fmt.Sprintf("routes %s to no route", errtext.Cut(paths[0]))
		if len(methods) == 1 {
			sent = fmt.Sprintf("routes %s %s to no route", errtext.Cut(methods[0]), errtext.Cut(paths[0]))
		} else {
			cut := make([]string, len(methods))
			for i, m := range methods {
				cut[i] = errtext.Cut(m)
			}
			sent += " for any of " + strings.Join(cut, ", ")
		}
		sent += noRouteHint(pattern, kind, methods, paths[0], path)
	}
	return fmt.Errorf("%w: policy %q, route %s: the router %s, so the policy never applies there", ErrUnknownRoute, p.Name(), errtext.Quote(rt), sent)
}

// noRouteHint returns what the report of a route that the pattern
// function routes nowhere adds, in parentheses, for a case where the
// route may be right all the same, or "": methods and path are those of
// the requests asked (path the first of probePaths, for the route's
// path routePath).
//
//   - The router has the path on another method (of RFC 9110's and
//     PATCH): a route "GET /login" where the router has "POST /login"
//     (a ServeMux answers 405 there). Said in place of the next.
//   - ServeMux: the requests carry no Host, and a route registered under
//     one is not found.
//   - A router (a chi sub-router) that knows the path without its first
//     segments: it may be mounted there, and knows not where; the
//     top-level router's pattern function does.
//   - HEAD on a route chi has on GET: chi routes HEAD there only under
//     its GetHead middleware, and a GET route covers HEAD.
func noRouteHint(pattern func(*http.Request) string, kind patternKind, methods []string, path, routePath string) string {
	other := ""
	for _, m := range probeMethods {
		if slices.Contains(methods, m) {
			continue
		}
		if to := pattern(probeRequest(m, path)); to != "" && to != policy.MuxRedirect {
			other = fmt.Sprintf(" (but %s %s to %s: the router has the path on other methods than those the policy's route is on, by its method or the policy's methods; put the route on a method the router has it on)", m, errtext.Cut(path), errtext.Quote(to))
			break
		}
	}
	if kind == muxPattern {
		if other != "" {
			return other
		}
		return " (asked without a Host: if the mux has the route under one, \"example.com/login\", give a pattern function that sets r.Host first)"
	}
	for i := 1; i < len(path); i++ {
		if path[i] != '/' {
			continue
		}
		for _, m := range methods {
			if to := pattern(probeRequest(m, path[i:])); to != "" {
				return fmt.Sprintf(" (but %s %s to %s: if the router is one mounted at %s, it knows not where: give CheckRoutes the pattern function of the router it is mounted in, policy.ChiPattern(top))", errtext.Cut(m), errtext.Cut(path[i:]), errtext.Quote(to), errtext.Quote(path[:i]))
			}
		}
	}
	if len(methods) == 1 && methods[0] == http.MethodHead {
		if to := pattern(probeRequest(http.MethodGet, path)); to != "" {
			return fmt.Sprintf(" (but GET %s to %s: if chi's GetHead middleware routes HEAD there, write the route %s, which covers HEAD)", errtext.Cut(path), errtext.Quote(to), errtext.Quote("GET "+routePath))
		}
	}
	return other
}

// probeRequest returns a request with method for path, as a server
// would hand it over for a request line naming path (no Host, no body):
// its escapes decoded in URL.Path, and the text kept in URL.RawPath
// when it is not the path's default encoding, so that a route written
// with one ("/a%20b", a ServeMux's for a request for /a%20b) is asked
// about the request it matches, not about /a%2520b. A wildcard's text
// ("{n}") is escaped in that raw path (%7Bn%7D, which still only a
// wildcard segment matches): a raw path holding a brace is not a valid
// one, which ServeMux (through URL.EscapedPath) would drop with the
// escape it keeps ("/{n}/a%2Fb" asked as /{n}/a/b).
func probeRequest(method, path string) *http.Request {
	u := &url.URL{Path: path}
	if p, err := url.PathUnescape(path); err == nil && p != path {
		u.Path = p
		if u.EscapedPath() != path {
			u.RawPath = strings.NewReplacer("{", "%7B", "}", "%7D").Replace(path)
		}
	}
	return &http.Request{
		Method: method, URL: u, RequestURI: u.RequestURI(),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, Body: http.NoBody,
	}
}

// probePaths returns the paths of the requests CheckRoutes builds for a
// route path (see CheckRoutes), or false when a wildcard's value cannot
// be written. A chi regexp is written with a few values it matches, as
// a literal route beside it ("/n/0" beside "/n/{id:[0-9]+}") takes the
// value that equals it.
func probePaths(path string) ([]string, bool) {
	var all []string
	for k := range regexpVariants {
		paths, ok := probePathsWith(path, k)
		if !ok {
			return nil, false
		}
		for _, p := range paths {
			if !slices.Contains(all, p) {
				all = append(all, p)
			}
		}
	}
	return all, true
}

// regexpVariants is the number of values a chi regexp is written with.
const regexpVariants = 3

// probePathsWith returns the paths of probePaths with the k-th value of
// each chi regexp (see regexpValue).
func probePathsWith(path string, k int) ([]string, bool) {
	var b strings.Builder
	tail := "" // the filler of a path ending in a wildcard of any depth
	for i := 0; i < len(path); {
		c := path[i]
		if c == '*' && i == len(path)-1 {
			tail = "{rest}" // chi's catch-all
			break
		}
		if c != '{' {
			b.WriteByte(c)
			i++
			continue
		}
		end := closingBrace(path, i)
		if end < 0 {
			return nil, false
		}
		inner := path[i+1 : end]
		switch _, re, hasRE := strings.Cut(inner, ":"); {
		case inner == "$":
			// ServeMux's end of path: the path ends with the slash.
		case strings.HasSuffix(inner, "..."):
			tail = path[i : end+1]
		case hasRE:
			v, ok := regexpValue(re, k)
			if !ok {
				return nil, false
			}
			b.WriteString(v)
		default:
			b.WriteString(path[i : end+1])
		}
		i = end + 1
	}
	base := b.String()
	if tail == "" && !strings.HasSuffix(base, "/") {
		// chi reports the route "/login/" as "/login", which a route
		// "/login" matches: asked at "/login/" too.
		return []string{base, base + "/"}, true
	}
	if tail == "" {
		tail = "{rest}"
	}
	return []string{base, base + tail, base + tail + "/" + tail}, true
}

// closingBrace returns the index of the '}' closing the '{' at i in s
// (braces nest in a chi regexp: "{id:[0-9]{3}}"), or -1.
func closingBrace(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return j
			}
		}
	}
	return -1
}

// regexpValue returns a short value that the regexp re of a chi wildcard
// matches as chi matches it (anchored), holding no '/', or false: the
// k-th (from 0) of a few, each character class written with its k-th
// character that can be written, or its last.
func regexpValue(re string, k int) (string, bool) {
	rx, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	if !shortest(&b, rx.Simplify(), k) {
		return "", false
	}
	v := b.String()
	if v == "" || strings.ContainsAny(v, "/?#") {
		return "", false
	}
	if !strings.HasPrefix(re, "^") {
		re = "^" + re
	}
	if !strings.HasSuffix(re, "$") {
		re += "$"
	}
	if ok, err := regexp.MatchString(re, v); err != nil || !ok {
		return "", false
	}
	return v, true
}

// shortest writes to b a short string re matches (the fewest repetitions,
// the first alternative that can be written, the k-th character of a
// class), or reports false.
func shortest(b *strings.Builder, re *syntax.Regexp, k int) bool {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpStar, syntax.OpQuest:
		return true
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
		return true
	case syntax.OpCharClass:
		cs := classChars(re.Rune, k+1)
		if len(cs) == 0 {
			return false
		}
		b.WriteRune(cs[min(k, len(cs)-1)])
		return true
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte("abc"[min(k, 2)])
		return true
	case syntax.OpCapture, syntax.OpPlus:
		return shortest(b, re.Sub[0], k)
	case syntax.OpRepeat:
		for range re.Min {
			if !shortest(b, re.Sub[0], k) {
				return false
			}
		}
		return true
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if !shortest(b, s, k) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			var t strings.Builder
			if shortest(&t, s, k) {
				b.WriteString(t.String())
				return true
			}
		}
		return false
	}
	return false
}

// classChars returns up to n characters of the class ranges (pairs lo,
// hi) that a path can hold unescaped, the plainest first ('a', '0',
// 'A', '-', '_', then each range's first ones).
func classChars(ranges []rune, n int) []rune {
	var cs []rune
	add := func(c rune) {
		if len(cs) < n && c > ' ' && c != 0x7f && !strings.ContainsRune("/?#%", c) && !slices.Contains(cs, c) {
			cs = append(cs, c)
		}
	}
	for _, c := range "a0A-_" {
		for i := 0; i+1 < len(ranges); i += 2 {
			if ranges[i] <= c && c <= ranges[i+1] {
				add(c)
			}
		}
	}
	for i := 0; i+1 < len(ranges) && len(cs) < n; i += 2 {
		for c := ranges[i]; c <= ranges[i+1] && c < ranges[i]+8 && len(cs) < n; c++ {
			add(c)
		}
	}
	return cs
}
