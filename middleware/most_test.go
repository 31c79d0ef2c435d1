package middleware_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// mostStep is one request of a most-constraining test: after advancing the
// clock by advance, a GET / answers status with these RateLimit and
// Retry-After values ("" for none) and RateLimit-Policy lines.
type mostStep struct {
	advance    time.Duration
	status     int
	rateLimit  string
	retryAfter string
}

// mostRouters wraps a GET / route served by ok in mw, through chi and
// through a ServeMux.
func mostRouters(mw func(http.Handler) http.Handler) map[string]http.Handler {
	r := chi.NewRouter()
	r.Use(mw)
	r.Get("/", ok)
	mux := http.NewServeMux()
	mux.Handle("GET /", ok)
	return map[string]http.Handler{"chi": r, "ServeMux": mw(mux)}
}

// runMost builds a middleware of policies (made anew per router, each on
// a fresh store and clock) with WithHeaders(IETFMostConstraining) and
// opts, and replays steps through chi and a ServeMux, asserting the exact
// header values, RateLimit-Policy being policyLine on every response.
func runMost(t *testing.T, policies func() []*policy.Policy, policyLine string, steps []mostStep, opts ...middleware.Option) {
	t.Helper()
	for _, router := range []string{"chi", "ServeMux"} {
		store, clock := newStore(t)
		m := middleware.MustNew(store, policies(), append([]middleware.Option{
			middleware.WithHeaders(middleware.IETFMostConstraining), middleware.WithClock(clock), advancing(clock)}, opts...)...)
		h := mostRouters(m.Handler)[router]
		for i, s := range steps {
			clock.Advance(s.advance)
			w := serve(h, "GET", "/")
			hd := w.Header()
			if w.Code != s.status {
				t.Errorf("%s: request %d: status %d, want %d", router, i+1, w.Code, s.status)
			}
			if got, want := hd.Values("RateLimit"), []string{s.rateLimit}; !slices.Equal(got, want) {
				t.Errorf("%s: request %d: RateLimit %q, want %q", router, i+1, got, want)
			}
			if got, want := hd.Values("RateLimit-Policy"), []string{policyLine}; !slices.Equal(got, want) {
				t.Errorf("%s: request %d: RateLimit-Policy %q, want %q", router, i+1, got, want)
			}
			if got := hd.Get("Retry-After"); got != s.retryAfter {
				t.Errorf("%s: request %d: Retry-After %q, want %q", router, i+1, got, s.retryAfter)
			}
		}
	}
}

// TestIETFMostConstrainingAdmitted: of three stacked policies, RateLimit
// carries the member of the one with the lowest remaining, a tie going to
// the policy whose allowance takes longer to come back (the minute's over
// the second's), as the single-valued profiles choose; RateLimit-Policy
// still lists all three. The last request, denied by both the second and
// the minute, shows the minute: the longer wait, the one Retry-After
// names.
func TestIETFMostConstrainingAdmitted(t *testing.T) {
	policies := func() []*policy.Policy {
		return []*policy.Policy{
			fixed("per-second", 5, time.Second, remote),
			fixed("per-minute", 7, time.Minute, remote),
			fixed("per-hour", 100, time.Hour, remote),
		}
	}
	// t0 is 840 s into its hour: the hour's window ends in 2760 s.
	runMost(t, policies, `"per-second";q=5;w=1, "per-minute";q=7;w=60, "per-hour";q=100;w=3600`, []mostStep{
		{0, 200, `"per-second";r=4;t=1`, ""},
		{0, 200, `"per-second";r=3;t=1`, ""},
		{time.Second, 200, `"per-minute";r=4;t=59`, ""}, // tie: 4 and 4
		{0, 200, `"per-minute";r=3;t=59`, ""},
		{0, 200, `"per-minute";r=2;t=59`, ""},
		{0, 200, `"per-minute";r=1;t=59`, ""},
		{0, 200, `"per-minute";r=0;t=59`, ""},
		{0, 429, `"per-minute";r=0;t=59`, "59"}, // both denied: 1 s and 59 s
		{time.Second, 429, `"per-minute";r=0;t=58`, "58"},
	})
}

// twoEach is a policy option that makes every request cost 2 units.
var twoEach = policy.WithCost(func(*http.Request) int64 { return 2 })

// mostCostPolicies are two fixed windows that every request costs 2 units
// of: the burst has none left after each request, the minute 3, then 1.
func mostCostPolicies() []*policy.Policy {
	return []*policy.Policy{
		fixed("burst", 2, 10*time.Second, remote, twoEach),
		fixed("minute", 5, time.Minute, remote, twoEach),
	}
}

// TestIETFMostConstrainingDenied: a request both policies deny shows the
// violated policy with the longest wait, the one Retry-After names: the
// minute, 1 unit left of the 2 a request costs, for 49 s, not the burst,
// with 0 left but only 9 s to wait (the single-valued profiles report the
// burst's 0, their reset raised to the Retry-After; a member of RateLimit
// keeps its policy's own t, so the member is the minute's).
func TestIETFMostConstrainingDenied(t *testing.T) {
	runMost(t, mostCostPolicies, `"burst";q=2;w=10, "minute";q=5;w=60`, []mostStep{
		{0, 200, `"burst";r=0;t=10`, ""},
		{10 * time.Second, 200, `"burst";r=0;t=10`, ""},
		{time.Second, 429, `"minute";r=1;t=49`, "49"},
	})
}

// TestIETFMostConstrainingShadow: in shadow mode, the request the policies
// deny goes through, and its RateLimit shows the member the 429 would
// have: the minute's, the longest wait.
func TestIETFMostConstrainingShadow(t *testing.T) {
	runMost(t, mostCostPolicies, `"burst";q=2;w=10, "minute";q=5;w=60`, []mostStep{
		{0, 200, `"burst";r=0;t=10`, ""},
		{10 * time.Second, 200, `"burst";r=0;t=10`, ""},
		{time.Second, 200, `"minute";r=1;t=49`, ""},
	}, middleware.WithShadow(nil))
}

// TestIETFMostConstrainingHeld: a request a leaky_queue holds reports the
// queue's member, its t counted from the end of the hold as the IETF
// profile counts it: the queue (7 places, one departure every 10 s) has
// the lowest remaining, 6 then 5, of the hour's 99 then 98.
func TestIETFMostConstrainingHeld(t *testing.T) {
	policies := func() []*policy.Policy {
		return []*policy.Policy{fixed("hour", 100, time.Hour, remote), queueEvery("queue", 10*time.Second)}
	}
	runMost(t, policies, `"hour";q=100;w=3600, "queue";q=7;w=10`, []mostStep{
		{0, 200, `"queue";r=6;t=10`, ""},
		{0, 200, `"queue";r=5;t=0`, ""}, // held 10 s
	})
}

// TestIETFMostConstrainingMatchesIETF: the member of the most constraining
// profile is, byte for byte, the member of the IETF profile's line for
// the same policy, and RateLimit-Policy is the same, on every request of
// the sequences above and with a partition key.
func TestIETFMostConstrainingMatchesIETF(t *testing.T) {
	secret := []byte("0123456789abcdef")
	for name, c := range map[string]struct {
		policies func() []*policy.Policy
		advances []time.Duration
	}{
		"cost": {mostCostPolicies, []time.Duration{0, 10 * time.Second, time.Second, 0, 50 * time.Second}},
		"queue": {func() []*policy.Policy {
			return []*policy.Policy{fixed("hour", 100, time.Hour, remote), queueEvery("queue", 10*time.Second)}
		}, []time.Duration{0, 0, 0, time.Second}},
	} {
		t.Run(name, func(t *testing.T) {
			var lines [2][]http.Header
			for i, p := range []middleware.Profile{middleware.IETF, middleware.IETFMostConstraining} {
				store, clock := newStore(t)
				h := middleware.MustNew(store, c.policies(), middleware.WithHeaders(p), middleware.WithClock(clock),
					advancing(clock), middleware.WithPartitionKey(secret)).Handler(ok)
				for _, a := range c.advances {
					clock.Advance(a)
					lines[i] = append(lines[i], serve(h, "GET", "/").Header())
				}
			}
			for i := range c.advances {
				full, most := lines[0][i], lines[1][i]
				if !slices.Equal(full.Values("RateLimit-Policy"), most.Values("RateLimit-Policy")) {
					t.Errorf("request %d: RateLimit-Policy %q, IETF's %q", i+1, most.Values("RateLimit-Policy"), full.Values("RateLimit-Policy"))
				}
				m := most.Values("RateLimit")
				if len(m) != 1 || strings.Contains(m[0], ", ") || !strings.Contains(m[0], ";pk=:") ||
					!slices.Contains(strings.Split(full.Get("RateLimit"), ", "), m[0]) {
					t.Errorf("request %d: RateLimit %q, want one member of IETF's %q", i+1, m, full.Get("RateLimit"))
				}
			}
		})
	}
}

// TestIETFMostConstrainingNested: a middleware nested in one that wrote
// its headers writes in that one's profile (see WithHeaders): under an
// outer IETFMostConstraining, an inner IETF middleware adds a line of one
// member, its own most constraining; under an outer IETF, an inner
// IETFMostConstraining one lists every member, as the outer does. Each
// RateLimit-Policy line lists every policy of its middleware. Through chi
// (r.Use, r.With) and a ServeMux.
func TestIETFMostConstrainingNested(t *testing.T) {
	for _, c := range []struct {
		name         string
		outer, inner middleware.Profile
		rateLimit    []string
	}{
		{"most outside", middleware.IETFMostConstraining, middleware.IETF,
			[]string{`"per-second";r=4;t=1`, `"per-minute";r=5;t=60`}},
		{"most inside", middleware.IETF, middleware.IETFMostConstraining,
			[]string{`"per-second";r=4;t=1, "per-hour";r=99;t=2760`, `"per-minute";r=5;t=60, "per-day";r=999;t=6360`}},
		{"most both", middleware.IETFMostConstraining, middleware.IETFMostConstraining,
			[]string{`"per-second";r=4;t=1`, `"per-minute";r=5;t=60`}},
	} {
		for _, router := range []string{"chi", "ServeMux"} {
			t.Run(c.name+"/"+router, func(t *testing.T) {
				store, clock := newStore(t)
				outer := middleware.MustNew(store, []*policy.Policy{fixed("per-second", 5, time.Second, remote), fixed("per-hour", 100, time.Hour, remote)},
					middleware.WithHeaders(c.outer), middleware.WithClock(clock))
				inner := middleware.MustNew(store, []*policy.Policy{fixed("per-minute", 6, time.Minute, remote), fixed("per-day", 1000, 24*time.Hour, remote)},
					middleware.WithHeaders(c.inner), middleware.WithClock(clock))
				h := nestedRouter(router, outer, inner)
				w := serve(h, "GET", "/")
				if w.Code != http.StatusOK {
					t.Fatalf("status %d", w.Code)
				}
				if got := w.Header().Values("RateLimit"); !slices.Equal(got, c.rateLimit) {
					t.Errorf("RateLimit %q, want %q", got, c.rateLimit)
				}
				wantPolicy := []string{`"per-second";q=5;w=1, "per-hour";q=100;w=3600`, `"per-minute";q=6;w=60, "per-day";q=1000;w=86400`}
				if got := w.Header().Values("RateLimit-Policy"); !slices.Equal(got, wantPolicy) {
					t.Errorf("RateLimit-Policy %q, want %q", got, wantPolicy)
				}
			})
		}
	}
}

// TestIETFMostConstrainingProfile: the profile has a name, and WithHeaders
// takes it while refusing the value after it.
func TestIETFMostConstrainingProfile(t *testing.T) {
	if got := middleware.IETFMostConstraining.String(); got != "ietf-most-constraining" {
		t.Errorf("String() = %q, want %q", got, "ietf-most-constraining")
	}
	store, _ := newStore(t)
	p := []*policy.Policy{fixed("p", 1, time.Second, remote)}
	if _, err := middleware.New(store, p, middleware.WithHeaders(middleware.IETFMostConstraining)); err != nil {
		t.Errorf("WithHeaders(IETFMostConstraining): %v", err)
	}
	if _, err := middleware.New(store, p, middleware.WithHeaders(middleware.IETFMostConstraining+1)); err == nil {
		t.Error("WithHeaders(IETFMostConstraining+1): no error")
	}
}

// TestAllocationsIETFMostConstraining: the profile allocates no more than
// IETF, at most one allocation per request beyond the handler's own, for
// one policy and for four stacked ones.
func TestAllocationsIETFMostConstraining(t *testing.T) {
	store, _ := newStore(t)
	bare := allocsPerRequest(ok)
	for _, n := range []int{1, 4} {
		var ps []*policy.Policy
		for i := range n {
			ps = append(ps, policy.Must(policy.Per("p"+string(rune('a'+i)), 1_000_000, time.Duration(i+1)*time.Minute, remote)))
		}
		var got [2]float64
		for i, p := range []middleware.Profile{middleware.IETF, middleware.IETFMostConstraining} {
			h := middleware.MustNew(store, ps, middleware.WithHeaders(p)).Handler(ok)
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil)) // the store's first sight of the key allocates
			got[i] = allocsPerRequest(h)
		}
		if got[1] > got[0] || got[1] > bare+1 {
			t.Errorf("%d policies: %v allocations per request, IETF %v; want at most IETF's and bare handler + 1 (%v)", n, got[1], got[0], bare+1)
		}
	}
}

// TestIETFMostConstrainingSixtyFourPolicies: the case the profile is for.
// Of 64 stacked policies (the most a Set holds), RateLimit carries one
// member, the one with the lowest remaining, where IETF carries 64;
// RateLimit-Policy lists all 64 under both.
func TestIETFMostConstrainingSixtyFourPolicies(t *testing.T) {
	var ps []*policy.Policy
	for i := range 64 {
		// p00 to p63, limits 1063 down to 1000: p63 has the lowest remaining.
		ps = append(ps, fixed(fmt.Sprintf("p%02d", i), int64(1063-i), time.Minute, remote))
	}
	for _, router := range []string{"chi", "ServeMux"} {
		var lines [2]string
		for k, p := range []middleware.Profile{middleware.IETF, middleware.IETFMostConstraining} {
			store, clock := newStore(t)
			m := middleware.MustNew(store, ps, middleware.WithHeaders(p), middleware.WithClock(clock))
			w := serve(mostRouters(m.Handler)[router], "GET", "/")
			rl, pol := w.Header().Values("RateLimit"), w.Header().Values("RateLimit-Policy")
			if len(pol) != 1 || strings.Count(pol[0], ", ") != 63 || !strings.HasSuffix(pol[0], `, "p63";q=1000;w=60`) {
				t.Errorf("%s %s: RateLimit-Policy %q, want one line of 64 members", p, router, pol)
			}
			if len(rl) != 1 {
				t.Fatalf("%s %s: RateLimit %q, want one line", p, router, rl)
			}
			lines[k] = rl[0]
		}
		if want := `"p63";r=999;t=60`; lines[1] != want {
			t.Errorf("%s: RateLimit %q, want %q", router, lines[1], want)
		}
		if n := strings.Count(lines[0], ", ") + 1; n != 64 || !strings.HasSuffix(lines[0], ", "+lines[1]) {
			t.Errorf("%s: IETF's RateLimit has %d members, want 64 ending with ours: %q", router, n, lines[0])
		}
	}
}
