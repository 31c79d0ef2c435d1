package reload_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"go.uber.org/goleak"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// loginConfig is a file whose one policy, one request an hour, applies
// on route.
func loginConfig(route string) string {
	return "policies:\n  - {name: login, limit: 1, window: 1h, algorithm: fixed_window, routes: [\"" + route + "\"]}\n"
}

// TestCheckRefusesUnknownRoute: a reload naming a route the router does
// not have ("POST /logn"), which CheckRoutes refuses at start, is
// refused the same way when the Watcher is given the check (WithCheck
// with Middleware.CheckConfigRoutes): the rules in force keep running,
// the OnReload hook and Reload get the error, wrapping
// middleware.ErrUnknownRoute; a file whose routes the router has is
// applied. Through a real chi router and a real ServeMux, each limiter
// installed before routing with the router's pattern function.
func TestCheckRefusesUnknownRoute(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	ok := func(w http.ResponseWriter, r *http.Request) {}
	// build makes the router, its limiter made by mk with the router's
	// pattern function and installed before routing.
	routers := []struct {
		name  string
		home  string // the router's route of GET /
		build func(mk func(pattern func(*http.Request) string) *middleware.Middleware) http.Handler
	}{
		{"chi", "GET /", func(mk func(func(*http.Request) string) *middleware.Middleware) http.Handler {
			r := chi.NewRouter()
			r.Use(mk(policy.ChiPattern(r)).Handler)
			r.Get("/", ok)
			r.Post("/login", ok)
			return r
		}},
		{"ServeMux", "GET /{$}", func(mk func(func(*http.Request) string) *middleware.Middleware) http.Handler {
			mux := http.NewServeMux()
			mux.HandleFunc("GET /{$}", ok)
			mux.HandleFunc("POST /login", ok)
			return mk(policy.ServeMuxPattern(mux)).Handler(mux)
		}},
	}
	for _, rt := range routers {
		t.Run(rt.name, func(t *testing.T) {
			path, cfg := loaded(t, loginConfig("POST /login"))
			store, err := algorithms.NewMemoryStore(algorithms.WithClock(algotest.NewClock(time.Unix(1_700_000_000, 0))))
			if err != nil {
				t.Fatal(err)
			}
			var m *middleware.Middleware
			h := rt.build(func(pattern func(*http.Request) string) *middleware.Middleware {
				if m, err = middleware.FromConfig(store, cfg, middleware.WithPatternFunc(pattern)); err != nil {
					t.Fatal(err)
				}
				return m
			})
			if err := m.CheckRoutes(nil); err != nil {
				t.Fatalf("CheckRoutes at start: %v", err)
			}
			events := make(chan event, 100)
			w, err := reload.New(path, m.ApplyConfig, reload.InForce(cfg), reload.WithLogger(quiet),
				reload.WithDebounce(20*time.Millisecond), reload.WithGrace(20*time.Millisecond),
				reload.OnReload(func(cfg *policy.Config, err error) { events <- event{cfg, err} }),
				reload.WithCheck(func(c *policy.Config) error { return m.CheckConfigRoutes(c, nil) }))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { w.Close() })

			// post sends POST /login; the second of one client's within
			// the hour is refused while the login policy applies there.
			post := func() int {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/login", nil))
				return rec.Code
			}
			routes := func() []string { return m.Set().Policies()[0].Routes() }

			// The file event's reload.
			writeAtomic(t, path, loginConfig("POST /logn"))
			e := next(t, events)
			if e.err == nil || !errors.Is(e.err, middleware.ErrUnknownRoute) || e.cfg != nil {
				t.Fatalf("file naming POST /logn: OnReload(applied %v, %v), want (nil, an error wrapping ErrUnknownRoute)", e.cfg != nil, e.err)
			}
			if !strings.Contains(e.err.Error(), `"POST /logn"`) {
				t.Errorf("error %q names not the route", e.err)
			}
			if got, want := routes(), []string{"POST /login"}; !slices.Equal(got, want) {
				t.Errorf("routes in force after the refused file: %q, want %q", got, want)
			}
			if w.Config() != cfg {
				t.Errorf("Config() after the refused file is not the Config in force")
			}
			if got, want := []int{post(), post()}, []int{http.StatusOK, http.StatusTooManyRequests}; !slices.Equal(got, want) {
				t.Errorf("POST /login twice after the refused file: %v, want %v (the login limit kept)", got, want)
			}
			// Reload, as on SIGHUP: the same refusal, returned.
			if err := w.Reload(); !errors.Is(err, middleware.ErrUnknownRoute) {
				t.Errorf("Reload() = %v, want an error wrapping ErrUnknownRoute", err)
			}
			if e := next(t, events); !errors.Is(e.err, middleware.ErrUnknownRoute) {
				t.Errorf("OnReload after Reload: %v, want an error wrapping ErrUnknownRoute", e.err)
			}
			if got, want := routes(), []string{"POST /login"}; !slices.Equal(got, want) {
				t.Errorf("routes in force after Reload: %q, want %q", got, want)
			}

			// A file whose routes the router has passes the check.
			writeAtomic(t, path, loginConfig(rt.home))
			if e := next(t, events); e.err != nil || e.cfg == nil {
				t.Fatalf("file naming %s: OnReload(%v, %v), want it applied", rt.home, e.cfg != nil, e.err)
			}
			if got, want := routes(), []string{rt.home}; !slices.Equal(got, want) {
				t.Errorf("routes in force after a good file: %q, want %q", got, want)
			}
			if err := m.CheckRoutes(nil); err != nil {
				t.Errorf("CheckRoutes after a good file: %v", err)
			}
		})
	}
}

// TestCheckConfigRoutesNil: CheckConfigRoutes of no config is an error,
// not a check passed.
func TestCheckConfigRoutesNil(t *testing.T) {
	store, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	_, cfg := loaded(t, loginConfig("POST /login"))
	mux := http.NewServeMux()
	mux.HandleFunc("POST /login", func(http.ResponseWriter, *http.Request) {})
	m, err := middleware.FromConfig(store, cfg, middleware.WithPatternFunc(policy.ServeMuxPattern(mux)))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CheckConfigRoutes(nil, nil); err == nil || err.Error() != "middleware: CheckConfigRoutes: config is nil" {
		t.Errorf("CheckConfigRoutes(nil, nil) = %v, want the nil config's error", err)
	}
	if err := m.CheckConfigRoutes(cfg, nil); err != nil {
		t.Errorf("CheckConfigRoutes of the config in force = %v, want nil", err)
	}
}

// TestWithCheckNil: a nil check is refused by New, naming the option.
func TestWithCheckNil(t *testing.T) {
	path := filepath.Join(t.TempDir(), "limits.yaml")
	_, err := reload.New(path, func(*policy.Config) error { return nil }, reload.WithCheck(nil))
	if err == nil || err.Error() != "reload: WithCheck: check is nil" {
		t.Errorf("New(WithCheck(nil)) = %v, want the option's error", err)
	}
}

// TestCheckInForceUnchecked: the check runs on each new version, not on
// the content in force, and a version it refuses is not applied.
func TestCheckInForceUnchecked(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path, cfg := loaded(t, config(5))
	var checked []int64
	applied := 0
	refuse := errors.New("refused by the test")
	w, err := reload.New(path, func(*policy.Config) error { applied++; return nil }, reload.InForce(cfg), reload.WithLogger(quiet),
		reload.WithCheck(func(c *policy.Config) error {
			checked = append(checked, c.Policies[0].Spec().Limit)
			if c.Policies[0].Spec().Limit == 6 {
				return refuse
			}
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, limit := range []int{6, 7} {
		// Reload, not the events: the Watcher's goroutine may reload too,
		// under the same lock; what it finds is the same content.
		if err := os.WriteFile(path, []byte(config(limit)), 0o644); err != nil {
			t.Fatal(err)
		}
		err := w.Reload()
		if limit == 6 && (!errors.Is(err, refuse) || !strings.HasPrefix(err.Error(), "reload: check "+path+": ")) {
			t.Errorf("Reload of limit 6 = %v, want the check's error behind \"reload: check <path>: \"", err)
		}
		if limit == 7 && err != nil {
			t.Errorf("Reload of limit 7 = %v", err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(checked, 6) || !slices.Contains(checked, 7) || slices.Contains(checked, 5) {
		t.Errorf("checked limits %v, want 6 and 7, never 5 (in force)", checked)
	}
	if got := w.Config().Policies[0].Spec().Limit; got != 7 || applied == 0 {
		t.Errorf("in force after the reloads: limit %d (apply called %d times), want 7", got, applied)
	}
}

// TestCheckRefusalGetsGrace: a version the check refuses, found after a
// file event, is given the grace a file that does not load gets (a file
// cut short may load and fail the check: "POST /lo" for "POST /login"):
// finished within it, it is applied and nothing is reported; left so, it
// is reported once the grace is over, and once.
func TestCheckRefusalGetsGrace(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	refuse := errors.New("limit below 5: cut short?")
	check := reload.WithCheck(func(c *policy.Config) error {
		if c.Policies[0].Spec().Limit < 5 {
			return refuse
		}
		return nil
	})
	fw := newFakeWatch(t, filepath.Join(t.TempDir(), "rk.yaml"), config(5), check)
	if err := os.WriteFile(fw.path, []byte(config(1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if e, reported := fw.drive(t, untilGrace); reported {
		t.Fatalf("the refused version was reported at once: %v, want a grace", e.err)
	}
	if err := os.WriteFile(fw.path, []byte(config(10)), 0o644); err != nil {
		t.Fatal(err)
	}
	if e, _ := fw.drive(t, nil); e.err != nil || fw.limit.Load() != 10 {
		t.Fatalf("finished within the grace: %v, limit %d, want 10 applied", e.err, fw.limit.Load())
	}

	if err := os.WriteFile(fw.path, []byte(config(2)), 0o644); err != nil {
		t.Fatal(err)
	}
	e, _ := fw.drive(t, nil)
	if !errors.Is(e.err, refuse) || e.cfg != nil || fw.limit.Load() != 10 {
		t.Fatalf("left refused: OnReload(applied %v, %v), limit %d; want the check's error after the grace, 10 in force", e.cfg != nil, e.err, fw.limit.Load())
	}
	if now := fw.clock.Now(); now.Sub(fw.start) < fakeGrace {
		t.Errorf("reported %v after the start, before a grace of %v", now.Sub(fw.start), fakeGrace)
	}
	if err := os.Chmod(fw.path, 0o600); err != nil { // an event, the same content
		t.Fatal(err)
	}
	fw.settle(t)
}
