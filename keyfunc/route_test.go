package keyfunc_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// keyRecorder is a middleware that records what f returns for each request.
type keyRecorder struct {
	f    keyfunc.Func
	keys []string
	errs []error
}

func (k *keyRecorder) mw(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := k.f(r)
		k.keys, k.errs = append(k.keys, key), append(k.errs, err)
		next.ServeHTTP(w, r)
	})
}

func serve(h http.Handler, paths ...string) {
	for _, p := range paths {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, p, nil))
	}
}

var noop = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})

func TestRoute_TwoUsersShareTheRoutePattern(t *testing.T) {
	tests := []struct {
		name  string
		build func(k *keyRecorder) http.Handler
		paths []string
		want  string
	}{
		{
			name: "ServeMux handler wrapped",
			build: func(k *keyRecorder) http.Handler {
				mux := http.NewServeMux()
				mux.Handle("GET /users/{id}", k.mw(noop))
				return mux
			},
			paths: []string{"/users/1", "/users/2"},
			want:  "GET /users/{id}",
		},
		{
			name: "chi inline With",
			build: func(k *keyRecorder) http.Handler {
				r := chi.NewRouter()
				r.With(k.mw).Get("/users/{id}", noop)
				return r
			},
			paths: []string{"/users/1", "/users/2"},
			want:  "/users/{id}",
		},
		{
			name: "chi inline With under a ServeMux",
			build: func(k *keyRecorder) http.Handler {
				r := chi.NewRouter()
				r.With(k.mw).Get("/users/{id}", noop)
				mux := http.NewServeMux()
				mux.Handle("/", r)
				return mux
			},
			paths: []string{"/users/1", "/users/2"},
			want:  "/users/{id}",
		},
		{
			name: "ServeMux mounted in chi",
			build: func(k *keyRecorder) http.Handler {
				mux := http.NewServeMux()
				mux.Handle("GET /legacy/users/{id}", k.mw(noop))
				r := chi.NewRouter()
				r.Mount("/legacy", mux)
				return r
			},
			paths: []string{"/legacy/users/1", "/legacy/users/2"},
			want:  "GET /legacy/users/{id}",
		},
		{
			name: "chi mounted sub-router, inline With",
			build: func(k *keyRecorder) http.Handler {
				sub := chi.NewRouter()
				sub.With(k.mw).Get("/users/{id}", noop)
				r := chi.NewRouter()
				r.Mount("/api", sub)
				return r
			},
			paths: []string{"/api/users/1", "/api/users/2"},
			want:  "/api/users/{id}",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := &keyRecorder{f: keyfunc.Route()}
			serve(tt.build(k), tt.paths...)
			if len(k.keys) != len(tt.paths) {
				t.Fatalf("middleware ran %d times; want %d", len(k.keys), len(tt.paths))
			}
			for i := range k.keys {
				if k.errs[i] != nil || k.keys[i] != tt.want {
					t.Fatalf("Route() for %s = %q, %v; want %q", tt.paths[i], k.keys[i], k.errs[i], tt.want)
				}
			}
		})
	}
}

// TestRoute_BeforeRoutingIsAnError guards the misplacement the docs warn
// about: a limiter in chi's top-level Use, or wrapping a whole ServeMux,
// runs before routing and must not key every route alike.
func TestRoute_BeforeRoutingIsAnError(t *testing.T) {
	t.Run("chi top-level Use", func(t *testing.T) {
		k := &keyRecorder{f: keyfunc.Route()}
		r := chi.NewRouter()
		r.Use(k.mw)
		r.Get("/users/{id}", noop)
		serve(r, "/users/1")
		if len(k.errs) != 1 || !errors.Is(k.errs[0], keyfunc.ErrNoRoute) || k.keys[0] != "" {
			t.Fatalf("Route() = %q, %v; want ErrNoRoute", k.keys, k.errs)
		}
	})
	// chi served by http.Handle("/", r) on a ServeMux: the mux's "/" is in
	// r.Pattern, but chi has not routed yet; "/" for every route would be
	// the silent merge this test guards against.
	t.Run("chi top-level Use under a ServeMux", func(t *testing.T) {
		k := &keyRecorder{f: keyfunc.Route()}
		r := chi.NewRouter()
		r.Use(k.mw)
		r.Get("/users/{id}", noop)
		r.Get("/orders/{id}", noop)
		mux := http.NewServeMux()
		mux.Handle("/", r)
		serve(mux, "/users/1", "/orders/1")
		for i := range k.errs {
			if !errors.Is(k.errs[i], keyfunc.ErrNoRoute) || k.keys[i] != "" {
				t.Fatalf("Route() = %q, %v; want ErrNoRoute", k.keys, k.errs)
			}
		}
	})
	t.Run("wrapping ServeMux", func(t *testing.T) {
		k := &keyRecorder{f: keyfunc.Route()}
		mux := http.NewServeMux()
		mux.Handle("GET /users/{id}", noop)
		serve(k.mw(mux), "/users/1")
		if len(k.errs) != 1 || !errors.Is(k.errs[0], keyfunc.ErrNoKey) {
			t.Fatalf("Route() = %q, %v; want ErrNoRoute", k.keys, k.errs)
		}
	})
}

// TestRoute_BeforeRoutingEndsFirstOf: a route part behind a fallback,
// before routing, does not fall back: every request would (one bucket per
// client, or for everyone with a constant fallback, across all routes), so
// FirstOf returns ErrNoRoute. Behind Join too. It passed over it.
func TestRoute_BeforeRoutingEndsFirstOf(t *testing.T) {
	for name, f := range map[string]keyfunc.Func{
		"FirstOf(Route, Const)":               keyfunc.Must(keyfunc.FirstOf(keyfunc.Route(), keyfunc.Must(keyfunc.Const("all")))),
		"FirstOf(Join(Route, Header), Const)": keyfunc.Must(keyfunc.FirstOf(keyfunc.Must(keyfunc.Join(keyfunc.Route(), keyfunc.Must(keyfunc.Header("X-Client")))), keyfunc.Must(keyfunc.Const("all")))),
	} {
		t.Run(name, func(t *testing.T) {
			k := &keyRecorder{f: f}
			r := chi.NewRouter()
			r.Use(k.mw)
			r.Get("/users/{id}", noop)
			serve(r, "/users/1")
			if len(k.errs) != 1 || !errors.Is(k.errs[0], keyfunc.ErrNoRoute) || k.keys[0] != "" {
				t.Fatalf("key = %q, %v; want ErrNoRoute", k.keys, k.errs)
			}
		})
	}
}

// TestRoute_WithRouteBeforeRouting: a pattern handed over with WithRoute
// is the key before the router has run (chi's top-level r.Use, a
// middleware around a ServeMux), where Route alone finds none; an empty
// one changes nothing.
func TestRoute_WithRouteBeforeRouting(t *testing.T) {
	f := keyfunc.Route()
	withRoute := func(pattern string) keyfunc.Func {
		return func(r *http.Request) (string, error) {
			return f(r.WithContext(keyfunc.WithRoute(r.Context(), pattern)))
		}
	}
	r := chi.NewRouter()
	top := &keyRecorder{f: withRoute("POST /login")}
	bare := &keyRecorder{f: f}
	empty := &keyRecorder{f: withRoute("")}
	r.Use(top.mw, bare.mw, empty.mw)
	r.Post("/login", func(http.ResponseWriter, *http.Request) {})
	req := httptest.NewRequest("POST", "/login", nil)
	r.ServeHTTP(httptest.NewRecorder(), req)
	if len(top.keys) != 1 || top.keys[0] != "POST /login" || top.errs[0] != nil {
		t.Errorf("with the pattern handed over: %q %v, want \"POST /login\"", top.keys, top.errs)
	}
	for name, k := range map[string]*keyRecorder{"none": bare, "empty": empty} {
		if len(k.errs) != 1 || !errors.Is(k.errs[0], keyfunc.ErrNoRoute) {
			t.Errorf("%s handed over: %q %v, want ErrNoRoute before routing", name, k.keys, k.errs)
		}
	}
}

// TestRouteKeepsServeMuxHost: a ServeMux pattern is the key as
// registered, method and host kept: example.com's /login and the
// host-less /login are two routes, with two keys.
func TestRouteKeepsServeMuxHost(t *testing.T) {
	k := &keyRecorder{f: keyfunc.Route()}
	mux := http.NewServeMux()
	mux.Handle("GET example.com/login", k.mw(noop))
	mux.Handle("GET /login", k.mw(noop))
	serve(mux, "http://example.com/login", "http://other.com/login")
	if want := []string{"GET example.com/login", "GET /login"}; len(k.keys) != 2 || k.keys[0] != want[0] || k.keys[1] != want[1] {
		t.Errorf("keys = %q, %v; want %q", k.keys, k.errs, want)
	}
}
