package middleware_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestIETFMostConstrainingNestedBoundQuota: copies of one policy p (a
// fixed window of a minute, keyed alike) in nested middlewares, the outer
// one lowered by SetLimit from 5 to 3, the inner one configured at 3 and
// raised to 5, beside a policy s (2 a minute) of the inner one alone.
// The outer copy binds: IETF reports p once, at the q in force
// (RateLimit-Policy "p";q=3;w=60, see TestNestedBindingMemberReported).
// Under IETFMostConstraining RateLimit-Policy is IETF's, whichever
// member RateLimit carries (here s's, the lower r): it must not report
// p at the inner copy's 5, which no request gets. Through chi and a
// ServeMux, 10 s into the minute.
func TestIETFMostConstrainingNestedBoundQuota(t *testing.T) {
	policyLine := []string{`"p";q=3;w=60, "s";q=2;w=60`}
	want := []boundStep{
		{200, policyLine, []string{`"s";r=1;t=50`}, ""},
		{200, policyLine, []string{`"s";r=0;t=50`}, ""},
		{429, policyLine, []string{`"s";r=0;t=50`}, "50"},
	}
	for _, mux := range []string{"chi", "ServeMux"} {
		t.Run(mux, func(t *testing.T) {
			_, store, opts := mostSetup(t)
			outer := middleware.MustNew(store, []*policy.Policy{fixed("p", 5, time.Minute, constKey)}, opts...)
			inner := middleware.MustNew(store, []*policy.Policy{fixed("p", 3, time.Minute, constKey), fixed("s", 2, time.Minute, constKey)}, opts...)
			setLimit(t, outer, "p", 3)
			setLimit(t, inner, "p", 5)
			h := nestedRouter(mux, outer, inner)
			checkSteps(t, h, want)
		})
	}
}

// TestIETFMostConstrainingNestedRestatedQuota: a policy p (a fixed
// window of a minute, keyed alike) raised by SetLimit from 3 to 8 in the
// outer middleware, beside a policy s (2 a minute) there, and p at 3 in
// the inner one, which leaves p out (counted further out) and holds the
// client at its 3: IETF restates the outer member of p at 3
// (RateLimit-Policy "p";q=3;w=60, see restateOuter). Under
// IETFMostConstraining the outer RateLimit line carries s's member
// alone, and RateLimit-Policy must still be IETF's, not "p";q=8, a limit
// no request gets past the inner middleware. The 429, which the outer
// middleware answers (s), reports p at its 8 under both. Through chi
// and a ServeMux, 10 s into the minute.
func TestIETFMostConstrainingNestedRestatedQuota(t *testing.T) {
	want := []boundStep{
		{200, []string{`"p";q=3;w=60, "s";q=2;w=60`}, []string{`"s";r=1;t=50`}, ""},
		{200, []string{`"p";q=3;w=60, "s";q=2;w=60`}, []string{`"s";r=0;t=50`}, ""},
		{429, []string{`"p";q=8;w=60, "s";q=2;w=60`}, []string{`"s";r=0;t=50`}, "50"},
	}
	for _, mux := range []string{"chi", "ServeMux"} {
		t.Run(mux, func(t *testing.T) {
			_, store, opts := mostSetup(t)
			outer := middleware.MustNew(store, []*policy.Policy{fixed("p", 3, time.Minute, constKey), fixed("s", 2, time.Minute, constKey)}, opts...)
			inner := middleware.MustNew(store, []*policy.Policy{fixed("p", 3, time.Minute, constKey)}, opts...)
			setLimit(t, outer, "p", 8)
			h := nestedRouter(mux, outer, inner)
			checkSteps(t, h, want)
		})
	}
}

// TestIETFMostConstrainingNestedRestatedMember: as
// TestIETFMostConstrainingNestedRestatedQuota, s at 5 a minute: p,
// restated at the inner middleware's 3, is then the most constraining
// policy (r=2 of 3, where s has 4 of 5), and the one RateLimit member
// must be its, as IETF restates it ("p";r=2;t=50), not s's, chosen
// further out where p counted at 8 (r=7): a client told "s";r=2 would
// not expect the 429 its next request gets from p. Through chi and a
// ServeMux, 10 s into the minute.
func TestIETFMostConstrainingNestedRestatedMember(t *testing.T) {
	want := []boundStep{
		{200, []string{`"p";q=3;w=60, "s";q=5;w=60`}, []string{`"p";r=2;t=50`}, ""},
		{200, []string{`"p";q=3;w=60, "s";q=5;w=60`}, []string{`"p";r=1;t=50`}, ""},
		{200, []string{`"p";q=3;w=60, "s";q=5;w=60`}, []string{`"p";r=0;t=50`}, ""},
		{429, []string{`"s";q=5;w=60`, `"p";q=3;w=60`}, []string{`"s";r=1;t=50`, `"p";r=0;t=50`}, "50"},
	}
	for _, mux := range []string{"chi", "ServeMux"} {
		t.Run(mux, func(t *testing.T) {
			_, store, opts := mostSetup(t)
			outer := middleware.MustNew(store, []*policy.Policy{fixed("p", 3, time.Minute, constKey), fixed("s", 5, time.Minute, constKey)}, opts...)
			inner := middleware.MustNew(store, []*policy.Policy{fixed("p", 3, time.Minute, constKey)}, opts...)
			setLimit(t, outer, "p", 8)
			h := nestedRouter(mux, outer, inner)
			checkSteps(t, h, want)
		})
	}
}

// TestIETFMostConstrainingRestatedMemberAfterGiveBack: as
// TestIETFMostConstrainingNestedRestatedMember, the outer middleware
// with a third policy g (10 a minute) that counts failures alone
// (CountIf) and a handler that writes nothing: g's unit goes back after
// each request, which raises g's member alone, so the member of p,
// restated further in as the most constraining, stays the one member.
func TestIETFMostConstrainingRestatedMemberAfterGiveBack(t *testing.T) {
	silent := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	onlyFailures := policy.CountIf(func(_ *http.Request, status int) bool { return status >= 400 })
	want := []string{`"p";r=2;t=50`, `"p";r=1;t=50`, `"p";r=0;t=50`}
	for _, mux := range []string{"chi", "ServeMux"} {
		t.Run(mux, func(t *testing.T) {
			_, store, opts := mostSetup(t)
			outer := middleware.MustNew(store, []*policy.Policy{
				fixed("p", 3, time.Minute, constKey), fixed("s", 5, time.Minute, constKey), fixed("g", 10, time.Minute, constKey, onlyFailures),
			}, opts...)
			inner := middleware.MustNew(store, []*policy.Policy{fixed("p", 3, time.Minute, constKey)}, opts...)
			setLimit(t, outer, "p", 8)
			var h http.Handler
			if mux == "chi" {
				r := chi.NewRouter()
				r.Use(outer.Handler)
				r.With(inner.Handler).Get("/", silent)
				h = r
			} else {
				sm := http.NewServeMux()
				sm.Handle("GET /", inner.Handler(silent))
				h = outer.Handler(sm)
			}
			for i, rl := range want {
				w := serve(h, "GET", "/")
				if w.Code != http.StatusOK {
					t.Errorf("request %d: status %d, want 200", i+1, w.Code)
				}
				if got := w.Header().Values("RateLimit"); !slices.Equal(got, []string{rl}) {
					t.Errorf("request %d: RateLimit %q, want %q", i+1, got, []string{rl})
				}
			}
		})
	}
}

// boundStep is what one request of these tests gets: its status, its
// RateLimit-Policy and RateLimit field lines, and its Retry-After.
type boundStep struct {
	status      int
	policyLines []string
	rateLimit   []string
	retry       string
}

// mostSetup returns a clock 10 s into the minute, a memory store on it,
// and the options of every middleware of these tests: that clock, errors
// (the nested copies' ErrCountedTwice) unlogged, IETFMostConstraining.
func mostSetup(t *testing.T) (*algotest.Clock, *algorithms.MemoryStore, []middleware.Option) {
	t.Helper()
	clock := algotest.NewClock(t0.Add(10 * time.Second))
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	return clock, store, []middleware.Option{middleware.WithClock(clock), quiet, middleware.WithHeaders(middleware.IETFMostConstraining)}
}

// checkSteps serves GET / through h once per step, checking each answer.
func checkSteps(t *testing.T, h http.Handler, steps []boundStep) {
	t.Helper()
	for i, s := range steps {
		w := serve(h, "GET", "/")
		if w.Code != s.status {
			t.Errorf("request %d: status %d, want %d", i+1, w.Code, s.status)
		}
		if got := w.Header().Values("RateLimit-Policy"); !slices.Equal(got, s.policyLines) {
			t.Errorf("request %d: RateLimit-Policy %q, want %q", i+1, got, s.policyLines)
		}
		if got := w.Header().Values("RateLimit"); !slices.Equal(got, s.rateLimit) {
			t.Errorf("request %d: RateLimit %q, want %q", i+1, got, s.rateLimit)
		}
		if got := w.Header().Get("Retry-After"); got != s.retry {
			t.Errorf("request %d: Retry-After %q, want %q", i+1, got, s.retry)
		}
	}
}
