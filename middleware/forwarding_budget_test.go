package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// probeBudget is how many forwarded requests the forwarding check asks a
// policy's key about once it has found the key not the peer's, as
// ErrForwardingIgnored documents it.
const probeBudget = 32

// countCalls returns key counting its calls in n.
func countCalls(key keyfunc.Func, n *atomic.Int64) keyfunc.Func {
	return func(r *http.Request) (string, error) {
		n.Add(1)
		return key(r)
	}
}

// forwardedFrom returns a request for method and path from the proxy at
// 10.1.0.4 carrying the client's address in X-Forwarded-For and an API
// key, signed in as user unless user is "".
func forwardedFrom(method, path, user string) *http.Request {
	r := httptest.NewRequest(method, path, nil)
	r.RemoteAddr = "10.1.0.4:41000"
	r.Header.Set("X-Forwarded-For", "198.51.100.7")
	r.Header.Set("X-Api-Key", "k-198.51.100.7")
	if user != "" {
		r = r.WithContext(keyfunc.WithUser(r.Context(), user))
	}
	return r
}

// servedBy returns m's handler behind chi or a ServeMux, serving every
// route with ok.
func servedBy(mux string, m *middleware.Middleware) http.Handler {
	if mux == "chi" {
		r := chi.NewRouter()
		r.Use(m.Handler)
		r.HandleFunc("/*", ok)
		return r
	}
	sm := http.NewServeMux()
	sm.Handle("/", m.Handler(ok))
	return sm
}

// TestForwardingCheckAsksKeysOfNoClientIPBoundedly: behind a proxy, the
// forwarding check asked a key of no client IP (a user, an API key, a
// user-or-IP key for a signed-in user) twice more, once on a copy of the
// request, on every request carrying a forwarding header, for as long
// as the middleware served: such a key is never reported, so the check
// never stopped, and an application's key (a JWT's signature checked, an
// API key looked up) cost three times as much for good. It now asks a
// policy's key about probeBudget such requests at most; then the key is
// called once per request, as with the check off. Behind chi and a
// ServeMux.
func TestForwardingCheckAsksKeysOfNoClientIPBoundedly(t *testing.T) {
	const requests = 1000
	apiKey := keyfunc.Must(keyfunc.Header("X-Api-Key"))
	userOrIP := keyfunc.Must(keyfunc.FirstOf(keyfunc.User(), peerIP))
	for _, tc := range []struct {
		name string
		key  keyfunc.Func
	}{
		{"a user key", keyfunc.User()},
		{"an API key", apiKey},
		{"user or IP, signed in", userOrIP},
	} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(mux+"/"+tc.name, func(t *testing.T) {
				// calls serves requests and returns the key's calls
				// over the first and the second half of them.
				calls := func(opts ...middleware.Option) (first, second int64, got *reports) {
					store, _ := newStore(t)
					got = new(reports)
					var n atomic.Int64
					p := fixed("per-user", 1_000_000, time.Minute, countCalls(tc.key, &n))
					m := middleware.MustNew(store, []*policy.Policy{p}, append([]middleware.Option{got.handler()}, opts...)...)
					h := servedBy(mux, m)
					for i := range requests {
						if i == requests/2 {
							first = n.Load()
						}
						w := httptest.NewRecorder()
						h.ServeHTTP(w, forwardedFrom("GET", "/", "ann"))
						if w.Code != http.StatusOK {
							t.Fatalf("request %d: status %d", i, w.Code)
						}
					}
					return first, n.Load() - first, got
				}
				offFirst, offSecond, _ := calls(middleware.CheckForwarding(false))
				onFirst, onSecond, got := calls()
				if reps := got.forwarding(); len(reps) != 0 {
					t.Errorf("reported: %v", reps)
				}
				if onSecond != offSecond {
					t.Errorf("requests %d to %d called the key %d times, %d with the check off: the check still asks it",
						requests/2+1, requests, onSecond, offSecond)
				}
				if extra := onFirst - offFirst; extra > 2*probeBudget {
					t.Errorf("the first %d requests called the key %d times more than with the check off, want at most %d (two calls on each of %d requests)",
						requests/2, extra, 2*probeBudget, probeBudget)
				}
			})
		}
	}
}

// TestForwardingCheckBudgetIsEachPolicys: a policy whose key was found
// not the peer's on probeBudget forwarded requests is asked no more, but
// another policy of the set still is: a per-IP limit on POST trusting no
// proxy is reported at the first forwarded POST after a thousand GETs
// that spent the budget of a user limit on every request.
func TestForwardingCheckBudgetIsEachPolicys(t *testing.T) {
	for _, mux := range []string{"chi", "ServeMux"} {
		t.Run(mux, func(t *testing.T) {
			store, _ := newStore(t)
			var got reports
			var n atomic.Int64
			m := middleware.MustNew(store, []*policy.Policy{
				fixed("per-user", 1_000_000, time.Minute, countCalls(keyfunc.User(), &n)),
				fixed("post-per-ip", 1_000_000, time.Minute, peerIP, policy.WithMethods("POST")),
			}, got.handler())
			h := servedBy(mux, m)
			for range 1000 {
				h.ServeHTTP(httptest.NewRecorder(), forwardedFrom("GET", "/", "ann"))
			}
			if reps := got.forwarding(); len(reps) != 0 {
				t.Fatalf("reported before the login: %v", reps)
			}
			h.ServeHTTP(httptest.NewRecorder(), forwardedFrom("POST", "/login", "ann"))
			reps := got.forwarding()
			if len(reps) != 1 || !strings.Contains(reps[0].Error(), `"post-per-ip"`) {
				t.Errorf("reports %v, want one naming post-per-ip", reps)
			}
		})
	}
}

// TestForwardingCheckUserOrIPWithinTheBudget: a user-or-IP key trusting
// no proxy is reported at the first anonymous forwarded request that
// comes within the budget (after a few signed-in ones); one that comes
// after probeBudget signed-in forwarded requests is not (the check asks
// that key no more), until a new rule set (SetLimit here) starts a new
// budget.
func TestForwardingCheckUserOrIPWithinTheBudget(t *testing.T) {
	userOrIP := keyfunc.Must(keyfunc.FirstOf(keyfunc.User(), peerIP))
	for _, tc := range []struct {
		name     string
		signedIn int
		warns    int
	}{
		{"within the budget", probeBudget - 1, 1},
		{"beyond the budget", probeBudget, 0},
	} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(mux+"/"+tc.name, func(t *testing.T) {
				store, _ := newStore(t)
				var got reports
				m := middleware.MustNew(store, []*policy.Policy{fixed("per-client", 1_000_000, time.Minute, userOrIP)}, got.handler())
				h := servedBy(mux, m)
				for range tc.signedIn {
					h.ServeHTTP(httptest.NewRecorder(), forwardedFrom("GET", "/", "ann"))
				}
				h.ServeHTTP(httptest.NewRecorder(), forwardedFrom("GET", "/", ""))
				if reps := got.forwarding(); len(reps) != tc.warns {
					t.Fatalf("%d reports, want %d: %v", len(reps), tc.warns, reps)
				}
				if tc.warns > 0 {
					return
				}
				if err := m.SetLimit("per-client", 999_999); err != nil {
					t.Fatal(err)
				}
				h.ServeHTTP(httptest.NewRecorder(), forwardedFrom("GET", "/", ""))
				if reps := got.forwarding(); len(reps) != 1 {
					t.Errorf("after SetLimit: %d reports, want 1: %v", len(reps), reps)
				}
			})
		}
	}
}
