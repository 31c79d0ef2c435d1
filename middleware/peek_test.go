package middleware_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// loginApp is a login endpoint behind a global policy (10/min per user)
// and a strict one on POST /login (3/min per user), routed by chi or by a
// ServeMux: a login with password "right" clears the strict policy's
// count for its user (Middleware.Reset), a wrong one is answered 401.
func loginApp(t *testing.T, mux string, opts ...middleware.Option) (global, strict *middleware.Middleware, h http.Handler) {
	t.Helper()
	store, _ := newStore(t)
	global = middleware.MustNew(store, []*policy.Policy{fixed("global", 10, time.Minute, user)}, opts...)
	strict = middleware.MustNew(store, []*policy.Policy{fixed("login", 3, time.Minute, user)}, opts...)
	login := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Password") != "right" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if err := strict.Reset(r, "login"); err != nil {
			t.Errorf("Reset: %v", err)
		}
	})
	if mux == "chi" {
		r := chi.NewRouter()
		r.Use(global.Handler)
		r.With(strict.Handler).Post("/login", login)
		r.Get("/", ok)
		return global, strict, r
	}
	sm := http.NewServeMux()
	sm.Handle("POST /login", strict.Handler(login))
	sm.Handle("GET /", ok)
	return global, strict, global.Handler(sm)
}

// TestResetAfterSuccessfulLogin: a user who failed twice and then signs
// in has the strict policy's count cleared by the login handler
// (Middleware.Reset): three more failures pass before a 429, where
// without the reset the next one would have been refused. The global
// policy, not named, keeps counting. Through a real server, chi and
// ServeMux.
func TestResetAfterSuccessfulLogin(t *testing.T) {
	for _, mux := range []string{"chi", "ServeMux"} {
		t.Run(mux, func(t *testing.T) {
			_, _, h := loginApp(t, mux)
			srv := httptest.NewServer(h)
			defer srv.Close()
			post := func(password string) *http.Response {
				req, err := http.NewRequest("POST", srv.URL+"/login", nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("X-User", "ann")
				req.Header.Set("X-Password", password)
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp
			}
			for i, tt := range []struct {
				password string
				status   int
				limit    string // the RateLimit field line's start
			}{
				{"wrong", 401, `"login";r=2;`},
				{"wrong", 401, `"login";r=1;`},
				{"right", 200, `"login";r=0;`}, // headers written before the reset
				{"wrong", 401, `"login";r=2;`},
				{"wrong", 401, `"login";r=1;`},
				{"wrong", 401, `"login";r=0;`},
				{"wrong", 429, `"login";r=0;`},
			} {
				resp := post(tt.password)
				lines := strings.Join(resp.Header.Values("RateLimit"), ", ")
				if resp.StatusCode != tt.status || !strings.Contains(lines, tt.limit) {
					t.Fatalf("login %d (%s): %d, RateLimit %q; want %d and %s", i, tt.password, resp.StatusCode, lines, tt.status, tt.limit)
				}
				// The global policy is never reset: 10 - (i+1) left.
				if want := fmt.Sprintf(`"global";r=%d;`, 10-(i+1)); !strings.Contains(lines, want) {
					t.Fatalf("login %d: RateLimit %q, want %s", i, lines, want)
				}
			}
		})
	}
}

// TestPeekConsumesNothing: Peek reports for a request what the middleware
// would decide (each policy's decision, Allowed, RetryAfter; Remaining the
// units left before it) and consumes nothing: peeking again changes
// nothing, and the next request served is decided as peeked, one unit
// fewer left when admitted. Once the strict policy is spent, Peek says
// the request would be denied, by it alone.
func TestPeekConsumesNothing(t *testing.T) {
	_, strict, h := loginApp(t, "chi")
	login := func() *http.Request {
		r := httptest.NewRequest("POST", "/login", nil)
		r.Header.Set("X-User", "bob")
		return r
	}
	for i := range 4 {
		var first int64
		for range 3 {
			res, err := strict.Peek(login())
			if err != nil {
				t.Fatal(err)
			}
			if !res.Peeked() || res.Len() != 1 || res.Policy(0).Name() != "login" {
				t.Fatalf("peek %d: Peeked %v, %d policies; want the login policy, peeked", i, res.Peeked(), res.Len())
			}
			d := res.Decision(0)
			if want := i < 3; d.Allowed != want || res.Allowed() != want {
				t.Fatalf("peek before login %d: %+v, Allowed %v; want allowed %v", i, d, res.Allowed(), want)
			}
			if want := max(0, int64(3-i)); d.Remaining != want {
				t.Fatalf("peek before login %d: Remaining %d, want %d", i, d.Remaining, want)
			}
			if i == 3 && res.RetryAfter() != time.Minute {
				t.Fatalf("peek of a spent policy: RetryAfter %v, want 1m", res.RetryAfter())
			}
			first = max(0, d.Remaining-1) // what the Take reports
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, login())
		wantStatus := 401
		if i == 3 {
			wantStatus = 429
		}
		if w.Code != wantStatus || !strings.Contains(strings.Join(w.Header().Values("RateLimit"), ", "), fmt.Sprintf(`"login";r=%d;`, first)) {
			t.Fatalf("login %d after peeks: %d, RateLimit %q; want %d with r=%d as peeked", i, w.Code, w.Header().Values("RateLimit"), wantStatus, first)
		}
	}
}

// TestPeekAndResetEdges: a request no policy applies to peeks as no
// policies; one the skip function passes over too; a policy without a key
// is an error (*policy.KeyError) for Peek and Reset alike; Reset of a
// name no policy has is an error naming it and resets nothing.
func TestPeekAndResetEdges(t *testing.T) {
	store, _ := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{
		fixed("login", 3, time.Minute, user, policy.WithMethods("POST")),
	}, middleware.WithSkip(func(r *http.Request) bool { return r.Header.Get("X-Health") != "" }))
	get := httptest.NewRequest("GET", "/", nil)
	get.Header.Set("X-User", "ann")
	if res, err := m.Peek(get); err != nil || res.Len() != 0 {
		t.Errorf("peek of a GET no policy applies to: %v, %v; want no policies", res, err)
	}
	skipped := httptest.NewRequest("POST", "/", nil)
	skipped.Header.Set("X-User", "ann")
	skipped.Header.Set("X-Health", "1")
	if res, err := m.Peek(skipped); err != nil || res.Len() != 0 {
		t.Errorf("peek of a skipped request: %v, %v; want no policies", res, err)
	}
	anon := httptest.NewRequest("POST", "/", nil)
	var ke *policy.KeyError
	if _, err := m.Peek(anon); !errors.As(err, &ke) {
		t.Errorf("peek without a key: %v, want a *policy.KeyError", err)
	}
	if err := m.Reset(anon); !errors.As(err, &ke) {
		t.Errorf("reset without a key: %v, want a *policy.KeyError", err)
	}
	post := httptest.NewRequest("POST", "/", nil)
	post.Header.Set("X-User", "ann")
	for range 3 {
		serve(m.Handler(ok), "POST", "/", "X-User", "ann")
	}
	if err := m.Reset(post, "login", "nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("reset of an unknown name: %v, want an error naming it", err)
	}
	if w := serve(m.Handler(ok), "POST", "/", "X-User", "ann"); w.Code != 429 {
		t.Errorf("after a failed reset: %d, want 429 (nothing reset)", w.Code)
	}
	if err := m.Reset(post); err != nil {
		t.Fatal(err)
	}
	if w := serve(m.Handler(ok), "POST", "/", "X-User", "ann"); w.Code != 200 {
		t.Errorf("after a reset of every policy: %d, want 200", w.Code)
	}
}

// TestResetKeyFromTheLog: an operator copies a refused client's key from
// the Result (as the log gives it with LogRawKeys) and lifts its limit
// with ResetKey; other clients are untouched. Keys without a policy's name
// are errors.
func TestResetKeyFromTheLog(t *testing.T) {
	store, _ := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{fixed("per-user", 1, time.Minute, user)})
	var key string
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, _ := middleware.FromContext(r.Context())
		key = strings.Clone(res.Key(0))
	}))
	for _, u := range []string{"ann", "bob"} {
		if w := serve(h, "GET", "/", "X-User", u); w.Code != 200 {
			t.Fatalf("%s: %d", u, w.Code)
		}
	}
	if key != "per-user:bob" {
		t.Fatalf("key %q, want per-user:bob", key)
	}
	for _, bad := range []string{"bob", "nope:bob", "per-user:"} {
		if err := m.ResetKey(context.Background(), bad); err == nil {
			t.Errorf("ResetKey(%q): no error", bad)
		}
	}
	if err := m.ResetKey(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	if w := serve(h, "GET", "/", "X-User", "bob"); w.Code != 200 {
		t.Errorf("bob after ResetKey: %d, want 200", w.Code)
	}
	if w := serve(h, "GET", "/", "X-User", "ann"); w.Code != 429 {
		t.Errorf("ann, not reset: %d, want 429", w.Code)
	}
}

// takeOnly is a store that can only Take.
type takeOnly struct{ algorithms.Store }

// TestPeekResetUnsupported: a store that can neither peek nor forget keys
// is an error wrapping errors.ErrUnsupported, not a silent success; with a
// fallback store that can, Reset still forgets the key there and reports
// the store's error.
func TestPeekResetUnsupported(t *testing.T) {
	mem, _ := newStore(t)
	fb, _ := newStore(t)
	m := middleware.MustNew(takeOnly{mem}, []*policy.Policy{fixed("u", 1, time.Minute, user)},
		middleware.OnStoreError(middleware.FallBack(fb)))
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-User", "ann")
	if _, err := m.Peek(r); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Peek: %v, want errors.ErrUnsupported", err)
	}
	// Spend the fallback's allowance directly, then reset through m.
	if _, err := fb.Take(context.Background(), algorithms.Check{Spec: m.Set().Policy(0).Spec(), Key: "u:ann"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Reset(r); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Reset: %v, want errors.ErrUnsupported", err)
	}
	ds, err := fb.Take(context.Background(), algorithms.Check{Spec: m.Set().Policy(0).Spec(), Key: "u:ann"})
	if err != nil || !ds[0].Allowed {
		t.Errorf("fallback after Reset: %+v, %v; want the key forgotten there (admitted)", ds, err)
	}
}

// TestPeekResetErrorsNameTheCall: the error of each call names it once,
// as its other errors do ("middleware: ResetKey: no policy named ..."),
// the fallback store's too. Before the fix a ResetKey on a store that
// cannot forget keys said "middleware: reset: middleware: store ...", and
// Peek and Reset "middleware: peek:" and "middleware: reset:".
func TestPeekResetErrorsNameTheCall(t *testing.T) {
	mem, _ := newStore(t)
	m := middleware.MustNew(takeOnly{mem}, []*policy.Policy{fixed("u", 1, time.Minute, user)},
		middleware.OnStoreError(middleware.FallBack(takeOnly{mem})))
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-User", "ann")
	_, peekErr := m.Peek(r)
	for _, c := range []struct {
		call string
		err  error
	}{
		{"Peek", peekErr},
		{"Reset", m.Reset(r)},
		{"ResetKey", m.ResetKey(context.Background(), "u:ann")},
	} {
		if c.err == nil {
			t.Errorf("%s: nil error, want one", c.call)
			continue
		}
		fallback := false
		for _, line := range strings.Split(c.err.Error(), "\n") {
			if !strings.HasPrefix(line, "middleware: "+c.call+": ") || strings.Count(line, "middleware:") != 1 {
				t.Errorf("%s: error line %q, want it to begin \"middleware: %s: \" and name the package once", c.call, line, c.call)
			}
			fallback = fallback || strings.HasPrefix(line, "middleware: "+c.call+": fallback: ")
		}
		// Reset and ResetKey forget keys in the fallback store too, and
		// report its error beside the store's.
		if want := c.call != "Peek"; fallback != want {
			t.Errorf("%s: error %q reports the fallback store: %v, want %v", c.call, c.err, fallback, want)
		}
	}
}

// TestResetInMountedChiRoute: a login route in a chi sub-router (r.Route,
// r.Mount) under a limiter installed with a top-level r.Use and
// ChiPattern, as the README installs it; the login handler resets the
// client under the route's policy (WithRoutes), and under one keyed by
// route (keyfunc.Route). In the handler chi has routed the request into
// the sub-router, its RoutePath the sub-router's ("/login"): Reset and
// Peek must still find the route, "/api/login". Before the fix ChiPattern
// looked "/login" up from the top and found no route, so Peek reported no
// policy and Reset forgot nothing (the route policy did not apply, the
// route key was "(none)"): the next failures were refused as if the user
// had never signed in.
func TestResetInMountedChiRoute(t *testing.T) {
	route := keyfunc.Must(keyfunc.Join(user, keyfunc.Route()))
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 2, Window: time.Minute}
	for _, tc := range []struct {
		name  string
		p     *policy.Policy
		mount bool
	}{
		{"route policy, r.Route", policy.Must(policy.New("login", spec, user, policy.WithRoutes("POST /api/login"))), false},
		{"route policy, r.Mount", policy.Must(policy.New("login", spec, user, policy.WithRoutes("POST /api/login"))), true},
		{"route key, r.Route", policy.Must(policy.New("login", spec, route)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, _ := newStore(t)
			rt := chi.NewRouter()
			m := middleware.MustNew(store, []*policy.Policy{tc.p}, middleware.WithPatternFunc(policy.ChiPattern(rt)))
			login := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				res, err := m.Peek(r)
				if err != nil || res.Len() != 1 {
					n := -1
					if res != nil {
						n = res.Len()
					}
					t.Errorf("Peek in the handler: %d policies, %v; want the login policy", n, err)
				}
				served, _ := middleware.FromContext(r.Context())
				if err == nil && res.Len() == 1 && res.Key(0) != served.Key(0) {
					t.Errorf("Peek in the handler: key %q, the request was served under %q", res.Key(0), served.Key(0))
				}
				if r.Header.Get("X-Password") != "right" {
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				if err := m.Reset(r, "login"); err != nil {
					t.Errorf("Reset: %v", err)
				}
			})
			rt.Use(m.Handler)
			if tc.mount {
				sub := chi.NewRouter()
				sub.Post("/login", login)
				rt.Mount("/api", sub)
			} else {
				rt.Route("/api", func(sub chi.Router) { sub.Post("/login", login) })
			}
			srv := httptest.NewServer(rt)
			defer srv.Close()
			loginAfterReset(t, srv)
		})
	}
}

// TestResetBehindStripPrefix: a limiter around a ServeMux that hands /api/
// to another behind http.StripPrefix; the login handler there sees the
// path /login, not the /api/login the limiter decided. Reset and Peek of
// the request it serves read it as the limiter saw it: the route policy
// on "/api/" applies, under the key the request was counted under. Before
// the fix they looked at the stripped request, which the outer mux routes
// to "/": no policy applied, Peek reported none and Reset forgot nothing.
// With another limiter around the login handler, behind the strip (its
// own policies, its own Set), they still read the request as this one
// saw it, not as the nearer limiter did.
func TestResetBehindStripPrefix(t *testing.T) {
	t.Run("alone", func(t *testing.T) { resetBehindStripPrefix(t, false) })
	t.Run("another limiter inside", func(t *testing.T) { resetBehindStripPrefix(t, true) })
}

func resetBehindStripPrefix(t *testing.T, another bool) {
	store, _ := newStore(t)
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 2, Window: time.Minute}
	var m *middleware.Middleware
	login := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, err := m.Peek(r)
		served, _ := middleware.FromContext(r.Context())
		if another {
			// The nearer limiter's Result is the one in reach; the login
			// policy's key is its own key function's.
			if served.Len() != 1 || served.Policy(0).Name() != "near" {
				t.Fatalf("FromContext: %d policies, want the near limiter's one", served.Len())
			}
		}
		want := served.Key(0)
		if another {
			want = "login" + strings.TrimPrefix(want, "near")
		}
		if err != nil || res.Len() != 1 || res.Policy(0).Name() != "login" || res.Key(0) != want {
			n := -1
			if res != nil {
				n = res.Len()
			}
			t.Errorf("Peek in the handler of %s: %d policies, %v; want the login policy under %q", r.URL.Path, n, err, want)
		}
		if r.Header.Get("X-Password") != "right" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if err := m.Reset(r); err != nil {
			t.Errorf("Reset: %v", err)
		}
	})
	inner := http.NewServeMux()
	if another {
		near := middleware.MustNew(store, []*policy.Policy{
			policy.Must(policy.Per("near", 1000, time.Minute, user)),
		})
		inner.Handle("POST /login", near.Handler(login))
	} else {
		inner.Handle("POST /login", login)
	}
	outer := http.NewServeMux()
	outer.Handle("/api/", http.StripPrefix("/api", inner))
	outer.Handle("/", ok)
	m = middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.New("login", spec, user, policy.WithRoutes("/api/"))),
	}, middleware.WithPatternFunc(policy.ServeMuxPattern(outer)))
	srv := httptest.NewServer(m.Handler(outer))
	defer srv.Close()
	loginAfterReset(t, srv)
}

// loginAfterReset posts to srv's /api/login under a login policy of 2 per
// minute whose handler resets it on the right password: a failure, a
// success (the reset), then two failures pass and a third is refused.
func loginAfterReset(t *testing.T, srv *httptest.Server) {
	t.Helper()
	for i, tt := range []struct {
		password string
		status   int
	}{
		{"wrong", 401}, {"right", 200}, // reset: two more failures pass
		{"wrong", 401}, {"wrong", 401}, {"wrong", 429},
	} {
		req, err := http.NewRequest("POST", srv.URL+"/api/login", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-User", "ann")
		req.Header.Set("X-Password", tt.password)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Fatalf("login %d (%s): %d, want %d", i, tt.password, resp.StatusCode, tt.status)
		}
	}
}

// TestPeekResetNotCountedUnrouted: a Peek or Reset of a request whose
// route the middleware cannot know (installed before routing, no pattern
// function) is no request served: it leaves Stats().Unrouted and the
// one-time ErrUnrouted report to the requests served. Before, each Peek
// and Reset counted one, and the first spent the report.
func TestPeekResetNotCountedUnrouted(t *testing.T) {
	store, _ := newStore(t)
	var got reports
	m := middleware.MustNew(store, []*policy.Policy{
		fixed("login", 3, time.Minute, user, policy.WithRoutes("POST /login")),
	}, got.handler())
	r := httptest.NewRequest("POST", "/login", nil)
	r.Header.Set("X-User", "ann")
	if _, err := m.Peek(r); err != nil {
		t.Fatal(err)
	}
	if err := m.Reset(r); err != nil {
		t.Fatal(err)
	}
	if st := m.Stats(); st.Unrouted != 0 || len(got.of(middleware.ErrUnrouted)) != 0 {
		t.Fatalf("after a Peek and a Reset: Unrouted %d, reports %v; want none", st.Unrouted, got.of(middleware.ErrUnrouted))
	}
	serve(m.Handler(ok), "POST", "/login", "X-User", "ann")
	if st := m.Stats(); st.Unrouted != 1 || len(got.of(middleware.ErrUnrouted)) != 1 {
		t.Errorf("after a request served: Unrouted %d, %d reports; want 1 and 1", st.Unrouted, len(got.of(middleware.ErrUnrouted)))
	}
}

// TestResetWithFallbackStore: with a fallback store that can forget keys,
// Reset and ResetKey forget the key in both stores and, both succeeding,
// return nil.
func TestResetWithFallbackStore(t *testing.T) {
	mem, _ := newStore(t)
	fb, _ := newStore(t)
	m := middleware.MustNew(mem, []*policy.Policy{fixed("u", 1, time.Minute, user)},
		middleware.OnStoreError(middleware.FallBack(fb)))
	c := algorithms.Check{Spec: m.Set().Policy(0).Spec(), Key: "u:ann"}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-User", "ann")
	for _, call := range []struct {
		name  string
		reset func() error
	}{
		{"Reset", func() error { return m.Reset(r) }},
		{"ResetKey", func() error { return m.ResetKey(context.Background(), "u:ann") }},
	} {
		for _, s := range []algorithms.Store{mem, fb} {
			if _, err := s.Take(context.Background(), c); err != nil {
				t.Fatal(err)
			}
		}
		if err := call.reset(); err != nil {
			t.Errorf("%s: %v, want nil", call.name, err)
		}
		for i, s := range []algorithms.Store{mem, fb} {
			ds, err := s.Take(context.Background(), c)
			if err != nil || !ds[0].Allowed {
				t.Errorf("%s: store %d after it: %+v, %v; want the key forgotten (admitted)", call.name, i, ds, err)
			}
		}
	}
}
