package middleware_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// raisedKinds returns a 100-a-minute Spec of each window kind whose
// counters a raised limit is judged on (fixed_window, sliding_window,
// sliding_buckets), at limit.
func raisedKinds(limit int64) []algorithms.Spec {
	return []algorithms.Spec{
		{Algorithm: algorithms.FixedWindow, Limit: limit, Window: time.Minute},
		{Algorithm: algorithms.SlidingWindow, Limit: limit, Window: time.Minute},
		{Algorithm: algorithms.SlidingBuckets, Limit: limit, Window: time.Minute, Buckets: 6},
	}
}

// TestReloadRaisedKeepsUsage: a reload that raises a policy's limit does
// not hand clients a fresh quota on top of what they used: one that used
// 100 of its 100 a minute gets 10 more in that minute when the limit is
// reloaded at 110 (not 110), as with a limiter that keeps one counter
// per client whatever the limit. The Spec the reload replaced, whose
// counters hold the requests of before it, is judged at the new limit
// until they can hold none; the headers report the new limit. Through a
// chi router, on the memory store and on Redis, for every kind whose
// counters count requests whatever the limit.
func TestReloadRaisedKeepsUsage(t *testing.T) {
	for _, name := range storetest.Names {
		for i, from := range raisedKinds(100) {
			to := raisedKinds(110)[i]
			t.Run(fmt.Sprintf("%s/%s", name, from.Algorithm), func(t *testing.T) {
				clock := algotest.NewClock(time.Unix(1_700_000_040, 0)) // a minute's start
				store := storetest.New(t, name, clock)
				m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("p", from, remote))}, middleware.WithClock(clock))
				r := chi.NewRouter()
				r.Use(m.Handler)
				r.Get("/", ok.ServeHTTP)
				clock.Advance(10 * time.Second)
				if got := admittedOf(r, 100); got != 100 {
					t.Fatalf("at 100 a minute: %d of 100 admitted", got)
				}
				if err := m.SetPolicies([]*policy.Policy{policy.Must(policy.New("p", to, remote))}); err != nil {
					t.Fatal(err)
				}
				if g, ok := guardOf(m); !ok || g != from {
					t.Errorf("raised to 110: guard %+v, %v; want the replaced Spec", g, ok)
				}
				w := serve(r, "GET", "/")
				if got, want := w.Header().Get("RateLimit"), `"p";r=9;`; w.Code != http.StatusOK || !strings.HasPrefix(got, want) {
					t.Errorf("raised to 110, 100 used: %d %q, want 200 %q...", w.Code, got, want)
				}
				if got := w.Header().Get("RateLimit-Policy"); got != `"p";q=110;w=60` {
					t.Errorf("raised to 110: RateLimit-Policy %q, want q=110", got)
				}
				if got := admittedOf(r, 20); got != 9 {
					t.Errorf("raised to 110, 101 used: %d of 20 admitted, want 9", got)
				}
				// Three windows on, the replaced Spec's counters hold
				// nothing of before the reload: the guard ends, and the
				// policy counts under its own Spec alone.
				clock.Advance(3 * time.Minute)
				if got := admittedOf(r, 120); got != 110 {
					t.Errorf("three minutes on: %d of 120 admitted, want 110", got)
				}
				if g, ok := guardOf(m); ok {
					t.Errorf("three minutes after the reload: still guarded by %+v", g)
				}
			})
		}
	}
}

// TestSetLimitAboveConfiguredKeepsUsage: a limit set above the configured
// one (SetLimit 150 on 100 a minute) is judged on the configured Spec's
// counters, which hold every request: a client that used 100 gets 50 more
// in that minute, not 150, in one check per request; set back to 100 it
// finds everything it used at 150. Through a ServeMux on the memory store
// and on Redis.
func TestSetLimitAboveConfiguredKeepsUsage(t *testing.T) {
	for _, name := range storetest.Names {
		for _, spec := range raisedKinds(100) {
			t.Run(fmt.Sprintf("%s/%s", name, spec.Algorithm), func(t *testing.T) {
				clock := algotest.NewClock(time.Unix(1_700_000_040, 0)) // a minute's start
				store := storetest.New(t, name, clock)
				m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("p", spec, remote))}, middleware.WithClock(clock))
				mux := http.NewServeMux()
				mux.Handle("/", m.Handler(ok))
				clock.Advance(10 * time.Second)
				if got := admittedOf(mux, 100); got != 100 {
					t.Fatalf("at 100 a minute: %d of 100 admitted", got)
				}
				if err := m.SetLimit("p", 150); err != nil {
					t.Fatal(err)
				}
				p := m.Set().Policy(0)
				if g, ok := p.Guard(); !ok || g != spec || p.GuardLimit(g) != 150 {
					t.Errorf("SetLimit 150: guard %+v, %v; want the configured Spec judged at 150", g, ok)
				}
				if got := admittedOf(mux, 60); got != 50 {
					t.Errorf("SetLimit 150 after 100 used: %d of 60 admitted, want 50", got)
				}
				if err := m.SetLimit("p", 0); err != nil {
					t.Fatal(err)
				}
				w := serve(mux, "GET", "/")
				if got, want := w.Header().Get("RateLimit"), `"p";r=0;`; w.Code != http.StatusTooManyRequests || !strings.HasPrefix(got, want) {
					t.Errorf("back at 100, 150 used: %d %q, want 429 %q...", w.Code, got, want)
				}
			})
		}
	}
}

// TestReloadRaisedSlidingLogStartsAfresh: a sliding_log's counters keep
// the instants of at most its limit's requests, so a reload that raises
// its limit starts it from a full allowance at the new limit, as
// SetPolicies documents.
func TestReloadRaisedSlidingLogStartsAfresh(t *testing.T) {
	store, clock := newStore(t)
	spec := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 10, Window: time.Minute}
	m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("p", spec, remote))}, middleware.WithClock(clock))
	h := m.Handler(ok)
	if got := admittedOf(h, 10); got != 10 {
		t.Fatalf("at 10 a minute: %d of 10 admitted", got)
	}
	spec.Limit = 11
	if err := m.SetPolicies([]*policy.Policy{policy.Must(policy.New("p", spec, remote))}); err != nil {
		t.Fatal(err)
	}
	if g, ok := guardOf(m); ok {
		t.Errorf("sliding_log raised: guarded by %+v, want none", g)
	}
	if got := admittedOf(h, 20); got != 11 {
		t.Errorf("sliding_log raised to 11 after 10 used: %d of 20 admitted, want 11", got)
	}
}
