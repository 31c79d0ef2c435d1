package policy_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	chimw "github.com/go-chi/chi/v5/middleware"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestWithRoutesChiRegexpSpaceNoMethod: a route without a method whose chi
// regexp holds a space is a path, as RoutePattern reads it; WithRoutes cut
// it at the space and refused "/names/{n:[a-z" as a method.
func TestWithRoutesChiRegexpSpaceNoMethod(t *testing.T) {
	p, err := policy.PerMinute("names", 1, remoteKey, policy.WithRoutes("/names/{n:[a-z ]+}"))
	if err != nil {
		t.Fatalf("WithRoutes(chi pattern with a space) = %v", err)
	}
	s, err := policy.NewSet([]*policy.Policy{p})
	if err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	var got []uint64
	r.Get("/names/{n:[a-z ]+}", func(w http.ResponseWriter, req *http.Request) { got = append(got, s.Match(req)) })
	r.Post("/names/{n:[a-z ]+}", func(w http.ResponseWriter, req *http.Request) { got = append(got, s.Match(req)) })
	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/names/a%20b", nil))
	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/names/c", nil))
	if want := []uint64{1, 1}; !slices.Equal(got, want) {
		t.Errorf("Match under the chi pattern = %v, want %v", got, want)
	}
}

// TestChiTopLevelPatternEncodedSlash: chi routes by the escaped path when
// the URL has one (r.URL.RawPath), so /users/a%2Fb reaches the handler of
// /users/{id}; the documented pattern function must find that route too,
// or a client escapes a route's policy by escaping a slash in a parameter.
func TestChiTopLevelPatternEncodedSlash(t *testing.T) {
	r := chi.NewRouter()
	p := policy.Must(policy.PerMinute("users", 1, remoteKey, policy.WithRoutes("GET /users/{id}")))
	s, err := policy.NewSet([]*policy.Policy{p}, policy.WithPatternFunc(policy.ChiPattern(r)))
	if err != nil {
		t.Fatal(err)
	}
	var masks []uint64
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			masks = append(masks, s.Match(req))
			next.ServeHTTP(w, req)
		})
	})
	var ids []string
	r.Get("/users/{id}", func(w http.ResponseWriter, req *http.Request) { ids = append(ids, chi.URLParam(req, "id")) })
	for _, path := range []string{"/users/1", "/users/a%2Fb", "/users/%61"} {
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
	}
	if len(ids) != 3 {
		t.Fatalf("chi served %q, want 3 requests", ids)
	}
	if want := []uint64{1, 1, 1}; !slices.Equal(masks, want) {
		t.Errorf("Match of %q, as chi served them = %v, want %v", ids, masks, want)
	}
}

// TestMethodCaseRefused: methods are case-sensitive, and clients send the
// standard ones in upper case, so a policy on "post" (a typo in a config
// file) never applied: the login limit was silently off. A standard
// method in another case is now refused, naming the policy and the field.
func TestMethodCaseRefused(t *testing.T) {
	for _, tc := range []struct {
		opt   policy.Option
		field string
	}{
		{policy.WithMethods("post"), "Methods"},
		{policy.WithMethods("GET", "Delete"), "Methods"},
		{policy.WithRoutes("post /login"), "Routes"},
	} {
		_, err := policy.PerMinute("login", 5, remoteKey, tc.opt)
		var pe *policy.Error
		if !errors.As(err, &pe) || pe.Policy != "login" || pe.Field != tc.field || !strings.Contains(pe.Reason, "case") {
			t.Errorf("PerMinute(login, %s in lower case) = %v; want an error on %s about the case", tc.field, err, tc.field)
		}
	}
	// Methods of other names are the application's to spell.
	if _, err := policy.PerMinute("custom", 5, remoteKey, policy.WithMethods("PURGE", "mkcol")); err != nil {
		t.Errorf("non-standard methods: %v", err)
	}
	if _, err := policy.PerMinute("custom", 5, remoteKey, policy.WithRoutes("purge /cache")); err != nil {
		t.Errorf("non-standard method in a route: %v", err)
	}
	_, err := policy.ParseConfig([]byte("policies:\n  - {name: login, limit: 5, window: 1m, methods: [post]}\n"), "m.yaml")
	if errs := policy.ConfigErrors(err); len(errs) != 1 || errs[0].Field != "policies[0].methods" || errs[0].Line != 2 {
		t.Errorf("config with methods: [post] = %v; want one error at policies[0].methods", err)
	}
}

// TestServeMuxPatternTabs: a ServeMux pattern may separate its method
// from its path with tabs or several blanks ("HEAD\t/x"), and r.Pattern is
// the pattern as registered. WithRoutes refused "GET\t/x", and a HEAD
// request ServeMux sent to an explicit "HEAD\t/x" handler was taken for
// one under the "GET /x" route, as if no HEAD pattern existed.
func TestServeMuxPatternTabs(t *testing.T) {
	getX, err := policy.PerMinute("get-x", 1, remoteKey, policy.WithRoutes("GET\t/x"))
	if err != nil {
		t.Fatalf("WithRoutes(%q) = %v", "GET\t/x", err)
	}
	getZ := policy.Must(policy.PerMinute("get-z", 1, remoteKey, policy.WithRoutes("GET /z")))
	s, _ := policy.NewSet([]*policy.Policy{getX, getZ})
	mux := http.NewServeMux()
	var got []uint64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = append(got, s.Match(r)) })
	mux.Handle("GET /x", h)
	mux.Handle("HEAD\t/x", h)
	mux.Handle("GET \t /z", h)
	for _, target := range []string{"/x", "/z"} {
		for _, method := range []string{"GET", "HEAD"} {
			mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, target, nil))
		}
	}
	if want := []uint64{0b01, 0, 0b10, 0b10}; !slices.Equal(got, want) {
		t.Errorf("Match inside ServeMux (GET /x, HEAD /x, GET /z, HEAD /z) = %v, want %v", got, want)
	}
}

// TestMethodsAndRoutesDisagree: a policy on the method GET and the route
// "POST /login" can never apply (a request has one method), so a file
// with methods: [GET] and routes: ["POST /login"] silently had no limit
// on logins. Such a route is refused; one the methods reach is not.
func TestMethodsAndRoutesDisagree(t *testing.T) {
	_, err := policy.PerMinute("login", 5, remoteKey, policy.WithMethods("GET"), policy.WithRoutes("/x", "POST /login"))
	var pe *policy.Error
	if !errors.As(err, &pe) || pe.Policy != "login" || pe.Field != "Routes" || !strings.Contains(pe.Reason, "POST /login") {
		t.Errorf("GET policy on POST /login = %v; want an error on Routes naming the route", err)
	}
	for _, ok := range [][]policy.Option{
		{policy.WithRoutes("POST /login"), policy.WithMethods("GET", "POST")},
		{policy.WithMethods("GET"), policy.WithRoutes("HEAD /x")}, // GET covers HEAD
		{policy.WithMethods("HEAD"), policy.WithRoutes("GET /x")}, // a HEAD routed to GET /x
		{policy.WithMethods("POST"), policy.WithRoutes("/login")},
	} {
		if _, err := policy.PerMinute("ok", 5, remoteKey, ok...); err != nil {
			t.Errorf("PerMinute with methods and routes that meet = %v", err)
		}
	}
	_, err = policy.ParseConfig([]byte("policies:\n  - {name: login, limit: 5, window: 1m, methods: [GET], routes: [\"POST /login\"]}\n"), "r.yaml")
	if errs := policy.ConfigErrors(err); len(errs) != 1 || errs[0].Field != "policies[0].routes" {
		t.Errorf("config with methods: [GET], routes: [POST /login] = %v; want one error at policies[0].routes", err)
	}
}

// TestChiTopLevelPatternRoutePath: chi's StripSlashes and CleanPath, used
// before the limiter, rewrite the path chi routes by in its route context
// (RoutePath), not in the URL; the documented pattern function must ask
// for that path, or POST /login/ and POST //login, which chi serves from
// "/login", escape the policy on "POST /login".
func TestChiTopLevelPatternRoutePath(t *testing.T) {
	for _, tc := range []struct {
		mw   func(http.Handler) http.Handler
		path string
	}{
		{chimw.StripSlashes, "/login/"},
		{chimw.CleanPath, "//login"},
		{chimw.CleanPath, "/x/../login"},
	} {
		r := chi.NewRouter()
		p := policy.Must(policy.PerMinute("login", 5, remoteKey, policy.WithRoutes("POST /login")))
		s, err := policy.NewSet([]*policy.Policy{p}, policy.WithPatternFunc(policy.ChiPattern(r)))
		if err != nil {
			t.Fatal(err)
		}
		var masks []uint64
		r.Use(tc.mw)
		r.Use(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				masks = append(masks, s.Match(req))
				next.ServeHTTP(w, req)
			})
		})
		served := 0
		r.Post("/login", func(w http.ResponseWriter, req *http.Request) { served++ })
		req := httptest.NewRequest("POST", "/", nil)
		req.URL.Path = tc.path // as sent, not cleaned by NewRequest's parser
		r.ServeHTTP(httptest.NewRecorder(), req)
		if served != 1 || !slices.Equal(masks, []uint64{1}) {
			t.Errorf("POST %s: served %d times, Match %v; want served once under the policy ([1])", tc.path, served, masks)
		}
	}
}

// TestChiTopLevelPatternAsRouted: the documented pattern function must
// give the pattern chi reports once it has routed the request (r.Pattern,
// RoutePattern), the form WithRoutes takes; Find's own answer keeps a
// trailing slash that chi's RoutePattern trims ("/users/" for a route
// registered so, "/api/" for the root of r.Route("/api") asked with
// /api/), so a policy on "GET /api" missed GET /api/, and one on a route
// registered with a trailing slash missed every request.
func TestChiTopLevelPatternAsRouted(t *testing.T) {
	r := chi.NewRouter()
	find := policy.ChiPattern(r)
	var asked, served []string
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			asked = append(asked, find(req))
			next.ServeHTTP(w, req)
		})
	})
	h := func(w http.ResponseWriter, req *http.Request) { served = append(served, req.Pattern) }
	r.Get("/users/", h)
	r.Get("/", h)
	r.Route("/api", func(r chi.Router) {
		r.Get("/", h)
		r.Get("/users/{id}", h)
		r.Get("/files/*", h)
	})
	sub := chi.NewRouter()
	sub.Get("/", h)
	r.Mount("/m", sub)
	for _, path := range []string{"/users/", "/", "/api", "/api/", "/api/users/1", "/api/files/a/b", "/m", "/m/"} {
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
	}
	if !slices.Equal(asked, served) {
		t.Errorf("patterns the function gave %q, chi's once routed %q", asked, served)
	}
}

// TestChiPlacements: where a route-restricted Set sees the route under
// chi, as the WithRoutes doc says: on the route (r.With) or in an r.Group,
// at the top or inside r.Route, it does; in the r.Use of r.Route, a
// mounted sub-router that has not routed yet, it sees only "/api/*" and
// its policies do not apply (the doc said "inside r.Group or r.Route").
func TestChiPlacements(t *testing.T) {
	p := policy.Must(policy.PerMinute("u", 5, remoteKey, policy.WithRoutes("GET /api/users/{id}", "GET /users/{id}")))
	s, _ := policy.NewSet([]*policy.Policy{p})
	var got []string
	mw := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			got = append(got, policy.RoutePattern(req)+" "+strconv.FormatUint(s.Match(req), 10))
			next.ServeHTTP(w, req)
		})
	}
	nop := func(http.ResponseWriter, *http.Request) {}
	for _, tc := range []struct {
		name, path, want string
		build            func(r chi.Router)
	}{
		{"With", "/users/1", "/users/{id} 1", func(r chi.Router) { r.With(mw).Get("/users/{id}", nop) }},
		{"Group", "/users/1", "/users/{id} 1", func(r chi.Router) { r.Group(func(r chi.Router) { r.Use(mw); r.Get("/users/{id}", nop) }) }},
		{"With in Route", "/api/users/1", "/api/users/{id} 1", func(r chi.Router) {
			r.Route("/api", func(r chi.Router) { r.With(mw).Get("/users/{id}", nop) })
		}},
		{"Group in Route", "/api/users/1", "/api/users/{id} 1", func(r chi.Router) {
			r.Route("/api", func(r chi.Router) { r.Group(func(r chi.Router) { r.Use(mw); r.Get("/users/{id}", nop) }) })
		}},
		{"Use in Route", "/api/users/1", "/api/* 0", func(r chi.Router) {
			r.Route("/api", func(r chi.Router) { r.Use(mw); r.Get("/users/{id}", nop) })
		}},
	} {
		got = nil
		r := chi.NewRouter()
		tc.build(r)
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", tc.path, nil))
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: pattern and Match %q, want %q", tc.name, got, tc.want)
		}
	}
}
