package middleware_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestNestedDenialWaitsForOuter: when a middleware further in denies a
// request that one further out admitted with its last unit, a retry is
// refused by the outer one until its quota grows again. The 429's
// Retry-After (and the reset of a single-valued profile, the same
// instant) is that wait, not only the inner policy's: never earlier than
// the t of the outer policy the same response reports with r=0.
func TestNestedDenialWaitsForOuter(t *testing.T) {
	for _, tt := range []struct {
		profile middleware.Profile
		want    map[string]string // header -> value on the 429
	}{
		{middleware.IETF, map[string]string{
			"RateLimit":   `"two-min";r=0;t=119, "minute";r=0;t=59`,
			"Retry-After": "119",
		}},
		{middleware.Draft7, map[string]string{"RateLimit": "limit=1, remaining=0, reset=119", "Retry-After": "119"}},
		{middleware.Draft6, map[string]string{"RateLimit-Reset": "119", "Retry-After": "119"}},
		{middleware.Legacy, map[string]string{"X-RateLimit-Reset": "119", "Retry-After": "119"}},
		{middleware.LegacyUnix, map[string]string{"X-RateLimit-Reset": "unix", "Retry-After": "119"}},
		{middleware.NoHeaders, map[string]string{"Retry-After": "119", "RateLimit": ""}},
	} {
		t.Run(tt.profile.String(), func(t *testing.T) {
			store, clock := newStore(t) // t0 is a two-minute boundary
			outer := middleware.MustNew(store, []*policy.Policy{fixed("two-min", 2, 2*time.Minute, constKey)},
				middleware.WithHeaders(tt.profile), middleware.WithClock(clock))
			inner := middleware.MustNew(store, []*policy.Policy{fixed("minute", 1, time.Minute, constKey)},
				middleware.WithHeaders(tt.profile), middleware.WithClock(clock))
			for i, mux := range []string{"chi", "ServeMux"} {
				h := nestedRouter(mux, outer, inner)
				start := t0.Add(time.Duration(4+4*i) * time.Minute) // a fresh two-minute window for each router
				clock.Set(start)
				w := admitThenDeny(t, mux, h, clock)
				for k, v := range tt.want {
					want := v
					if v == "unix" { // the end of the two-minute window
						want = strconv.FormatInt(start.Add(2*time.Minute).Unix(), 10)
					}
					if got := strings.Join(w.Header().Values(k), ", "); got != want {
						t.Errorf("%s: %s = %q, want %q", mux, k, got, want)
					}
				}
				// The retry Retry-After names is the first one admitted.
				retryAdmittedAt(t, mux, h, clock, 119*time.Second)
			}
		})
	}
}

var constKey = func(*http.Request) (string, error) { return "k", nil }

// retryAdmittedAt checks that the request just refused with Retry-After
// retryAfter (counted from the clock's instant) is refused again 1 s
// before it and admitted at it; name prefixes the errors.
func retryAdmittedAt(t *testing.T, name string, h http.Handler, clock *algotest.Clock, retryAfter time.Duration) {
	t.Helper()
	clock.Advance(retryAfter - time.Second)
	if w := serve(h, "GET", "/"); w.Code != 429 {
		t.Errorf("%sretry 1 s before Retry-After: %d, want 429", prefix(name), w.Code)
	}
	clock.Advance(time.Second)
	if w := serve(h, "GET", "/"); w.Code != 200 {
		t.Errorf("%sretry at Retry-After: %d, want 200", prefix(name), w.Code)
	}
}

// admitThenDeny serves GET / through h, which must admit it, and again
// 1 s later, which must be denied (429), and returns the denial; name
// prefixes the errors.
func admitThenDeny(t *testing.T, name string, h http.Handler, clock *algotest.Clock) *httptest.ResponseRecorder {
	t.Helper()
	if w := serve(h, "GET", "/"); w.Code != 200 {
		t.Fatalf("%sfirst request %d", prefix(name), w.Code)
	}
	clock.Advance(time.Second)
	w := serve(h, "GET", "/")
	if w.Code != 429 {
		t.Fatalf("%ssecond request %d, want 429", prefix(name), w.Code)
	}
	return w
}

func prefix(name string) string {
	if name == "" {
		return ""
	}
	return name + ": "
}

// routedBy serves ok at GET / behind m alone, through mux ("chi": chi's
// r.Use; "ServeMux": around the route's handler).
func routedBy(mux string, m *middleware.Middleware) http.Handler {
	if mux == "chi" {
		r := chi.NewRouter()
		r.Use(m.Handler)
		r.Get("/", ok)
		return r
	}
	sm := http.NewServeMux()
	sm.Handle("GET /", m.Handler(ok))
	return sm
}

// nestedRouter serves GET / with ok through outer and then inner: outer as
// chi's r.Use and inner as r.With, or outer around a ServeMux whose route
// holds inner.
func nestedRouter(mux string, outer, inner *middleware.Middleware) http.Handler {
	if mux == "chi" {
		r := chi.NewRouter()
		r.Use(outer.Handler)
		r.With(inner.Handler).Get("/", ok)
		return r
	}
	sm := http.NewServeMux()
	sm.Handle("GET /", inner.Handler(ok))
	return outer.Handler(sm)
}

// TestNestedQueueRefusalWaitsForOuter: the 503 of a leaky_queue request
// refused because its deadline comes before its turn names, in
// Retry-After, a time the middlewares further out admit the retry at: one
// that admitted it with its last unit refuses the retry until its quota
// grows, whatever the queue's wait.
func TestNestedQueueRefusalWaitsForOuter(t *testing.T) {
	for i, mux := range []string{"chi", "ServeMux"} {
		t.Run(mux, func(t *testing.T) {
			store, clock := newStore(t)
			start := t0.Add(time.Duration(4+4*i) * time.Minute) // a two-minute boundary
			clock.Set(start)
			outer := middleware.MustNew(store, []*policy.Policy{fixed("two-min", 2, 2*time.Minute, constKey)}, middleware.WithClock(clock))
			queue := policy.Must(policy.New("queue", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: 10 * time.Second, MaxDelay: time.Minute}, constKey))
			inner := middleware.MustNew(store, []*policy.Policy{queue}, middleware.WithClock(clock),
				middleware.WithWait(func(context.Context, time.Duration) error {
					t.Error("a request was held")
					return nil
				}))
			h := nestedRouter(mux, outer, inner)
			if w := serve(h, "GET", "/"); w.Code != 200 {
				t.Fatalf("first request %d", w.Code)
			}
			clock.Advance(time.Second)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil).WithContext(beforeTurn(time.Second)))
			if w.Code != 503 {
				t.Fatalf("second request %d, want 503", w.Code)
			}
			if got := strings.Join(w.Header().Values("RateLimit"), ", "); !strings.HasPrefix(got, `"two-min";r=0;t=119, "queue";`) {
				t.Errorf("RateLimit = %q", got)
			}
			if got := w.Header().Get("Retry-After"); got != "119" {
				t.Errorf("Retry-After = %q, want 119 (the outer policy's t; the queue's turn is 9 s away)", got)
			}
			retryAdmittedAt(t, "", h, clock, 119*time.Second)
		})
	}
}

// TestNestedFailClosedWaitsForOuter: FailClosed's 503 names its
// Retry-After, or longer while a middleware further out that admitted the
// request with its last unit would refuse the retry.
func TestNestedFailClosedWaitsForOuter(t *testing.T) {
	store, clock := newStore(t)
	start := t0.Add(4 * time.Minute) // a two-minute boundary
	clock.Set(start)
	outer := middleware.MustNew(store, []*policy.Policy{fixed("two-min", 2, 2*time.Minute, constKey)}, middleware.WithClock(clock))
	inner := middleware.MustNew(&failing{}, []*policy.Policy{fixed("minute", 1, time.Minute, constKey)},
		middleware.WithClock(clock), middleware.OnStoreError(middleware.FailClosed(time.Second)), middleware.WithBreaker(0, 0))
	h := nestedRouter("ServeMux", outer, inner)
	for _, want := range []struct {
		rateLimit, retryAfter string
	}{
		{`"two-min";r=1;t=120`, "1"},
		{`"two-min";r=0;t=119`, "119"},
	} {
		w := serve(h, "GET", "/")
		if w.Code != 503 || w.Header().Get("RateLimit") != want.rateLimit || w.Header().Get("Retry-After") != want.retryAfter {
			t.Errorf("%d RateLimit %q Retry-After %q, want 503 %q %q", w.Code, w.Header().Get("RateLimit"), w.Header().Get("Retry-After"), want.rateLimit, want.retryAfter)
		}
		clock.Advance(time.Second)
	}
}

// TestNestedDenyHandlerWaitsForOuter: a deny handler (WithDenyHandler) of
// a middleware nested inside one that admitted the request with its last
// unit is given, in res.RetryAfter, the wait the default 429 sends as
// Retry-After: the outer policy's, not only the inner one's.
func TestNestedDenyHandlerWaitsForOuter(t *testing.T) {
	for i, mux := range []string{"chi", "ServeMux"} {
		t.Run(mux, func(t *testing.T) {
			store, clock := newStore(t)
			start := t0.Add(time.Duration(4+4*i) * time.Minute) // a two-minute boundary
			clock.Set(start)
			outer := middleware.MustNew(store, []*policy.Policy{fixed("two-min", 2, 2*time.Minute, constKey)}, middleware.WithClock(clock))
			var got time.Duration
			inner := middleware.MustNew(store, []*policy.Policy{fixed("minute", 1, time.Minute, constKey)}, middleware.WithClock(clock),
				middleware.WithDenyHandler(func(w http.ResponseWriter, r *http.Request, res *middleware.Result) {
					got = res.RetryAfter()
					w.WriteHeader(http.StatusTooManyRequests)
				}))
			h := nestedRouter(mux, outer, inner)
			admitThenDeny(t, "", h, clock)
			if want := 119 * time.Second; got != want {
				t.Errorf("deny handler's res.RetryAfter() = %s, want %s (the outer policy's t, the default 429's Retry-After)", got, want)
			}
		})
	}
}

// TestNestedDenialWaitsForOuterCost: a request of cost 2 that a middleware
// further out admitted, leaving it less than 2 units, and one further in
// denied, is told to retry when the outer one has 2 units again, not 1:
// under a token bucket refilling a unit every 10 s, 19 s, not 9.
func TestNestedDenialWaitsForOuterCost(t *testing.T) {
	two := policy.WithCost(func(*http.Request) int64 { return 2 })
	for i, mux := range []string{"chi", "ServeMux"} {
		t.Run(mux, func(t *testing.T) {
			store, clock := newStore(t)
			clock.Set(t0.Add(time.Duration(i) * time.Hour))
			bucket := policy.Must(policy.New("bucket", algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 1, Window: 10 * time.Second, Burst: 4}, constKey, two))
			inner := policy.Must(policy.New("inner", algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 2, Window: 2 * time.Second}, constKey, two))
			h := nestedRouter(mux,
				middleware.MustNew(store, []*policy.Policy{bucket}, middleware.WithClock(clock)),
				middleware.MustNew(store, []*policy.Policy{inner}, middleware.WithClock(clock)))
			w := admitThenDeny(t, "", h, clock)
			if got := w.Header().Get("Retry-After"); got != "19" {
				t.Errorf("Retry-After = %q, want 19 (2 units of the outer bucket; RateLimit %q)", got, w.Header().Values("RateLimit"))
			}
			retryAdmittedAt(t, "", h, clock, 19*time.Second)
		})
	}
}

// TestNestedDenialOuterGivesBack: a middleware further out whose policy
// does not count the inner middleware's 429 (policy.CountIf) gives back
// the unit the denied request took, so the retry waits for the inner
// policy alone: Retry-After is the inner policy's 59 s, and the retry then
// is admitted, not told to wait for the outer policy's 119 s as when the
// outer one counts every response.
func TestNestedDenialOuterGivesBack(t *testing.T) {
	for i, mux := range []string{"chi", "ServeMux"} {
		t.Run(mux, func(t *testing.T) {
			store, clock := newStore(t)
			start := t0.Add(time.Duration(4+4*i) * time.Minute) // a two-minute boundary
			clock.Set(start)
			outer := middleware.MustNew(store, []*policy.Policy{fixed("two-min", 2, 2*time.Minute, constKey, policy.CountIf(policy.CountSucceeded))}, middleware.WithClock(clock))
			inner := middleware.MustNew(store, []*policy.Policy{fixed("minute", 1, time.Minute, constKey)}, middleware.WithClock(clock))
			h := nestedRouter(mux, outer, inner)
			w := admitThenDeny(t, "", h, clock)
			if got := w.Header().Get("Retry-After"); got != "59" {
				t.Errorf("Retry-After = %q, want 59 (the outer policy gives its unit back)", got)
			}
			retryAdmittedAt(t, "", h, clock, 59*time.Second)
		})
	}
}
