package middleware_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
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

// These tests hold the HTTP contract of ../shared/DESIGN.md ("HTTP
// contract" and the algorithms' table) as a client reads it: the headers'
// bytes for every algorithm, through chi and net/http's ServeMux, on an
// injected clock. The expected values are worked out from the table's
// formulas in the comments; the property tests check what the contract
// promises of any trace.

// designRouters returns the handler of GET / behind mw, once through chi
// (r.Use) and once through a ServeMux (the routed handler wrapped).
func designRouters(mw func(http.Handler) http.Handler) map[string]http.Handler {
	r := chi.NewRouter()
	r.Use(mw)
	r.Get("/", ok)
	mux := http.NewServeMux()
	mux.Handle("GET /", mw(ok))
	return map[string]http.Handler{"chi": r, "stdlib": mux}
}

// designStep is a request 1.5 s after the one before it and its expected
// response. The sequences start at t0, where every window of the specs
// below begins (t0 is a multiple of 10 s and of 2 s).
type designStep struct {
	status     int
	rateLimit  string // the IETF RateLimit field, or the profile's fields
	retryAfter string
}

// TestDesignAlgorithmHeaders sends five requests 1.5 s apart (at 1.5, 3,
// 4.5, 6 and 7.5 s into a 10 s window) under one policy of limit 3 per 10 s
// of each kind, and reads r (Remaining after the request), t (whole
// seconds, rounded up, until Remaining next grows; for r = 0 the wait for
// one unit) and the 429's Retry-After (whole seconds, rounded up, never
// before t).
func TestDesignAlgorithmHeaders(t *testing.T) {
	const w = 10 * time.Second
	for _, c := range []struct {
		spec  algorithms.Spec
		steps []designStep
	}{
		// The window [0, 10 s) ends 10 s after t0: t = 10 − now.
		{algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 3, Window: w}, []designStep{
			{200, `"p";r=2;t=9`, ""}, // 8.5 s
			{200, `"p";r=1;t=7`, ""},
			{200, `"p";r=0;t=6`, ""}, // 5.5 s
			{429, `"p";r=0;t=4`, "4"},
			{429, `"p";r=0;t=3`, "3"}, // 2.5 s
		}},
		// An event exactly W old still counts: the event at 1.5 s leaves
		// the window 1 ns after 11.5 s.
		{algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 3, Window: w}, []designStep{
			{200, `"p";r=2;t=11`, ""}, // 10 s + 1 ns
			{200, `"p";r=1;t=9`, ""},  // 8.5 s + 1 ns
			{200, `"p";r=0;t=8`, ""},  // 7 s + 1 ns
			{429, `"p";r=0;t=6`, "6"}, // 5.5 s + 1 ns
			{429, `"p";r=0;t=5`, "5"}, // 4 s + 1 ns
		}},
		// prev·(W−e)/W + curr + n <= L, e into the window: the three
		// requests are curr until 10 s, then prev. Units available are
		// L − curr − ceil(prev·(W−e)/W).
		{algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 3, Window: w}, []designStep{
			// curr 1: a third unit only once prev = 1 weighs nothing,
			// at 20 s: 18.5 s.
			{200, `"p";r=2;t=19`, ""},
			// curr 2: two units once ceil(2·(W−e)/W) <= 1, e >= 5 s
			// of the next window (15 s): 12 s.
			{200, `"p";r=1;t=12`, ""},
			// curr 3: one unit once ceil(3·(W−e)/W) <= 2, e >= W/3
			// (13.33 s): 8.83 s, then 7.33 s and 5.83 s.
			{200, `"p";r=0;t=9`, ""},
			{429, `"p";r=0;t=8`, "8"},
			{429, `"p";r=0;t=6`, "6"},
		}},
		// Five 2 s buckets: the bucket [0, 2 s) holding the first request
		// leaves the sum when [10 s, 12 s) begins.
		{algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 3, Window: w, Buckets: 5}, []designStep{
			{200, `"p";r=2;t=9`, ""}, // 8.5 s
			{200, `"p";r=1;t=7`, ""},
			{200, `"p";r=0;t=6`, ""}, // 5.5 s
			{429, `"p";r=0;t=4`, "4"},
			{429, `"p";r=0;t=3`, "3"}, // 2.5 s
		}},
		// 0.3 tokens a second, capacity 3, full at first. Tokens after
		// each request: 2, 1.45, 0.9, 0.35 (1.35 at 6 s admits), and 0.8
		// at 7.5 s, short of 1.
		{algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 3, Window: w}, []designStep{
			{200, `"p";r=2;t=4`, ""},  // 1 token: 3.33 s
			{200, `"p";r=1;t=2`, ""},  // 0.55 token: 1.83 s
			{200, `"p";r=0;t=1`, ""},  // 0.1 token: 0.33 s
			{200, `"p";r=0;t=3`, ""},  // 0.65 token: 2.17 s
			{429, `"p";r=0;t=1`, "1"}, // 0.2 token: 0.67 s
		}},
		// The meter: level(t)+n <= Burst, leaking 0.3 a second; its
		// level is the token bucket's capacity less its tokens.
		{algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: 3, Window: w}, []designStep{
			{200, `"p";r=2;t=4`, ""},
			{200, `"p";r=1;t=2`, ""},
			{200, `"p";r=0;t=1`, ""},
			{200, `"p";r=0;t=3`, ""},
			{429, `"p";r=0;t=1`, "1"},
		}},
	} {
		t.Run(string(c.spec.Algorithm), func(t *testing.T) {
			for _, name := range []string{"chi", "stdlib"} {
				store, clock := newStore(t)
				m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("p", c.spec, remote))}, middleware.WithClock(clock))
				h := designRouters(m.Handler)[name]
				for i, s := range c.steps {
					clock.Advance(1500 * time.Millisecond)
					w := serve(h, "GET", "/")
					if w.Code != s.status || w.Header().Get("RateLimit") != s.rateLimit || w.Header().Get("Retry-After") != s.retryAfter ||
						w.Header().Get("RateLimit-Policy") != `"p";q=3;w=10` {
						t.Errorf("%s request %d: %d RateLimit %q Retry-After %q RateLimit-Policy %q; want %d %q %q and \"p\";q=3;w=10", name, i, w.Code,
							w.Header().Get("RateLimit"), w.Header().Get("Retry-After"), w.Header().Get("RateLimit-Policy"), s.status, s.rateLimit, s.retryAfter)
					}
				}
			}
		})
	}
}

// TestDesignLeakyQueueHeaders: the shaper admits a request with
// delay = max(t, next) − t while delay <= MaxDelay, then next += W/L;
// the middleware holds the request that long, and a request whose delay
// would pass MaxDelay is denied with a 429 whose Retry-After is the wait
// for the queue to take one more. 3 per 10 s (a place every 10/3 s),
// MaxDelay 7 s: q = floor(7·3/10) + 1 = 3 places. The hold here does not
// move the clock, so that the times are those of the decisions.
func TestDesignLeakyQueueHeaders(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 3, Window: 10 * time.Second, MaxDelay: 7 * time.Second}
	for _, name := range []string{"chi", "stdlib"} {
		store, clock := newStore(t)
		var holds []time.Duration
		m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("q", spec, remote))}, middleware.WithClock(clock),
			middleware.WithWait(func(_ context.Context, d time.Duration) error { holds = append(holds, d); return nil }))
		h := designRouters(m.Handler)[name]
		// D is the queue's delay after the request (next − now); r is
		// floor((MaxDelay − D)·L/W) + 1 while D <= MaxDelay, and t the
		// wait until D <= MaxDelay − r·W/L.
		for i, s := range []designStep{
			{200, `"q";r=2;t=3`, ""},  // at 1.5 s: delay 0, D = 3.33 s; r = 3 once D <= 0.33 s
			{200, `"q";r=1;t=2`, ""},  // at 3 s: delay 1.83 s, D = 5.17 s; r = 2 once D <= 3.67 s (1.5 s)
			{200, `"q";r=1;t=4`, ""},  // at 4.5 s: delay 3.67 s, D = 7 s; r = 2 in 3.33 s
			{200, `"q";r=0;t=2`, ""},  // at 6 s: delay 5.5 s, D = 8.83 s; r = 1 once D <= 7 s (1.83 s)
			{429, `"q";r=0;t=1`, "1"}, // at 7.5 s: delay 7.33 s > 7 s; 0.33 s to wait
		} {
			clock.Advance(1500 * time.Millisecond)
			w := serve(h, "GET", "/")
			if w.Code != s.status || w.Header().Get("RateLimit") != s.rateLimit || w.Header().Get("Retry-After") != s.retryAfter ||
				w.Header().Get("RateLimit-Policy") != `"q";q=3;w=10` {
				t.Errorf("%s request %d: %d RateLimit %q Retry-After %q RateLimit-Policy %q; want %d %q %q and \"q\";q=3;w=10", name, i, w.Code,
					w.Header().Get("RateLimit"), w.Header().Get("Retry-After"), w.Header().Get("RateLimit-Policy"), s.status, s.rateLimit, s.retryAfter)
			}
		}
		// The holds, to the millisecond: 1.83 s, 3.67 s and 5.5 s (the
		// first request is not held, nor the denied one).
		var ms []int64
		for _, d := range holds {
			ms = append(ms, d.Round(time.Millisecond).Milliseconds())
		}
		if !slices.Equal(ms, []int64{1833, 3667, 5500}) {
			t.Errorf("%s: held %v, want 1.833 s, 3.667 s and 5.5 s", name, holds)
		}
	}
}

// TestDesignSingleValuedReset: the single-valued profiles report the
// policy with the lowest remaining, its reset the time until the quota is
// fully restored (ResetAfter: not t), and on a 429 the Retry-After. The
// token bucket of TestDesignAlgorithmHeaders is full again after
// (3 − tokens)/0.3 s; the sliding log once its newest event is more than
// W old. LegacyUnix sends now + reset as a Unix time, rounded up.
func TestDesignSingleValuedReset(t *testing.T) {
	const w = 10 * time.Second
	tb := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 3, Window: w}
	sl := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 3, Window: w}
	unix := t0.Unix()
	u := func(s int64) string { return strconv.FormatInt(unix+s, 10) }
	for _, c := range []struct {
		spec    algorithms.Spec
		profile middleware.Profile
		field   string
		steps   []designStep
	}{
		{tb, middleware.Draft6, "RateLimit-Reset", []designStep{
			{200, "4", ""}, // 1 token short: 3.33 s
			{200, "6", ""}, // 1.55: 5.17 s
			{200, "7", ""}, // 2.1: 7 s
			{200, "9", ""}, // 2.65: 8.83 s
			{429, "1", "1"},
		}},
		{tb, middleware.Draft7, "RateLimit", []designStep{
			{200, "limit=3, remaining=2, reset=4", ""},
			{200, "limit=3, remaining=1, reset=6", ""},
			{200, "limit=3, remaining=0, reset=7", ""},
			{200, "limit=3, remaining=0, reset=9", ""},
			{429, "limit=3, remaining=0, reset=1", "1"},
		}},
		// Full again at 1.5 s + 3.33 s, 3 s + 5.17 s, 4.5 s + 7 s, 6 s +
		// 8.83 s: rounded up, 5, 9, 12 and 15 s after t0; the 429 at
		// 7.5 s names 7.5 s + 1 s.
		{tb, middleware.LegacyUnix, "X-RateLimit-Reset", []designStep{
			{200, u(5), ""},
			{200, u(9), ""},
			{200, u(12), ""},
			{200, u(15), ""},
			{429, u(9), "1"},
		}},
		// The newest event leaves 10 s + 1 ns after it: 11 s whenever a
		// request was admitted; the 429s name their Retry-After.
		{sl, middleware.Legacy, "X-RateLimit-Reset", []designStep{
			{200, "11", ""},
			{200, "11", ""},
			{200, "11", ""},
			{429, "6", "6"},
			{429, "5", "5"},
		}},
	} {
		t.Run(string(c.spec.Algorithm)+"/"+c.profile.String(), func(t *testing.T) {
			for _, name := range []string{"chi", "stdlib"} {
				store, clock := newStore(t)
				m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("p", c.spec, remote))},
					middleware.WithClock(clock), middleware.WithHeaders(c.profile))
				h := designRouters(m.Handler)[name]
				for i, s := range c.steps {
					clock.Advance(1500 * time.Millisecond)
					w := serve(h, "GET", "/")
					if w.Code != s.status || w.Header().Get(c.field) != s.rateLimit || w.Header().Get("Retry-After") != s.retryAfter {
						t.Errorf("%s request %d: %d %s %q Retry-After %q; want %d %q %q", name, i, w.Code, c.field,
							w.Header().Get(c.field), w.Header().Get("Retry-After"), s.status, s.rateLimit, s.retryAfter)
					}
				}
			}
		})
	}
}

// designSpecs are the specs the property tests draw from: every kind,
// windows that are and are not whole seconds.
var designSpecs = []algorithms.Spec{
	{Algorithm: algorithms.FixedWindow, Limit: 4, Window: 3 * time.Second},
	{Algorithm: algorithms.FixedWindow, Limit: 7, Window: 1500 * time.Millisecond},
	{Algorithm: algorithms.SlidingLog, Limit: 4, Window: 5 * time.Second},
	{Algorithm: algorithms.SlidingWindow, Limit: 5, Window: 4 * time.Second},
	{Algorithm: algorithms.SlidingBuckets, Limit: 5, Window: 6 * time.Second, Buckets: 3},
	{Algorithm: algorithms.TokenBucket, Limit: 3, Window: 7 * time.Second, Burst: 5},
	{Algorithm: algorithms.LeakyBucket, Limit: 3, Window: 5 * time.Second, Burst: 4},
	{Algorithm: algorithms.LeakyQueue, Limit: 2, Window: 3 * time.Second, MaxDelay: 4 * time.Second},
}

// costHeader is the cost function of the property tests: X-Cost.
func costHeader(r *http.Request) int64 {
	n, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
	return n
}

// designPolicies returns k policies named prefix0, prefix1, ... of the
// first k specs of perm, costed by X-Cost.
func designPolicies(prefix string, perm []int) []*policy.Policy {
	var ps []*policy.Policy
	for i, j := range perm {
		ps = append(ps, policy.Must(policy.New(prefix+strconv.Itoa(i), designSpecs[j], remote, policy.WithCost(costHeader))))
	}
	return ps
}

var designMember = regexp.MustCompile(`^"([^"]+)";r=(\d+);t=(\d+)$`)

// ietfMembers parses the members of the RateLimit field lines of h: name
// to r and t.
func ietfMembers(t *testing.T, h http.Header) map[string][2]int64 {
	t.Helper()
	out := map[string][2]int64{}
	for _, line := range h.Values("RateLimit") {
		for _, m := range strings.Split(line, ", ") {
			s := designMember.FindStringSubmatch(m)
			if s == nil {
				t.Fatalf("RateLimit member %q (field %q) is not \"name\";r=R;t=T", m, line)
			}
			r, _ := strconv.ParseInt(s[2], 10, 64)
			tt, _ := strconv.ParseInt(s[3], 10, 64)
			out[s[1]] = [2]int64{r, tt}
		}
	}
	return out
}

// violated returns the violated-policies of a 429's problem body.
func violated(t *testing.T, w *httptest.ResponseRecorder) []string {
	t.Helper()
	var p struct {
		V []string `json:"violated-policies"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || len(p.V) == 0 {
		t.Fatalf("429 body %q: %v, no violated-policies", w.Body.String(), err)
	}
	return p.V
}

// TestDesignPropertiesOneMiddleware runs random traces (1 to 3 stacked
// policies of random kinds, random costs, random gaps) and checks what the
// contract says of every response: a violated policy has r below the cost;
// Retry-After is never before the t of a violated policy, and after
// waiting it the same request is admitted (nothing else arriving: denied
// requests consume nothing), not a second before (it is the wait rounded
// up, no longer); an admitted request's t is the wait until r
// grows (not grown 1 s before t, grown at t), read with Peek.
func TestDesignPropertiesOneMiddleware(t *testing.T) {
	retried := 0
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		store, clock := newStore(t)
		perm := rng.Perm(len(designSpecs))[:1+rng.IntN(3)]
		ps := designPolicies("p", perm)
		capacity := map[string]int64{}
		minCap := int64(1 << 62)
		for _, p := range ps {
			capacity[p.Name()] = p.Capacity()
			minCap = min(minCap, p.Capacity())
		}
		m := middleware.MustNew(store, ps, middleware.WithClock(clock),
			middleware.WithWait(func(_ context.Context, d time.Duration) error { clock.Advance(d); return nil }))
		h := m.Handler(ok)
		send := func(cost int64) *httptest.ResponseRecorder {
			return serve(h, "GET", "/", "X-Cost", strconv.FormatInt(cost, 10))
		}
		remaining := func(name string) int64 {
			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set("X-Cost", "1")
			res, err := m.Peek(r)
			if err != nil {
				t.Fatal(err)
			}
			for i := range res.Len() {
				if res.Policy(i).Name() == name {
					return res.Decision(i).Remaining
				}
			}
			t.Fatalf("Peek has no policy %s", name)
			return 0
		}
		for step := range 50 {
			clock.Advance(time.Duration(rng.IntN(1500)) * time.Millisecond)
			cost := 1 + rng.Int64N(min(minCap, 3))
			w := send(cost)
			got := ietfMembers(t, w.Header())
			switch w.Code {
			case http.StatusTooManyRequests:
				ra, err := strconv.ParseInt(w.Header().Get("Retry-After"), 10, 64)
				if err != nil || ra < 1 {
					t.Fatalf("seed %d step %d: Retry-After %q", seed, step, w.Header().Get("Retry-After"))
				}
				for _, name := range violated(t, w) {
					if v := got[name]; v[0] >= cost || v[1] > ra {
						t.Errorf("seed %d step %d: violated %s has r=%d t=%d; cost %d, Retry-After %d", seed, step, name, v[0], v[1], cost, ra)
					}
				}
				if rng.IntN(2) == 0 {
					retried++
					if ra >= 2 {
						clock.Advance(time.Duration(ra-1) * time.Second)
						if w1 := send(cost); w1.Code != http.StatusTooManyRequests {
							t.Errorf("seed %d step %d: the retry 1 s before Retry-After %d is %d: Retry-After is longer than the wait", seed, step, ra, w1.Code)
						}
						clock.Advance(time.Second)
					} else {
						clock.Advance(time.Duration(ra) * time.Second)
					}
					if w2 := send(cost); w2.Code != http.StatusOK {
						t.Errorf("seed %d step %d: the retry after Retry-After %d is %d (%q)", seed, step, ra, w2.Code, w2.Header().Get("RateLimit"))
					}
				}
			case http.StatusOK:
				if rng.IntN(3) != 0 {
					continue
				}
				for _, p := range ps {
					name, v := p.Name(), got[p.Name()]
					// A held queue's r is its decision's, reported after
					// the hold: not a count to compare with a later one.
					if v[0] >= capacity[name] || v[1] == 0 || p.Spec().Algorithm == algorithms.LeakyQueue {
						continue
					}
					clock.Advance(time.Duration(v[1]-1) * time.Second)
					if r := remaining(name); r > v[0] {
						t.Errorf("seed %d step %d: %s r=%d t=%d, but r=%d %d s later", seed, step, name, v[0], v[1], r, v[1]-1)
					}
					clock.Advance(time.Second)
					if r := remaining(name); r <= v[0] {
						t.Errorf("seed %d step %d: %s r=%d t=%d, still r=%d %d s later", seed, step, name, v[0], v[1], r, v[1])
					}
					break
				}
			default:
				t.Fatalf("seed %d step %d: status %d", seed, step, w.Code)
			}
		}
	}
	if retried < 100 {
		t.Errorf("only %d retries after a 429 were tried", retried)
	}
}

// TestDesignPropertiesProfilesAgree runs each random trace through one
// middleware per profile, each on its own store and the one clock: the
// decisions are the same; a single-valued profile reports the lowest r of
// the IETF members on a 200 and, on a 429, a reset equal to Retry-After;
// draft-7's dictionary holds draft-6's numbers; legacy's are draft-6's;
// LegacyUnix's reset is now plus legacy's, rounded up.
func TestDesignPropertiesProfilesAgree(t *testing.T) {
	profiles := []middleware.Profile{middleware.IETF, middleware.Draft7, middleware.Draft6, middleware.Legacy, middleware.LegacyUnix}
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 2))
		clock := algotest.NewClock(t0)
		perm := rng.Perm(len(designSpecs))[:1+rng.IntN(3)]
		var hs []http.Handler
		for _, p := range profiles {
			store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			// A hold does not move the clock: the five see one instant.
			hs = append(hs, middleware.MustNew(store, designPolicies("p", perm), middleware.WithClock(clock), middleware.WithHeaders(p),
				middleware.WithWait(func(context.Context, time.Duration) error { return nil })).Handler(ok))
		}
		for step := range 50 {
			clock.Advance(time.Duration(rng.IntN(1500)) * time.Millisecond)
			cost := strconv.Itoa(1 + rng.IntN(2))
			var ws []*httptest.ResponseRecorder
			for _, h := range hs {
				ws = append(ws, serve(h, "GET", "/", "X-Cost", cost))
			}
			ietf, d7, d6, lg, lu := ws[0], ws[1].Header(), ws[2].Header(), ws[3].Header(), ws[4].Header()
			for i, w := range ws[1:] {
				if w.Code != ietf.Code || w.Header().Get("Retry-After") != ietf.Header().Get("Retry-After") {
					t.Fatalf("seed %d step %d: %s answered %d Retry-After %q, IETF %d %q", seed, step, profiles[i+1],
						w.Code, w.Header().Get("Retry-After"), ietf.Code, ietf.Header().Get("Retry-After"))
				}
			}
			lowest := int64(1 << 62)
			for _, v := range ietfMembers(t, ietf.Header()) {
				lowest = min(lowest, v[0])
			}
			limit, rem, reset := d6.Get("RateLimit-Limit"), d6.Get("RateLimit-Remaining"), d6.Get("RateLimit-Reset")
			if ietf.Code == http.StatusOK && rem != strconv.FormatInt(lowest, 10) {
				t.Errorf("seed %d step %d: draft-6 remaining %s, the IETF members' lowest r is %d", seed, step, rem, lowest)
			}
			if ietf.Code == http.StatusTooManyRequests && reset != ietf.Header().Get("Retry-After") {
				t.Errorf("seed %d step %d: draft-6 reset %s on a 429 with Retry-After %s", seed, step, reset, ietf.Header().Get("Retry-After"))
			}
			if want := "limit=" + limit + ", remaining=" + rem + ", reset=" + reset; d7.Get("RateLimit") != want {
				t.Errorf("seed %d step %d: draft-7 %q, draft-6's numbers %q", seed, step, d7.Get("RateLimit"), want)
			}
			if lg.Get("X-RateLimit-Limit") != limit || lg.Get("X-RateLimit-Remaining") != rem || lg.Get("X-RateLimit-Reset") != reset {
				t.Errorf("seed %d step %d: legacy %s/%s/%s, draft-6 %s/%s/%s", seed, step,
					lg.Get("X-RateLimit-Limit"), lg.Get("X-RateLimit-Remaining"), lg.Get("X-RateLimit-Reset"), limit, rem, reset)
			}
			// now + delta rounded up is at most now + ceil(delta) rounded up.
			delta, _ := strconv.ParseInt(reset, 10, 64)
			at, _ := strconv.ParseInt(lu.Get("X-RateLimit-Reset"), 10, 64)
			now := clock.Now()
			hi := now.Unix() + delta
			if now.Nanosecond() > 0 {
				hi++
			}
			if at > hi || at < hi-1 || lu.Get("X-RateLimit-Remaining") != rem {
				t.Errorf("seed %d step %d: legacy-unix reset %d remaining %s at %v; legacy reset %d s, remaining %s", seed, step, at,
					lu.Get("X-RateLimit-Remaining"), now, delta, rem)
			}
		}
	}
}

// TestDesignPropertiesNested: chi's r.Use(outer) and r.With(inner), random
// policies in each, random profile. A 429 of the inner middleware comes
// after the outer one counted the request; its Retry-After is never
// before the violated policies' t nor before the outer one would admit
// the retry, so that the retry after it is admitted by both (nothing else
// arriving).
func TestDesignPropertiesNested(t *testing.T) {
	profiles := []middleware.Profile{middleware.IETF, middleware.Draft7, middleware.Draft6, middleware.Legacy, middleware.LegacyUnix}
	retried := 0
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 3))
		store, clock := newStore(t)
		perm := rng.Perm(len(designSpecs))
		no, ni := 1+rng.IntN(2), 1+rng.IntN(2)
		profile := profiles[rng.IntN(len(profiles))]
		wait := middleware.WithWait(func(_ context.Context, d time.Duration) error { clock.Advance(d); return nil })
		outer := middleware.MustNew(store, designPolicies("o", perm[:no]), middleware.WithClock(clock), middleware.WithHeaders(profile), wait)
		inner := middleware.MustNew(store, designPolicies("i", perm[no:no+ni]), middleware.WithClock(clock), middleware.WithHeaders(profile), wait)
		r := chi.NewRouter()
		r.Use(outer.Handler)
		r.With(inner.Handler).Get("/", ok)
		for step := range 50 {
			clock.Advance(time.Duration(rng.IntN(1500)) * time.Millisecond)
			w := serve(r, "GET", "/", "X-Cost", "1")
			if w.Code != http.StatusTooManyRequests {
				continue
			}
			names := violated(t, w)
			if !strings.HasPrefix(names[0], "i") {
				continue // the outer one denied: the inner one was not asked
			}
			ra, _ := strconv.ParseInt(w.Header().Get("Retry-After"), 10, 64)
			if profile == middleware.IETF {
				members := ietfMembers(t, w.Header())
				for _, name := range names {
					if members[name][1] > ra {
						t.Errorf("seed %d step %d: Retry-After %d before the t of %s: %v", seed, step, ra, name, w.Header().Values("RateLimit"))
					}
				}
			}
			if rng.IntN(2) == 0 {
				retried++
				clock.Advance(time.Duration(ra) * time.Second)
				if w2 := serve(r, "GET", "/", "X-Cost", "1"); w2.Code != http.StatusOK {
					t.Errorf("seed %d step %d (%s): the retry after Retry-After %d is %d %s", seed, step, profile, ra, w2.Code, w2.Body.String())
				}
			}
		}
	}
	if retried < 100 {
		t.Errorf("only %d retries after an inner 429 were tried", retried)
	}
}
