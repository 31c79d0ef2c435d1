package middleware_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// routed returns m's handler of ok behind a ServeMux ("mux") or a chi
// router ("chi").
func routed(router string, m *middleware.Middleware) http.Handler {
	if router == "chi" {
		r := chi.NewRouter()
		r.Use(m.Handler)
		r.Get("/", ok.ServeHTTP)
		return r
	}
	mux := http.NewServeMux()
	mux.Handle("GET /", m.Handler(ok))
	return mux
}

// serveFrom serves a GET / from the client at addr.
func serveFrom(h http.Handler, addr string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = addr
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// seen is what a client sees of a response: its status and rate-limit
// fields.
func seen(w *httptest.ResponseRecorder) string {
	h := w.Header()
	return fmt.Sprintf("%d RateLimit-Policy=%q RateLimit=%q Retry-After=%q", w.Code, h.Get("RateLimit-Policy"), h.Get("RateLimit"), h.Get("Retry-After"))
}

// TestReloadEquivalentSpecChangesNothing: a token_bucket or leaky_bucket
// whose burst is written out at its limit ("burst: 10" beside "limit:
// 10") is the bucket whose burst is left to default: one Spec, so that a
// reload from one spelling to the other changes nothing a client sees. A
// client under a middleware reloaded from one to the other and back,
// through a ServeMux and through chi, on the memory store and on Redis,
// gets every response (status, RateLimit, RateLimit-Policy, Retry-After)
// its twin under a middleware never reloaded gets, request for request,
// over a trace that runs both out of tokens again and again; and the
// reloaded policy has the Spec it had, unguarded.
func TestReloadEquivalentSpecChangesNothing(t *testing.T) {
	for _, name := range storetest.Names {
		t.Run(name, func(t *testing.T) {
			clock := algotest.NewClock(t0)
			store := storetest.New(t, name, clock)
			k := 0
			for _, kind := range []algorithms.Kind{algorithms.TokenBucket, algorithms.LeakyBucket} {
				defaulted := algorithms.Spec{Algorithm: kind, Limit: 10, Window: time.Minute}
				explicit := defaulted
				explicit.Burst = 10
				for _, dir := range []struct {
					name     string
					from, to algorithms.Spec
				}{{"defaulted to explicit", defaulted, explicit}, {"explicit to defaulted", explicit, defaulted}} {
					for _, router := range []string{"mux", "chi"} {
						k++
						a, b := fmt.Sprintf("192.0.2.%d:1", k), fmt.Sprintf("198.51.100.%d:1", k) // the twins, one key each
						t.Run(fmt.Sprintf("%s/%s/%s", kind, dir.name, router), func(t *testing.T) {
							pol := func(s algorithms.Spec) []*policy.Policy {
								return []*policy.Policy{policy.Must(policy.New("p", s, remote))}
							}
							kept := routed(router, middleware.MustNew(store, pol(dir.from), middleware.WithClock(clock)))
							m := middleware.MustNew(store, pol(dir.from), middleware.WithClock(clock))
							reloaded := routed(router, m)
							before := m.Set().Policy(0).Spec()
							rng := rand.New(rand.NewPCG(1, uint64(k)))
							steps := []time.Duration{0, 0, 250 * time.Millisecond, time.Second, 2 * time.Second, 6 * time.Second, 15 * time.Second}
							for i := range 240 {
								switch i {
								case 80, 160:
									s := dir.to
									if i == 160 {
										s = dir.from
									}
									if err := m.SetPolicies(pol(s)); err != nil {
										t.Fatal(err)
									}
									p := m.Set().Policy(0)
									if g, ok := p.Guard(); p.Spec() != before || ok {
										t.Errorf("step %d, reloaded as %v: Spec %v, guard %v %v; want the Spec it had (%v), unguarded", i, s, p.Spec(), g, ok, before)
									}
								}
								clock.Advance(steps[rng.IntN(len(steps))])
								for range 1 + rng.IntN(3) {
									if got, want := seen(serveFrom(reloaded, b)), seen(serveFrom(kept, a)); got != want {
										t.Fatalf("step %d: the reloaded middleware answers %s; the one never reloaded %s", i, got, want)
									}
								}
							}
						})
					}
				}
			}
		})
	}
}
