package middleware_test

import (
	"errors"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	chimw "github.com/go-chi/chi/v5/middleware"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// A routeSetup serves ps through a router, with the middleware placed
// where the case says, and returns the handler, the middleware and the
// pattern function CheckRoutes is given (nil: the middleware's own).
type routeSetup func(t *testing.T, ps []*policy.Policy) (http.Handler, *middleware.Middleware, func(*http.Request) string)

// chiAround: the middleware in the r.Use of chi's top-level router,
// asking chi (ChiPattern(r)) where the request goes.
func chiAround(routes func(r chi.Router)) routeSetup {
	return func(t *testing.T, ps []*policy.Policy) (http.Handler, *middleware.Middleware, func(*http.Request) string) {
		store, _ := newStore(t)
		r := chi.NewRouter()
		m := middleware.MustNew(store, ps, middleware.WithPatternFunc(policy.ChiPattern(r)), middleware.CheckForwarding(false))
		r.Use(m.Handler)
		routes(r)
		return r, m, nil
	}
}

// muxAround: the middleware around a whole ServeMux, asking it
// (ServeMuxPattern(mux)).
func muxAround(routes func(mux *http.ServeMux)) routeSetup {
	return func(t *testing.T, ps []*policy.Policy) (http.Handler, *middleware.Middleware, func(*http.Request) string) {
		store, _ := newStore(t)
		mux := http.NewServeMux()
		m := middleware.MustNew(store, ps, middleware.WithPatternFunc(policy.ServeMuxPattern(mux)), middleware.CheckForwarding(false))
		routes(mux)
		return m.Handler(mux), m, nil
	}
}

// A routeCase is one policy route under one router.
type routeCase struct {
	name  string
	setup routeSetup
	route string
	opts  []policy.Option
	// method and target: a request the policy applies to (a correct
	// route: CheckRoutes must say nothing), or "" for a route under which
	// it never applies (CheckRoutes must report it); then misses are the
	// requests a user meant, which the policy does not count.
	method, target string
	misses         [][2]string
	// says: text the report must hold.
	says []string
}

// runRouteCase checks c both ways: what CheckRoutes says, and what the
// middleware does with real requests through the router (limit 1: a
// second request the policy applies to is answered 429), so that the
// check is held to the middleware's own behaviour.
func runRouteCase(t *testing.T, c routeCase) {
	t.Helper()
	p := fixed("p", 1, time.Minute, peerIP, append([]policy.Option{policy.WithRoutes(c.route)}, c.opts...)...)
	h, m, pattern := c.setup(t, []*policy.Policy{p})
	err := m.CheckRoutes(pattern)
	if c.method != "" {
		if err != nil {
			t.Errorf("CheckRoutes = %v, want nil (a route the router has)", err)
		}
		first := serve(h, c.method, c.target).Code
		second := serve(h, c.method, c.target).Code
		if first != http.StatusOK || second != http.StatusTooManyRequests {
			t.Errorf("%s %s twice: %d, %d; want 200, 429 (the route's policy applies)", c.method, c.target, first, second)
		}
		return
	}
	if !errors.Is(err, middleware.ErrUnknownRoute) {
		t.Errorf("CheckRoutes = %v, want ErrUnknownRoute", err)
	} else {
		for _, s := range c.says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("CheckRoutes error does not say %q:\n%v", s, err)
			}
		}
	}
	for _, mt := range c.misses {
		for i := range 3 {
			if code := serve(h, mt[0], mt[1]).Code; code == http.StatusTooManyRequests {
				t.Errorf("%s %s #%d: 429: the policy applies there, and it was reported", mt[0], mt[1], i+1)
			}
		}
	}
}

// TestCheckRoutesReviewCorrectRoutes: routes written right, under every
// shape of chi and ServeMux routing the brief names, pass the check, and
// their policy does apply to a request (the ground truth).
func TestCheckRoutesReviewCorrectRoutes(t *testing.T) {
	login := func(r chi.Router) { r.Post("/login", ok) }
	cases := []routeCase{
		{name: "chi/Mount", route: "GET /api/u/{id}", method: "GET", target: "/api/u/7",
			setup: chiAround(func(r chi.Router) {
				api := chi.NewRouter()
				api.Get("/u/{id}", ok)
				r.Mount("/api", api)
			})},
		{name: "chi/Route", route: "DELETE /v1/items/{id}", method: "DELETE", target: "/v1/items/7",
			setup: chiAround(func(r chi.Router) {
				r.Route("/v1", func(r chi.Router) { r.Delete("/items/{id}", ok) })
			})},
		{name: "chi/Route root", route: "GET /v1", method: "GET", target: "/v1/",
			setup: chiAround(func(r chi.Router) {
				r.Route("/v1", func(r chi.Router) { r.Get("/", ok) })
			})},
		{name: "chi/Group", route: "POST /login", method: "POST", target: "/login",
			setup: chiAround(func(r chi.Router) {
				r.Group(func(r chi.Router) { r.Use(passThrough); login(r) })
			})},
		{name: "chi/With", route: "POST /login", method: "POST", target: "/login",
			setup: chiAround(func(r chi.Router) { r.With(passThrough).Post("/login", ok) })},
		{name: "chi/catch-all", route: "/*", method: "GET", target: "/any/thing",
			setup: chiAround(func(r chi.Router) { login(r); r.Get("/*", ok) })},
		{name: "chi/static", route: "GET /static/*", method: "GET", target: "/static/css/a.css",
			setup: chiAround(func(r chi.Router) { r.Get("/static/*", ok) })},
		{name: "chi/regexp digits", route: "GET /n/{id:[0-9]+}", method: "GET", target: "/n/42",
			setup: chiAround(func(r chi.Router) { r.Get("/n/{id:[0-9]+}", ok) })},
		{name: "chi/regexp slug", route: "GET /s/{slug:[a-z-]+}", method: "GET", target: "/s/hello-world",
			setup: chiAround(func(r chi.Router) { r.Get("/s/{slug:[a-z-]+}", ok) })},
		{name: "chi/regexp beside a literal", route: "GET /n/{id:[0-9]+}", method: "GET", target: "/n/42",
			setup: chiAround(func(r chi.Router) { r.Get("/n/0", ok); r.Get("/n/{id:[0-9]+}", ok) })},
		{name: "chi/slash route, slashless policy", route: "POST /login", method: "POST", target: "/login/",
			setup: chiAround(func(r chi.Router) { r.Post("/login/", ok) })},
		{name: "chi/slashless route, slash policy", route: "POST /login/", method: "POST", target: "/login",
			setup: chiAround(func(r chi.Router) { login(r) })},
		{name: "chi/NotFound and MethodNotAllowed", route: "POST /login", method: "POST", target: "/login",
			setup: chiAround(func(r chi.Router) { r.NotFound(ok); r.MethodNotAllowed(ok); login(r) })},
		{name: "chi/methods, route without one", route: "/login", opts: []policy.Option{policy.WithMethods("POST")}, method: "POST", target: "/login",
			setup: chiAround(login)},
		{name: "ServeMux/method-less subtree", route: "/api/", method: "PUT", target: "/api/x/y",
			setup: muxAround(func(mux *http.ServeMux) { mux.Handle("/api/", ok) })},
		{name: "ServeMux/{$}", route: "GET /{$}", method: "GET", target: "/",
			setup: muxAround(func(mux *http.ServeMux) { mux.Handle("GET /{$}", ok); mux.Handle("/", ok) })},
		{name: "ServeMux/{path...}", route: "GET /files/{path...}", method: "GET", target: "/files/a/b.txt",
			setup: muxAround(func(mux *http.ServeMux) { mux.Handle("GET /files/{path...}", ok) })},
		{name: "ServeMux/HEAD on GET", route: "HEAD /x", method: "HEAD", target: "/x",
			setup: muxAround(func(mux *http.ServeMux) { mux.Handle("GET /x", ok) })},
		{name: "ServeMux/slash route", route: "POST /login/", method: "POST", target: "/login/",
			setup: muxAround(func(mux *http.ServeMux) { mux.Handle("POST /login/", ok) })},
		{name: "ServeMux/methods GET, route without one", route: "/x", opts: []policy.Option{policy.WithMethods("GET")}, method: "HEAD", target: "/x",
			setup: muxAround(func(mux *http.ServeMux) { mux.Handle("GET /x", ok) })},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runRouteCase(t, c) })
	}
}

// passThrough is a middleware of the router's own (chi's r.With, r.Use
// in an r.Group).
func passThrough(next http.Handler) http.Handler { return next }

// TestCheckRoutesReviewTypos: routes under which the policy never
// applies are reported, and the requests meant are indeed not counted.
func TestCheckRoutesReviewTypos(t *testing.T) {
	loginChi := chiAround(func(r chi.Router) { r.Post("/login", ok) })
	loginMux := muxAround(func(mux *http.ServeMux) { mux.Handle("POST /login", ok) })
	cases := []routeCase{
		{name: "chi/wrong method", route: "GET /login", setup: loginChi,
			misses: [][2]string{{"POST", "/login"}}, says: []string{`routes GET /login to no route`}},
		{name: "ServeMux/wrong method", route: "GET /login", setup: loginMux,
			misses: [][2]string{{"POST", "/login"}}},
		{name: "chi/under a catch-all", route: "POST /logn",
			setup:  chiAround(func(r chi.Router) { r.Post("/login", ok); r.HandleFunc("/*", ok) }),
			misses: [][2]string{{"POST", "/login"}, {"POST", "/logn"}}, says: []string{`to "/*"`}},
		{name: "ServeMux/under /", route: "POST /logn",
			setup:  muxAround(func(mux *http.ServeMux) { mux.Handle("POST /login", ok); mux.Handle("/", ok) }),
			misses: [][2]string{{"POST", "/login"}, {"POST", "/logn"}}, says: []string{`to "/"`}},
		{name: "chi/case", route: "POST /Login", setup: loginChi, misses: [][2]string{{"POST", "/login"}}},
		{name: "ServeMux/case", route: "POST /Login", setup: loginMux, misses: [][2]string{{"POST", "/login"}}},
		{name: "ServeMux/slash the route lacks", route: "POST /login/", setup: loginMux, misses: [][2]string{{"POST", "/login"}}},
		{name: "ServeMux/slash the policy lacks", route: "POST /login",
			setup:  muxAround(func(mux *http.ServeMux) { mux.Handle("POST /login/", ok) }),
			misses: [][2]string{{"POST", "/login/"}}},
		{name: "chi/regexp written otherwise", route: `GET /n/{id:[0-9]+}`,
			setup:  chiAround(func(r chi.Router) { r.Get(`/n/{id:\d+}`, ok) }),
			misses: [][2]string{{"GET", "/n/42"}}, says: []string{`"/n/{id:\\d+}"`}},
		{name: "chi/NotFound handler", route: "POST /logn",
			setup:  chiAround(func(r chi.Router) { r.NotFound(ok); r.Post("/login", ok) }),
			misses: [][2]string{{"POST", "/logn"}}},
		{name: "chi/methods GET, only POST", route: "/login", opts: []policy.Option{policy.WithMethods("GET")}, setup: loginChi,
			misses: [][2]string{{"POST", "/login"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runRouteCase(t, c) })
	}
	// Neither router's form accepts these: the policy is refused at
	// construction, before any check.
	for _, rt := range []string{"POST login", "post /login"} {
		if _, err := policy.New("p", fixed("x", 1, time.Minute, peerIP).Spec(), peerIP, policy.WithRoutes(rt)); err == nil {
			t.Errorf("WithRoutes(%q) accepted", rt)
		}
	}
}

// TestCheckRoutesReviewPlacements: the middleware placed elsewhere than
// around the router, as the docs allow.
func TestCheckRoutesReviewPlacements(t *testing.T) {
	// A chi sub-router's own middleware asking the sub-router
	// (WithPatternFunc(ChiPattern(api))): its policies name the routes as
	// chi reports them once routed, the mount's prefix first.
	t.Run("chi/sub-router's own pattern function", func(t *testing.T) {
		runRouteCase(t, routeCase{route: "GET /api/u/{id}", method: "GET", target: "/api/u/7",
			setup: func(t *testing.T, ps []*policy.Policy) (http.Handler, *middleware.Middleware, func(*http.Request) string) {
				store, _ := newStore(t)
				r, api := chi.NewRouter(), chi.NewRouter()
				m := middleware.MustNew(store, ps, middleware.WithPatternFunc(policy.ChiPattern(api)), middleware.CheckForwarding(false))
				api.Use(m.Handler)
				api.Get("/u/{id}", ok)
				r.Mount("/api", api)
				return r, m, policy.ChiPattern(r)
			}})
	})
	// The same, checked with the sub-router's own pattern function
	// (CheckRoutes(nil)): the sub-router does not know where it is
	// mounted, so it knows no "/api/u/{id}"; the report says so and what
	// to give instead, rather than that the route is a typo.
	t.Run("chi/sub-router checked alone", func(t *testing.T) {
		store, _ := newStore(t)
		r, api := chi.NewRouter(), chi.NewRouter()
		m := middleware.MustNew(store, []*policy.Policy{fixed("p", 1, time.Minute, peerIP, policy.WithRoutes("GET /api/u/{id}"))},
			middleware.WithPatternFunc(policy.ChiPattern(api)), middleware.CheckForwarding(false))
		api.Use(m.Handler)
		api.Get("/u/{id}", ok)
		r.Mount("/api", api)
		err := m.CheckRoutes(nil)
		if err != nil && !strings.Contains(err.Error(), `mounted at "/api"`) {
			t.Errorf("CheckRoutes(nil) in a sub-router = %v, want nil or a report saying the router may be mounted at \"/api\"", err)
		}
		if err := m.CheckRoutes(policy.ChiPattern(r)); err != nil {
			t.Errorf("CheckRoutes(ChiPattern(top)) = %v, want nil", err)
		}
	})
	// chi answers HEAD from a GET route only under its GetHead
	// middleware, which CheckRoutes cannot see: a route "HEAD /x" is
	// reported, and the report says to write "GET /x", which covers HEAD.
	t.Run("chi/GetHead", func(t *testing.T) {
		store, _ := newStore(t)
		r := chi.NewRouter()
		head := fixed("head", 1, time.Minute, peerIP, policy.WithRoutes("HEAD /x"))
		get := fixed("get", 1, time.Minute, peerIP, policy.WithRoutes("GET /x"))
		m := middleware.MustNew(store, []*policy.Policy{head, get}, middleware.WithPatternFunc(policy.ChiPattern(r)), middleware.CheckForwarding(false))
		r.Use(chimw.GetHead)
		r.Use(m.Handler)
		r.Get("/x", ok)
		err := m.CheckRoutes(nil)
		if err != nil && (strings.Contains(err.Error(), `"get"`) || !strings.Contains(err.Error(), `"GET /x"`)) {
			t.Errorf("CheckRoutes under GetHead = %v, want nil or the HEAD route reported with the advice to write \"GET /x\"", err)
		}
		if a, b := serve(r, "HEAD", "/x").Code, serve(r, "HEAD", "/x").Code; a != 200 || b != 429 {
			t.Errorf("HEAD /x twice under GetHead: %d, %d; want the GET route's policy to apply", a, b)
		}
	})
	// A pattern function of the user's own, around ChiPattern (a
	// wrapper that logs, say): chi reports "/login/" as "/login".
	t.Run("chi/custom pattern function", func(t *testing.T) {
		runRouteCase(t, routeCase{route: "POST /login/", method: "POST", target: "/login",
			setup: func(t *testing.T, ps []*policy.Policy) (http.Handler, *middleware.Middleware, func(*http.Request) string) {
				store, _ := newStore(t)
				r := chi.NewRouter()
				chiPattern := policy.ChiPattern(r)
				own := func(req *http.Request) string { return chiPattern(req) }
				m := middleware.MustNew(store, ps, middleware.WithPatternFunc(own), middleware.CheckForwarding(false))
				r.Use(m.Handler)
				r.Post("/login", ok)
				return r, m, nil
			}})
	})
	// Nested middlewares: a global one around chi, a login one on the
	// route (r.With), where chi has routed; each is checked with the
	// router's pattern function.
	t.Run("chi/nested", func(t *testing.T) {
		store, _ := newStore(t)
		r := chi.NewRouter()
		global := middleware.MustNew(store, []*policy.Policy{
			fixed("all", 100, time.Minute, peerIP),
			fixed("api", 100, time.Minute, peerIP, policy.WithRoutes("GET /api/{id}")),
		}, middleware.WithPatternFunc(policy.ChiPattern(r)), middleware.CheckForwarding(false))
		login := middleware.MustNew(store, []*policy.Policy{
			fixed("login", 1, time.Minute, peerIP, policy.WithRoutes("POST /login")),
		}, middleware.CheckForwarding(false))
		r.Use(global.Handler)
		r.With(login.Handler).Post("/login", ok)
		r.Get("/api/{ID}", ok)
		if err := login.CheckRoutes(policy.ChiPattern(r)); err != nil {
			t.Errorf("login.CheckRoutes = %v, want nil", err)
		}
		if err := global.CheckRoutes(nil); !errors.Is(err, middleware.ErrUnknownRoute) || !strings.Contains(err.Error(), `"api"`) {
			t.Errorf("global.CheckRoutes = %v, want the api route reported", err)
		}
		if a, b := serve(r, "POST", "/login").Code, serve(r, "POST", "/login").Code; a != 200 || b != 429 {
			t.Errorf("POST /login twice: %d, %d", a, b)
		}
	})
}

// TestCheckRoutesReviewHost: a ServeMux route registered under a host is
// not found by requests without one; the report says what to do.
func TestCheckRoutesReviewHost(t *testing.T) {
	store, _ := newStore(t)
	mux := http.NewServeMux()
	mux.Handle("POST api.example.com/login", ok)
	m := middleware.MustNew(store, []*policy.Policy{fixed("login", 1, time.Minute, peerIP, policy.WithRoutes("POST /login"))},
		middleware.WithPatternFunc(policy.ServeMuxPattern(mux)), middleware.CheckForwarding(false))
	h := m.Handler(mux)
	send := func() int { return serve(h, "POST", "http://api.example.com/login").Code }
	if a, b := send(), send(); a != 200 || b != 429 {
		t.Fatalf("POST api.example.com/login twice: %d, %d; want the policy to apply", a, b)
	}
	err := m.CheckRoutes(nil)
	if err == nil {
		return // found: fine too
	}
	if !strings.Contains(err.Error(), "Host") {
		t.Errorf("CheckRoutes = %v: reported without saying that requests were asked without a Host, nor what to do", err)
	}
	withHost := func(r *http.Request) string {
		r.Host = "api.example.com"
		return policy.ServeMuxPattern(mux)(r)
	}
	if err := m.CheckRoutes(withHost); err != nil {
		t.Errorf("CheckRoutes with a pattern function setting the Host = %v, want nil", err)
	}
}

// TestCheckRoutesReviewRobust: pattern functions that panic or know no
// route, no routed policy, and the check beside SetPolicies.
func TestCheckRoutesReviewRobust(t *testing.T) {
	store, _ := newStore(t)
	rules := []*policy.Policy{fixed("login", 1, time.Minute, peerIP, policy.WithRoutes("POST /login"))}
	m := middleware.MustNew(store, rules, middleware.CheckForwarding(false))

	t.Run("panics", func(t *testing.T) {
		var err error
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Errorf("CheckRoutes panicked with the pattern function: %v", v)
				}
			}()
			err = m.CheckRoutes(func(*http.Request) string { panic("boom") })
		}()
		if err == nil || errors.Is(err, middleware.ErrUnknownRoute) || !strings.Contains(err.Error(), "boom") || !strings.Contains(err.Error(), `"POST /login"`) {
			t.Errorf("CheckRoutes with a panicking pattern function = %v, want an error naming the route and the panic", err)
		}
	})
	t.Run("nil router", func(t *testing.T) {
		var mux *http.ServeMux // assigned later, by mistake
		var err error
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Errorf("CheckRoutes(ServeMuxPattern(nil)) panicked: %v", v)
				}
			}()
			err = m.CheckRoutes(policy.ServeMuxPattern(mux))
		}()
		if err == nil {
			t.Errorf("CheckRoutes(ServeMuxPattern(nil)) = nil")
		}
	})
	t.Run("never a route", func(t *testing.T) {
		err := m.CheckRoutes(func(*http.Request) string { return "" })
		if !errors.Is(err, middleware.ErrUnknownRoute) || !strings.Contains(err.Error(), "to no route") {
			t.Errorf("CheckRoutes with a pattern function that knows no route = %v", err)
		}
		// RoutePattern reads the route a router has set on a request: on
		// those CheckRoutes builds, none. Said so, rather than every
		// route reported.
		err = m.CheckRoutes(policy.RoutePattern)
		if err == nil || errors.Is(err, middleware.ErrUnknownRoute) || !strings.Contains(err.Error(), "RoutePattern") {
			t.Errorf("CheckRoutes(RoutePattern) = %v, want an error saying it cannot be asked", err)
		}
	})
	t.Run("no routed policy", func(t *testing.T) {
		plain := middleware.MustNew(store, []*policy.Policy{
			fixed("all", 1, time.Minute, peerIP),
			fixed("writes", 1, time.Minute, peerIP, policy.WithMethods("POST", "PUT")),
		}, middleware.CheckForwarding(false))
		calls := 0
		if err := plain.CheckRoutes(func(*http.Request) string { calls++; return "" }); err != nil || calls != 0 {
			t.Errorf("CheckRoutes with no routed policy = %v after %d lookups, want nil after none", err, calls)
		}
	})
	t.Run("beside SetPolicies", func(t *testing.T) {
		mux := http.NewServeMux()
		mux.Handle("POST /login", ok)
		pattern := policy.ServeMuxPattern(mux)
		good := []*policy.Policy{fixed("login", 1, time.Minute, peerIP, policy.WithRoutes("POST /login"))}
		bad := []*policy.Policy{fixed("login", 1, time.Minute, peerIP, policy.WithRoutes("POST /logn"))}
		m := middleware.MustNew(store, good, middleware.CheckForwarding(false))
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range 200 {
				ps := good
				if i%2 == 0 {
					ps = bad
				}
				if err := m.SetPolicies(ps); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range 200 {
				err := m.CheckRoutes(pattern)
				if err != nil && (!errors.Is(err, middleware.ErrUnknownRoute) || !strings.Contains(err.Error(), `"POST /logn"`)) {
					t.Errorf("CheckRoutes during SetPolicies = %v", err)
					return
				}
			}
		}()
		wg.Wait()
	})
}

// TestCheckRoutesReviewConfig: the rules of a configuration file, loaded
// (policy.Load) and applied at a reload (ApplyConfig), are the ones
// checked: a route the file misspells is reported, with the file's
// policy name, and the right file passes.
func TestCheckRoutesReviewConfig(t *testing.T) {
	dir := t.TempDir()
	load := func(routes string) *policy.Config {
		t.Helper()
		path := dir + "/ratekeeper.yaml"
		data := "version: 1\npolicies:\n  - {name: per-ip, limit: 100, window: 1m}\n" +
			"  - {name: login, limit: 5, window: 1m, routes: [" + routes + "]}\n" +
			"  - {name: search, limit: 5, window: 1m, methods: [GET], routes: [\"/search\"]}\n"
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := policy.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	store, _ := newStore(t)
	mux := http.NewServeMux()
	mux.Handle("POST /login", ok)
	mux.Handle("GET /search", ok)
	m, err := middleware.FromConfig(store, load(`"POST /login"`), middleware.WithPatternFunc(policy.ServeMuxPattern(mux)), middleware.CheckForwarding(false))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CheckRoutes(nil); err != nil {
		t.Errorf("CheckRoutes on the right file = %v", err)
	}
	if err := m.ApplyConfig(load(`"POST /logn"`)); err != nil {
		t.Fatal(err)
	}
	if err := m.CheckRoutes(nil); !errors.Is(err, middleware.ErrUnknownRoute) || !strings.Contains(err.Error(), `policy "login", route "POST /logn"`) {
		t.Errorf("CheckRoutes after a reload with a typo = %v", err)
	}
}
