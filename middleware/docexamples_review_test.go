package middleware_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// docRouters returns the two routers of the documentation's examples, each
// serving GET / behind m: chi with r.Use, and a ServeMux wrapped whole.
func docRouters(m *middleware.Middleware) map[string]http.Handler {
	r := chi.NewRouter()
	r.Use(m.Handler)
	r.Get("/", ok)
	mux := http.NewServeMux()
	mux.Handle("GET /", ok)
	return map[string]http.Handler{"chi": r, "ServeMux": m.Handler(mux)}
}

// docPolicies are the policies of the documentation's examples, as fixed
// windows: 10 per second and 100 per minute per client.
func docPolicies() []*policy.Policy {
	return []*policy.Policy{fixed("per-second", 10, time.Second, remote), fixed("per-minute", 100, time.Minute, remote)}
}

// TestDocHeaderExamples: the header lines the package documentation, the
// IETF and Draft7 profiles' documentation and the README show are what
// the middleware sends, byte for byte, through chi and a ServeMux: with 4
// requests at the start of a minute and 3 more 8 s in, the third of those
// leaves 7 of the second's 10 (1 s to its end) and 93 of the minute's 100
// (52 s to its end).
func TestDocHeaderExamples(t *testing.T) {
	for _, tc := range []struct {
		profile      middleware.Profile
		policy, rate string
	}{
		{middleware.IETF, `"per-second";q=10;w=1, "per-minute";q=100;w=60`, `"per-second";r=7;t=1, "per-minute";r=93;t=52`},
		{middleware.Draft7, `10;w=1, 100;w=60`, `limit=10, remaining=7, reset=1`},
	} {
		for _, router := range []string{"chi", "ServeMux"} {
			store, clock := newStore(t)
			h := docRouters(middleware.MustNew(store, docPolicies(), middleware.WithHeaders(tc.profile), middleware.WithClock(clock)))[router]
			var w interface{ Header() http.Header }
			for i := range 7 {
				if i == 4 {
					clock.Advance(8 * time.Second)
				}
				w = serve(h, "GET", "/")
			}
			hd := w.Header()
			if got := hd.Values("RateLimit-Policy"); len(got) != 1 || got[0] != tc.policy {
				t.Errorf("%s, %s: RateLimit-Policy %q, want %q", tc.profile, router, got, tc.policy)
			}
			if got := hd.Values("RateLimit"); len(got) != 1 || got[0] != tc.rate {
				t.Errorf("%s, %s: RateLimit %q, want %q", tc.profile, router, got, tc.rate)
			}
		}
	}
}

// docProblem is the package documentation's 429 body.
const docProblem = `{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded",
 "title":"Too Many Requests","status":429,
 "detail":"Quota exceeded for per-minute; retry in 30 seconds.",
 "violated-policies":["per-minute"]}`

// TestDocProblemExample: the 429 the package documentation shows, through
// chi and a ServeMux: 100 requests, 10 in each second from 20 s into the
// minute, use up the minute; the next, 30 s before its end, is denied by
// the minute alone (the second has all 10 left): 429, Retry-After 30,
// Cache-Control: no-store, and the body shown, as application/problem+json.
func TestDocProblemExample(t *testing.T) {
	var want bytes.Buffer
	if err := json.Compact(&want, []byte(docProblem)); err != nil {
		t.Fatal(err)
	}
	for _, router := range []string{"chi", "ServeMux"} {
		store, clock := newStore(t)
		h := docRouters(middleware.MustNew(store, docPolicies(), middleware.WithClock(clock)))[router]
		clock.Advance(20 * time.Second)
		for i := range 100 {
			if i > 0 && i%10 == 0 {
				clock.Advance(time.Second)
			}
			if w := serve(h, "GET", "/"); w.Code != http.StatusOK {
				t.Fatalf("%s: request %d: %d", router, i+1, w.Code)
			}
		}
		advanceTo(clock, t0.Add(30*time.Second))
		w := serve(h, "GET", "/")
		if w.Code != http.StatusTooManyRequests {
			t.Fatalf("%s: the 101st: %d, want 429", router, w.Code)
		}
		for k, v := range map[string]string{"Retry-After": "30", "Cache-Control": "no-store", "Content-Type": "application/problem+json"} {
			if got := w.Header().Get(k); got != v {
				t.Errorf("%s: %s %q, want %q", router, k, got, v)
			}
		}
		if got := bytes.TrimSuffix(w.Body.Bytes(), []byte("\n")); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s: body\n%s\nwant\n%s", router, got, want.Bytes())
		}
	}
}

// advanceTo moves clock forward to at.
func advanceTo(clock *algotest.Clock, at time.Time) {
	clock.Advance(at.Sub(clock.Now()))
}
