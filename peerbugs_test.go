package ratekeeper_test

// Peer-bug regression suite: one test per known bug or user complaint of
// the peer libraries (shared/reference/peers.md, sections 1-7, "(b) Ten
// things none of them do" and the Appendix of issue citations) that applies
// to ratekeeper, each named after its citation, commented with what the
// peer does wrong, and asserting the exact behaviour we promise instead,
// through real HTTP (chi and/or ServeMux with httptest, an injected clock)
// wherever the bug is visible over HTTP, and through real redis-server
// processes (redistest, storetest; never port 6379) for the Redis ones.
//
// Judged not applicable (no test):
//   - sethvargo/go-limiter#21, #23, #26 (//go:linkname to runtime time broke
//     builds): nothing here uses linkname; time comes from an injected
//     algorithms.Clock (SystemClock by default).
//   - sethvargo/go-redisstore's TestOnBorrow returning a non-nil error for a
//     nil one (re-dial per take): we use go-redis's pool, no redigo.
//   - go-redisstore / mennanov taking "now" from the client's clock (skew
//     between instances): the Redis store reads the server's TIME unless a
//     clock is injected; with no clock the instants are Redis's own, so there
//     is no skew to provoke from a test that does not control Redis's clock.
//   - didip/tollbooth's HTTPMiddleware ignoring SetOverrideDefaultResponseWriter,
//     and throttled's "RateLimiter nil calls error() without returning": API
//     shapes we do not have (the nil-store counterpart is tested below).
//   - go-redis/redis_rate has no HTTP layer, mennanov/limiters' leaky bucket
//     as a queue (a shaper, not a bug), express-rate-limit's draft-8 names:
//     feature gaps, not bugs; our IETF headers are tested below.
//   - go-chi/httprate#19 (one limiter-wide mutex held across Redis I/O
//     serialises every key): a latency property that no deterministic test
//     can assert; the over-admission it was added to stop is tested below
//     (TestPeerBugHttprate19ConcurrentRequestsNeverOverAdmit), and the
//     stores lock per shard (memory) or run one script per decision (Redis).
//   - httprate-redis's reconnect goroutine that never exits: our stores run
//     no reconnect loop (a Redis call's goroutines end with the call and are
//     tracked for Close; the circuit breaker is state checked per call), and
//     goroutine ownership is covered by redisstore's Close tests.
//   - (b) 7, deterministic testability: this whole file is the test of it
//     (a manual clock drives both the memory and the Redis store).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/redis/go-redis/v9"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// pbErrs records what a middleware tells its error handler.
type pbErrs struct {
	mu   sync.Mutex
	errs []error
}

func (e *pbErrs) option() middleware.Option {
	return middleware.WithErrorHandler(func(_ *http.Request, err error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.errs = append(e.errs, err)
	})
}

func (e *pbErrs) list() []error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.errs)
}

// pbNew builds a middleware whose errors go to a pbErrs and whose log is
// discarded, failing the test on a construction error.
func pbNew(t testing.TB, store algorithms.Store, ps []*policy.Policy, opts ...middleware.Option) (*middleware.Middleware, *pbErrs) {
	t.Helper()
	errs := &pbErrs{}
	quiet := middleware.WithLogger(slog.New(slog.DiscardHandler)) // failure-state changes: expected here
	m, err := middleware.New(store, ps, append([]middleware.Option{errs.option(), quiet}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, errs
}

// pbRouters are the routers every HTTP-visible test runs on.
var pbRouters = []string{"chi", "stdlib"}

// pbServe serves hello on each pattern ("METHOD /path") through mw,
// installed after routing on the named router: chi's r.With on each route,
// a ServeMux handler wrapped by it. The server closes when t ends.
func pbServe(t *testing.T, router string, mw func(http.Handler) http.Handler, patterns ...string) *httptest.Server {
	t.Helper()
	var h http.Handler
	switch router {
	case "chi":
		r := chi.NewRouter()
		for _, p := range patterns {
			method, path, _ := strings.Cut(p, " ")
			r.With(mw).Method(method, path, hello)
		}
		h = r
	case "stdlib":
		mux := http.NewServeMux()
		for _, p := range patterns {
			mux.Handle(p, mw(hello))
		}
		h = mux
	default:
		t.Fatalf("no router %q", router)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// pbResp is what a test reads of a response.
type pbResp struct {
	status int
	header http.Header
	body   string
}

// pbDo sends one request with the given header name/value pairs.
func pbDo(t *testing.T, srv *httptest.Server, method, path string, hdr ...string) pbResp {
	t.Helper()
	return pbDoBody(t, srv, method, path, nil, hdr...)
}

func pbDoBody(t *testing.T, srv *httptest.Server, method, path string, body io.Reader, hdr ...string) pbResp {
	t.Helper()
	r, err := http.NewRequest(method, srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Add(hdr[i], hdr[i+1])
	}
	resp, err := srv.Client().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return pbResp{resp.StatusCode, resp.Header, string(b)}
}

// pbWant checks a response's status and, for each name/value pair, the
// header's only field line ("" for an absent header).
func pbWant(t *testing.T, step string, got pbResp, status int, hdr ...string) {
	t.Helper()
	if got.status != status {
		t.Errorf("%s: status %d, want %d (body %q)", step, got.status, status, got.body)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		vals := got.header.Values(hdr[i])
		want := hdr[i+1]
		switch {
		case want == "" && len(vals) != 0:
			t.Errorf("%s: %s %q, want none", step, hdr[i], vals)
		case want != "" && (len(vals) != 1 || vals[0] != want):
			t.Errorf("%s: %s %q, want one line %q", step, hdr[i], vals, want)
		}
	}
}

// pbIP is the IP key trusting the loopback test client as a proxy, so
// X-Forwarded-For names the client.
func pbIP(t testing.TB) keyfunc.Func {
	t.Helper()
	ip, _ := keys(t)
	return ip
}

// ---------------------------------------------------------------------------
// Retry-After and the reset values (peers.md (b) 3)

// TestPeerBugHttprate47RetryAfterIsTheRemainingWait guards against
// go-chi/httprate#47 (open; PR #64): httprate's Retry-After is always the
// full window length, however little of the window is left, so a client
// that obeys it waits up to twice as long as it must. Ours is the wait until
// the same request would be admitted, rounded up to whole seconds.
func TestPeerBugHttprate47RetryAfterIsTheRemainingWait(t *testing.T) {
	for _, router := range pbRouters {
		t.Run(router, func(t *testing.T) {
			clock, store := clockedStore(t)
			ip := pbIP(t)
			m, _ := pbNew(t, store, []*policy.Policy{
				policy.Must(policy.PerMinute("fixed", 3, ip, policy.WithAlgorithm(algorithms.FixedWindow))),
			})
			srv := pbServe(t, router, m.Handler, "GET /a")
			c := "198.51.100.47"
			for i := range 3 {
				pbWant(t, fmt.Sprint("request ", i+1), pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 200, "Retry-After", "")
			}
			clock.Advance(45 * time.Second)
			pbWant(t, "at 45s", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 429,
				"Retry-After", "15", "RateLimit", `"fixed";r=0;t=15`)
			clock.Advance(14 * time.Second)
			pbWant(t, "at 59s", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 429, "Retry-After", "1")
			clock.Advance(time.Second)
			pbWant(t, "at 60s", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 200, "Retry-After", "")
		})
	}
	// Stacked: the Retry-After of a request two policies deny is the
	// longer wait, so that the retry is not denied by the other one.
	clock, store := clockedStore(t)
	ip := pbIP(t)
	m, _ := pbNew(t, store, []*policy.Policy{
		policy.Must(policy.PerSecond("per-second", 1, ip, policy.WithAlgorithm(algorithms.FixedWindow))),
		policy.Must(policy.PerMinute("per-minute", 2, ip, policy.WithAlgorithm(algorithms.FixedWindow))),
	})
	srv := pbServe(t, "chi", m.Handler, "GET /a")
	c := "198.51.100.48"
	pbWant(t, "stacked 1", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 200)
	pbWant(t, "stacked 2", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 429, "Retry-After", "1")
	clock.Advance(1500 * time.Millisecond)
	pbWant(t, "stacked 3", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 200)
	pbWant(t, "stacked 4", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 429,
		"Retry-After", "59", "RateLimit", `"per-second";r=0;t=1, "per-minute";r=0;t=59`)
}

// TestPeerBugUluleTollboothRetryAfterOnEveryDenial guards against
// ulule/limiter and didip/tollbooth sending no Retry-After at all on their
// 429 (peers.md §2, §5, (b) 3). Every algorithm's 429 carries Retry-After,
// the algorithm's own wait (not a window length), equal to the t of the
// denied policy's RateLimit member, and the same on the memory and the
// Redis store. Two requests of 2 per 10 s at t0 (a 10 s boundary; one for
// the leaky_queue, which would hold the second 5 s past its MaxDelay of 0),
// then denied ones at once, then one when Retry-After says.
func TestPeerBugUluleTollboothRetryAfterOnEveryDenial(t *testing.T) {
	for _, tt := range []struct {
		spec algorithms.Spec
		wait string
	}{
		{algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 2, Window: 10 * time.Second}, "10"},
		// The oldest event counts while it is exactly W old: 10 s + 1 ns.
		{algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 2, Window: 10 * time.Second}, "11"},
		// prev·(W−e)/W + 0 + 1 <= 2 with prev = 2: e >= 5 s into the next window.
		{algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 2, Window: 10 * time.Second}, "15"},
		{algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 2, Window: 10 * time.Second, Buckets: 2}, "10"},
		// One unit comes back every 5 s.
		{algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 2, Window: 10 * time.Second}, "5"},
		{algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: 2, Window: 10 * time.Second}, "5"},
		{algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 2, Window: 10 * time.Second}, "5"},
	} {
		for _, name := range storetest.Names {
			t.Run(string(tt.spec.Algorithm)+"/"+name, func(t *testing.T) {
				clock := algotest.NewClock(t0)
				store := storetest.New(t, name, clock)
				m, _ := pbNew(t, store, []*policy.Policy{policy.Must(policy.New("p", tt.spec, pbIP(t)))})
				srv := pbServe(t, "stdlib", m.Handler, "GET /a")
				admitted := 2
				if tt.spec.Algorithm == algorithms.LeakyQueue {
					admitted = 1 // MaxDelay 0: the second would wait 5 s
				}
				for i := range admitted {
					pbWant(t, fmt.Sprint("request ", i+1), pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "198.51.100.5"), 200)
				}
				// Denied retries at the same instant change nothing (see
				// also TestPeerBugMennanov110BlockedRequestsDoNotConsume),
				// and a client that waits as told is admitted.
				for i := range 5 {
					pbWant(t, fmt.Sprint("denied ", i+1), pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "198.51.100.5"), 429,
						"Retry-After", tt.wait, "RateLimit", `"p";r=0;t=`+tt.wait)
				}
				wait, _ := strconv.Atoi(tt.wait)
				clock.Advance(time.Duration(wait) * time.Second)
				pbWant(t, "after Retry-After", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "198.51.100.5"), 200)
			})
		}
	}
}

// TestPeerBugGoLimiter61RetryAfterIsDeltaSeconds guards against
// sethvargo/go-limiter#61: its Retry-After was an HTTP-date, and in an
// invalid format ("UTC" for "GMT"). Ours is delay-seconds, an integer
// rounded up: 14.8 s left is "15", which no client reads as a date.
func TestPeerBugGoLimiter61RetryAfterIsDeltaSeconds(t *testing.T) {
	clock, store := clockedStore(t)
	m, _ := pbNew(t, store, []*policy.Policy{
		policy.Must(policy.PerMinute("fixed", 1, pbIP(t), policy.WithAlgorithm(algorithms.FixedWindow))),
	})
	srv := pbServe(t, "chi", m.Handler, "GET /a")
	pbWant(t, "first", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "198.51.100.61"), 200)
	clock.Advance(45*time.Second + 200*time.Millisecond)
	got := pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "198.51.100.61")
	pbWant(t, "second", got, 429, "Retry-After", "15")
	// delay-seconds is 1*DIGIT (RFC 9110 section 10.2.3): no date, valid
	// ("GMT") or not (go-limiter's "UTC", which http.ParseTime refuses too).
	if v := got.header.Get("Retry-After"); v == "" || strings.Trim(v, "0123456789") != "" {
		t.Errorf("Retry-After %q is not delay-seconds", v)
	}
}

// TestPeerBugGoLimiter22ResetIsDeltaSeconds guards against
// sethvargo/go-limiter#22 (declined): its X-RateLimit-Reset is an HTTP-date
// and it sends no RateLimit-Reset in the draft's delay-seconds. Our draft-6
// RateLimit-Reset and legacy X-RateLimit-Reset are delay-seconds (the Unix
// time only under the profile named for it, LegacyUnix).
func TestPeerBugGoLimiter22ResetIsDeltaSeconds(t *testing.T) {
	for _, tt := range []struct {
		profile middleware.Profile
		header  string
		want    string
	}{
		{middleware.Draft6, "RateLimit-Reset", "40"},
		{middleware.Legacy, "X-RateLimit-Reset", "40"},
		{middleware.LegacyUnix, "X-RateLimit-Reset", strconv.FormatInt(t0.Unix()+60, 10)},
	} {
		t.Run(tt.profile.String(), func(t *testing.T) {
			clock, store := clockedStore(t)
			m, _ := pbNew(t, store, []*policy.Policy{
				policy.Must(policy.PerMinute("fixed", 5, pbIP(t), policy.WithAlgorithm(algorithms.FixedWindow))),
			}, middleware.WithHeaders(tt.profile), middleware.WithClock(clock))
			srv := pbServe(t, "stdlib", m.Handler, "GET /a")
			clock.Advance(20 * time.Second)
			pbWant(t, "at 20s", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "198.51.100.22"), 200, tt.header, tt.want)
		})
	}
}

// TestPeerBugTollboothConstantRateLimitReset guards against didip/tollbooth
// sending RateLimit-Reset: 1 on every response, whatever the limit's state
// (peers.md §5, (b) 2). Ours counts down with the window: 40 s left at
// 20 s, 10 s left at 50 s, and on the 429 it is the Retry-After.
func TestPeerBugTollboothConstantRateLimitReset(t *testing.T) {
	clock, store := clockedStore(t)
	m, _ := pbNew(t, store, []*policy.Policy{
		policy.Must(policy.PerMinute("fixed", 2, pbIP(t), policy.WithAlgorithm(algorithms.FixedWindow))),
	}, middleware.WithHeaders(middleware.Draft6))
	srv := pbServe(t, "chi", m.Handler, "GET /a")
	c := "198.51.100.55"
	clock.Advance(20 * time.Second)
	pbWant(t, "at 20s", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 200,
		"RateLimit-Limit", "2", "RateLimit-Remaining", "1", "RateLimit-Reset", "40")
	clock.Advance(30 * time.Second)
	pbWant(t, "at 50s", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 200,
		"RateLimit-Limit", "2", "RateLimit-Remaining", "0", "RateLimit-Reset", "10")
	clock.Advance(3 * time.Second)
	pbWant(t, "at 53s", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 429,
		"RateLimit-Remaining", "0", "RateLimit-Reset", "7", "Retry-After", "7")
}

// TestPeerBugRedisRate42ImpossibleCostHasNoRetryAfter guards against
// go-redis/redis_rate answering a cost larger than the burst with a finite
// RetryAfter (its tests expect about 99 s) although no wait ever admits it
// (peers.md §6, (b) 3; redis_rate#42 on its confusing RetryAfter values).
// Ours: the store returns a *CostError, on memory and on Redis, and the
// middleware's 429 has no Retry-After and no rate-limit fields, names the
// policy and consumes nothing of the request's other policies; a cost that
// fits is still decided as usual.
func TestPeerBugRedisRate42ImpossibleCostHasNoRetryAfter(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Minute}
	for _, name := range storetest.Names {
		t.Run(name, func(t *testing.T) {
			store := storetest.New(t, name, algotest.NewClock(t0))
			_, err := store.Take(context.Background(), algorithms.Check{Spec: spec, Key: "bulk:198.51.100.42", Cost: 11})
			var ce *algorithms.CostError
			if !errors.As(err, &ce) || ce.Cost != 11 {
				t.Fatalf("Take(cost 11 of 10) error %v, want a *CostError of cost 11", err)
			}

			cost := policy.WithCost(func(r *http.Request) int64 {
				n, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
				return n
			})
			m, _ := pbNew(t, store, []*policy.Policy{
				policy.Must(policy.PerMinute("all", 20, pbIP(t), policy.WithAlgorithm(algorithms.FixedWindow))),
				policy.Must(policy.New("bulk", spec, pbIP(t), cost)),
			})
			srv := pbServe(t, "chi", m.Handler, "POST /bulk")
			for i := range 2 {
				got := pbDo(t, srv, "POST", "/bulk", "X-Forwarded-For", "198.51.100.42", "X-Cost", "11")
				pbWant(t, fmt.Sprint("cost 11 #", i+1), got, 429, "Retry-After", "", "RateLimit", "", "RateLimit-Policy", "")
				var p struct {
					Violated []string `json:"violated-policies"`
				}
				if err := json.Unmarshal([]byte(got.body), &p); err != nil || !slices.Equal(p.Violated, []string{"bulk"}) {
					t.Errorf("body %s: violated-policies %q (%v), want [bulk]", got.body, p.Violated, err)
				}
			}
			// The refused requests took nothing from "all" either.
			pbWant(t, "cost 10", pbDo(t, srv, "POST", "/bulk", "X-Forwarded-For", "198.51.100.42", "X-Cost", "10"), 200,
				"RateLimit", `"all";r=19;t=60, "bulk";r=0;t=6`)
		})
	}
}

// TestPeerBugTollbooth67AnyWindowNotJustPerSecond guards against
// didip/tollbooth#67 ("Why force request only per seconds?"): its rate is
// per second only, so a daily or 90-second limit is a fraction. Ours takes
// any window, and reports its real wait: 1 per day (fixed windows on UTC
// days: t0 is 80 040 s into its day) and 3 per 90 s as a token bucket.
func TestPeerBugTollbooth67AnyWindowNotJustPerSecond(t *testing.T) {
	_, store := clockedStore(t)
	ip := pbIP(t)
	m, _ := pbNew(t, store, []*policy.Policy{
		policy.Must(policy.PerDay("daily", 1, ip, policy.WithAlgorithm(algorithms.FixedWindow), policy.WithRoutes("GET /daily"))),
		policy.Must(policy.Per("slow", 3, 90*time.Second, ip, policy.WithAlgorithm(algorithms.TokenBucket), policy.WithRoutes("GET /slow"))),
	})
	srv := pbServe(t, "stdlib", m.Handler, "GET /daily", "GET /slow")
	c := "198.51.100.67"
	pbWant(t, "daily 1", pbDo(t, srv, "GET", "/daily", "X-Forwarded-For", c), 200, "RateLimit-Policy", `"daily";q=1;w=86400`)
	pbWant(t, "daily 2", pbDo(t, srv, "GET", "/daily", "X-Forwarded-For", c), 429, "Retry-After", "6360")
	for i := range 3 {
		pbWant(t, fmt.Sprint("slow ", i+1), pbDo(t, srv, "GET", "/slow", "X-Forwarded-For", c), 200, "RateLimit-Policy", `"slow";q=3;w=90`)
	}
	pbWant(t, "slow 4", pbDo(t, srv, "GET", "/slow", "X-Forwarded-For", c), 429, "Retry-After", "30")
}

// ---------------------------------------------------------------------------
// Algorithms

// TestPeerBugMennanov110BlockedRequestsDoNotConsume guards against
// mennanov/limiters#110: its sliding window increments the counter on
// blocked requests too, so a client that retries while blocked pushes its
// own wait further out (and ulule's Get increments on denial as well). Ours
// counts nothing for a denied request: 5 per minute (sliding window
// counter), 5 at t0, then a denied retry every second from 30 s to 71 s,
// each told the same instant (72 s, when 5·(60−12)/60 + 1 = 5), which
// admits, on memory and on Redis, also with the over-limit cache that
// answers denials locally (envoy's STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT
// idea, redisstore.WithDenyCache).
func TestPeerBugMennanov110BlockedRequestsDoNotConsume(t *testing.T) {
	for _, name := range append(slices.Clone(storetest.Names), "redis with deny cache") {
		t.Run(name, func(t *testing.T) {
			clock := algotest.NewClock(t0)
			var store algorithms.Store
			if name == "redis with deny cache" {
				rdb := pbClient(t, redistest.New(t).Addr)
				rs := pbRedisStore(t, rdb, redisstore.WithClock(clock), redisstore.WithDenyCache(100))
				store = rs
			} else {
				store = storetest.New(t, name, clock)
			}
			m, _ := pbNew(t, store, []*policy.Policy{policy.Must(policy.PerMinute("sw", 5, pbIP(t)))})
			srv := pbServe(t, "chi", m.Handler, "GET /a")
			c := "198.51.100.110"
			for i := range 5 {
				pbWant(t, fmt.Sprint("request ", i+1), pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 200)
			}
			for s := 30; s <= 71; s++ {
				clock.Set(t0.Add(time.Duration(s) * time.Second))
				pbWant(t, fmt.Sprintf("retry at %ds", s), pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 429,
					"Retry-After", strconv.Itoa(72-s))
			}
			clock.Set(t0.Add(72 * time.Second))
			// 5·48/60 + 1 = 5 used: r=0, more room once 5·(60−e)/60 <= 3, at e = 24 s.
			pbWant(t, "at 72s", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 200, "RateLimit", `"sw";r=0;t=12`)
		})
	}
}

// TestPeerBugThrottled29BurstZeroMeansLimit guards against
// throttled/throttled#29: with MaxBurst 0, PerSec(5) admits one request per
// 200 ms (its limit is MaxBurst+1), which surprises users who asked for 5 a
// second. Our Burst 0 means Limit: a token bucket of 5 per second admits 5
// at once, then one every 200 ms (Retry-After rounded up to 1).
func TestPeerBugThrottled29BurstZeroMeansLimit(t *testing.T) {
	for _, opts := range [][]policy.Option{
		{policy.WithAlgorithm(algorithms.TokenBucket)},
		{policy.WithAlgorithm(algorithms.TokenBucket), policy.WithBurst(0)},
	} {
		clock, store := clockedStore(t)
		m, _ := pbNew(t, store, []*policy.Policy{policy.Must(policy.PerSecond("tb", 5, pbIP(t), opts...))})
		srv := pbServe(t, "stdlib", m.Handler, "GET /a")
		c := "198.51.100.29"
		for i := range 5 {
			pbWant(t, fmt.Sprint("request ", i+1), pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 200,
				"RateLimit-Policy", `"tb";q=5;w=1`)
		}
		pbWant(t, "sixth", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 429, "Retry-After", "1")
		clock.Advance(200 * time.Millisecond)
		pbWant(t, "at 200ms", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 200)
	}
}

// TestPeerBugGoLimiterTokenBucketIsAFixedWindow guards against
// sethvargo/go-limiter's memorystore, documented as tokens per interval but
// resetting every bucket to full on each interval tick counted from its
// creation ("drop fill rate, reset on new ticks"): a fixed window anchored
// per key, nothing back before the tick and everything at it (peers.md §3).
// Our token bucket refills continuously: 6 per minute is one every 10 s.
func TestPeerBugGoLimiterTokenBucketIsAFixedWindow(t *testing.T) {
	clock, store := clockedStore(t)
	m, _ := pbNew(t, store, []*policy.Policy{
		policy.Must(policy.PerMinute("tb", 6, pbIP(t), policy.WithAlgorithm(algorithms.TokenBucket))),
	})
	srv := pbServe(t, "chi", m.Handler, "GET /a")
	c := "198.51.100.33"
	for i := range 6 {
		pbWant(t, fmt.Sprint("request ", i+1), pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 200)
	}
	clock.Advance(3 * time.Second)
	pbWant(t, "at 3s", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 429, "Retry-After", "7")
	clock.Advance(7 * time.Second)
	pbWant(t, "at 10s", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 200, "RateLimit", `"tb";r=0;t=10`)
	pbWant(t, "at 10s again", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 429, "Retry-After", "10")
	clock.Advance(50 * time.Second)
	// Five tokens came back in 50 s; this takes one.
	pbWant(t, "at 60s", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 200, "RateLimit", `"tb";r=4;t=10`)
}

// TestPeerBugUlule204DefaultIsASlidingWindow guards against
// ulule/limiter#204 and envoyproxy/ratelimit#269: both are fixed windows
// only (ulule's users took it for a sliding one), so a client gets twice the
// limit across a window boundary. Our default algorithm is the sliding
// window counter: 10 per minute, 10 requests at 59 s, and at 61 s the next
// is refused until 66 s (10·(60−6)/60 + 1 = 10), where a fixed window admits
// ten more.
func TestPeerBugUlule204DefaultIsASlidingWindow(t *testing.T) {
	for _, tt := range []struct {
		opts   []policy.Option
		status int
		retry  string
	}{
		{nil, 429, "5"},
		{[]policy.Option{policy.WithAlgorithm(algorithms.FixedWindow)}, 200, ""},
	} {
		clock, store := clockedStore(t)
		p := policy.Must(policy.PerMinute("pm", 10, pbIP(t), tt.opts...))
		m, _ := pbNew(t, store, []*policy.Policy{p})
		srv := pbServe(t, "chi", m.Handler, "GET /a")
		c := "198.51.100.204"
		clock.Advance(59 * time.Second)
		for range 10 {
			pbWant(t, "at 59s", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 200)
		}
		clock.Advance(2 * time.Second)
		pbWant(t, fmt.Sprintf("%v at 61s", p.Spec().Algorithm), pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), tt.status, "Retry-After", tt.retry)
	}
}

// ---------------------------------------------------------------------------
// Client IP keys (peers.md (b) 5)

// TestPeerBugHttprateCanonicalizeIPv4MappedCollapse guards against
// httprate's CanonicalizeIP (and tollbooth's identical code), which masks
// an IPv4-mapped IPv6 address to /64 without unmapping it: ::ffff:1.2.3.4
// and ::ffff:5.6.7.8 both become "::", one bucket for every such client.
// Ours unmaps first: the two mapped clients are apart, and a mapped address
// shares the key of its IPv4 form.
func TestPeerBugHttprateCanonicalizeIPv4MappedCollapse(t *testing.T) {
	ip := pbIP(t)
	loopback := keyfunc.TrustedProxies(netip.MustParsePrefix("127.0.0.0/8"))
	for _, tt := range []struct {
		name       string
		opts       []keyfunc.IPOption
		remote     string
		hdr, value string
		key        string
	}{
		{"xff", []keyfunc.IPOption{loopback}, "127.0.0.1:1", "X-Forwarded-For", "::ffff:192.0.2.1", "192.0.2.1"},
		{"xff other", []keyfunc.IPOption{loopback}, "127.0.0.1:1", "X-Forwarded-For", "::ffff:198.51.100.2", "198.51.100.2"},
		{"xff hex form", []keyfunc.IPOption{loopback}, "127.0.0.1:1", "X-Forwarded-For", "::ffff:c000:201", "192.0.2.1"},
		{"xff with port", []keyfunc.IPOption{loopback}, "127.0.0.1:1", "X-Forwarded-For", "[::ffff:192.0.2.1]:4711", "192.0.2.1"},
		{"remote addr", nil, "[::ffff:192.0.2.1]:4711", "", "", "192.0.2.1"},
		{"remote addr /24", []keyfunc.IPOption{keyfunc.IPv4Prefix(24)}, "[::ffff:192.0.2.1]:4711", "", "", "192.0.2.0/24"},
		{"remote addr /48", []keyfunc.IPOption{keyfunc.IPv6Prefix(48)}, "[::ffff:192.0.2.1]:4711", "", "", "192.0.2.1"},
		{"forwarded", []keyfunc.IPOption{loopback, keyfunc.FromForwarded()}, "127.0.0.1:1", "Forwarded", `for="[::ffff:192.0.2.1]"`, "192.0.2.1"},
		{"x-real-ip", []keyfunc.IPOption{loopback, keyfunc.FromHeader("X-Real-IP")}, "127.0.0.1:1", "X-Real-IP", "::ffff:192.0.2.1", "192.0.2.1"},
		{"mapped proxy", []keyfunc.IPOption{loopback}, "[::ffff:127.0.0.1]:1", "X-Forwarded-For", "::ffff:192.0.2.1", "192.0.2.1"},
	} {
		f := keyfunc.Must(keyfunc.IP(tt.opts...))
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tt.remote
		if tt.hdr != "" {
			r.Header.Set(tt.hdr, tt.value)
		}
		if got, err := f(r); got != tt.key || err != nil {
			t.Errorf("%s: IP key = %q, %v; want %q", tt.name, got, err, tt.key)
		}
	}
	for _, router := range pbRouters {
		t.Run(router, func(t *testing.T) {
			_, store := clockedStore(t)
			m, _ := pbNew(t, store, []*policy.Policy{policy.Must(policy.PerMinute("once", 1, ip))})
			srv := pbServe(t, router, m.Handler, "GET /a")
			pbWant(t, "::ffff:192.0.2.1", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "::ffff:192.0.2.1"), 200)
			pbWant(t, "::ffff:198.51.100.2", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "::ffff:198.51.100.2"), 200)
			pbWant(t, "192.0.2.1", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "192.0.2.1"), 429)
			pbWant(t, "::ffff:198.51.100.2 again", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "::ffff:198.51.100.2"), 429)
		})
	}
}

// TestPeerBugUluleIPv6DefaultIs128 guards against ulule/limiter's IPv6
// mask defaulting to /128 (and throttled's and go-limiter's having none): a
// client holding a /64 rotates through 2^64 addresses, a fresh bucket each.
// Ours groups IPv6 by /64 by default.
func TestPeerBugUluleIPv6DefaultIs128(t *testing.T) {
	ip := pbIP(t)
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "127.0.0.1:1234"
	r.Header.Set("X-Forwarded-For", "2001:db8:1:2:aaaa:bbbb:cccc:dddd")
	if got, err := ip(r); got != "2001:db8:1:2::/64" || err != nil {
		t.Errorf("IP key = %q, %v; want 2001:db8:1:2::/64", got, err)
	}
	_, store := clockedStore(t)
	m, _ := pbNew(t, store, []*policy.Policy{policy.Must(policy.PerMinute("once", 1, ip))})
	srv := pbServe(t, "chi", m.Handler, "GET /a")
	pbWant(t, "2001:db8:1:2::1", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "2001:db8:1:2::1"), 200)
	pbWant(t, "2001:db8:1:2::ffff", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "2001:db8:1:2::ffff"), 429)
	pbWant(t, "2001:db8:1:3::1", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "2001:db8:1:3::1"), 200)
}

// TestPeerBugUlule181LeftmostForwardedFor guards against ulule/limiter's
// WithTrustForwardHeader taking the leftmost parseable X-Forwarded-For entry
// (and X-Real-IP after it), which the client writes itself: behind an
// appending proxy, a client rotating a fake first entry gets a fresh bucket
// per request (ulule/limiter#181, adam-p's critique). Ours walks from the
// right past the trusted proxies and never reads X-Real-IP unless told to.
func TestPeerBugUlule181LeftmostForwardedFor(t *testing.T) {
	for _, router := range pbRouters {
		t.Run(router, func(t *testing.T) {
			_, store := clockedStore(t)
			m, _ := pbNew(t, store, []*policy.Policy{policy.Must(policy.PerMinute("two", 2, pbIP(t)))})
			srv := pbServe(t, router, m.Handler, "GET /a")
			pbWant(t, "fake 1", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "203.0.113.1, 198.51.100.181"), 200)
			pbWant(t, "fake 2", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "203.0.113.2, 198.51.100.181"), 200)
			pbWant(t, "fake 3", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "203.0.113.3, 198.51.100.181"), 429)
			pbWant(t, "X-Real-IP", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "198.51.100.181", "X-Real-IP", "203.0.113.4"), 429)
			// A proxy that adds its own X-Forwarded-For line after the
			// client's: the last line's last entry is the client.
			pbWant(t, "two lines", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "203.0.113.5", "X-Forwarded-For", "198.51.100.181"), 429)
			// The entry our proxy wrote is not an address: no key, rather
			// than one the client wrote further left.
			pbWant(t, "garbage from the proxy", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "203.0.113.6, not-an-ip"), 400)
		})
	}
}

// TestPeerBugHttprate53RealIPIsSpoofable guards against go-chi/httprate#53
// and go-chi/chi#711: KeyByRealIP read True-Client-IP, X-Real-IP, then the
// leftmost X-Forwarded-For from anyone, so a client directly connected chose
// its own key. Our default IP key reads RemoteAddr alone: a client's own
// headers, rotated on every request, all land in its peer's bucket.
func TestPeerBugHttprate53RealIPIsSpoofable(t *testing.T) {
	ip := keyfunc.Must(keyfunc.IP())
	_, store := clockedStore(t)
	m, _ := pbNew(t, store, []*policy.Policy{policy.Must(policy.PerMinute("two", 2, ip))}, middleware.CheckForwarding(false))
	srv := pbServe(t, "chi", m.Handler, "GET /a")
	for i, h := range [][]string{
		{"True-Client-IP", "203.0.113.1"},
		{"X-Real-IP", "203.0.113.2"},
		{"X-Forwarded-For", "203.0.113.3"},
	} {
		want := 200
		if i == 2 {
			want = 429
		}
		pbWant(t, h[0], pbDo(t, srv, "GET", "/a", h...), want)
	}
}

// TestPeerBugNoForwardingMisconfigurationWarning guards against what
// peers.md (b) 5 finds in every Go peer: nothing tells the operator that
// the limiter keys every client by the proxy's address (express-rate-limit
// is the model: ERR_ERL_UNEXPECTED_X_FORWARDED_FOR, express-rate-limit#363).
// Ours reports ErrForwardingIgnored to the error handler, once, on the first
// forwarded request a peer-address key ignores the header of.
func TestPeerBugNoForwardingMisconfigurationWarning(t *testing.T) {
	_, store := clockedStore(t)
	m, errs := pbNew(t, store, []*policy.Policy{policy.Must(policy.PerMinute("pm", 100, keyfunc.Must(keyfunc.IP())))})
	srv := pbServe(t, "stdlib", m.Handler, "GET /a")
	pbWant(t, "no header", pbDo(t, srv, "GET", "/a"), 200)
	if got := errs.list(); len(got) != 0 {
		t.Fatalf("errors before any forwarded request: %v", got)
	}
	for range 3 {
		pbWant(t, "forwarded", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "198.51.100.1"), 200)
	}
	got := errs.list()
	if len(got) != 1 || !errors.Is(got[0], middleware.ErrForwardingIgnored) {
		t.Errorf("errors %v, want one ErrForwardingIgnored", got)
	}
}

// TestPeerBugTollbooth99IndexFromRight guards against the remote-IP
// picking of didip/tollbooth that drew a vulnerability disclosure
// (didip/tollbooth#99) and its v8 replacement, an entry counted from the
// right with no check of who sent it: a chain shorter than the hops
// declared falls back to an entry the client wrote, or to none. Ours with
// TrustedHops(2) takes the second entry from the right, and refuses a
// shorter chain.
func TestPeerBugTollbooth99IndexFromRight(t *testing.T) {
	ip := keyfunc.Must(keyfunc.IP(keyfunc.TrustedHops(2)))
	_, store := clockedStore(t)
	m, _ := pbNew(t, store, []*policy.Policy{policy.Must(policy.PerMinute("two", 2, ip))})
	srv := pbServe(t, "chi", m.Handler, "GET /a")
	pbWant(t, "fake 1", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "203.0.113.1, 198.51.100.99, 10.0.0.2"), 200)
	pbWant(t, "fake 2", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "203.0.113.2, 198.51.100.99, 10.0.0.2"), 200)
	pbWant(t, "no fake", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "198.51.100.99, 10.0.0.2"), 429)
	pbWant(t, "short chain", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "10.0.0.2"), 400)
	pbWant(t, "no chain", pbDo(t, srv, "GET", "/a"), 400)
}

// TestPeerBugGoLimiterRawHeaderKey guards against sethvargo/go-limiter's
// IPKeyFunc(headers...), which returns the header's raw value verbatim,
// unparsed and unvalidated: any string (or a whole forwarding list) is a
// key, so a client makes a fresh bucket per request by changing it.
// Ours parses the header it trusts: a value that is not one address is no
// key (400, not a bucket), and a valid one is the address's normal form.
func TestPeerBugGoLimiterRawHeaderKey(t *testing.T) {
	ip := keyfunc.Must(keyfunc.IP(keyfunc.FromHeader("X-Real-IP"), keyfunc.TrustedProxies(netip.MustParsePrefix("127.0.0.0/8"))))
	_, store := clockedStore(t)
	m, _ := pbNew(t, store, []*policy.Policy{policy.Must(policy.PerMinute("two", 2, ip))})
	srv := pbServe(t, "chi", m.Handler, "GET /a")
	for _, v := range []string{"evil-1", "evil-2", "198.51.100.7, 203.0.113.1", "198.51.100.7x"} {
		pbWant(t, "X-Real-IP "+v, pbDo(t, srv, "GET", "/a", "X-Real-IP", v), 400, "RateLimit", "")
	}
	pbWant(t, "valid 1", pbDo(t, srv, "GET", "/a", "X-Real-IP", "198.51.100.7"), 200)
	pbWant(t, "valid 2 (port)", pbDo(t, srv, "GET", "/a", "X-Real-IP", "198.51.100.7:9999"), 200)
	pbWant(t, "valid 3 (mapped)", pbDo(t, srv, "GET", "/a", "X-Real-IP", "::ffff:198.51.100.7"), 429)
}

// TestPeerBugTollboothSkipsWithoutAKey guards against didip/tollbooth
// skipping the limiter when it finds no client IP (a client that omits the
// header its IPLookup reads is never limited), and didip/tollbooth#94, where
// header-based limiting "does not work" because requests without the
// header skip it. Ours refuses a request a policy has no key for (400 by
// default), and leaves it unlimited only when the policy says so.
func TestPeerBugTollboothSkipsWithoutAKey(t *testing.T) {
	ip := keyfunc.Must(keyfunc.IP(keyfunc.FromHeader("CF-Connecting-IP"), keyfunc.TrustedProxies(netip.MustParsePrefix("127.0.0.0/8"))))
	apiKey := keyfunc.Must(keyfunc.Header("X-Tenant"))
	_, store := clockedStore(t)
	m, _ := pbNew(t, store, []*policy.Policy{
		policy.Must(policy.PerMinute("ip", 100, ip, policy.WithRoutes("GET /ip"))),
		policy.Must(policy.PerMinute("tenant", 100, apiKey, policy.WithRoutes("GET /tenant"))),
		policy.Must(policy.PerMinute("opt", 100, apiKey, policy.WithRoutes("GET /optional"), policy.OnKeyError(policy.SkipPolicy))),
	})
	srv := pbServe(t, "stdlib", m.Handler, "GET /ip", "GET /tenant", "GET /optional")
	pbWant(t, "ip without header", pbDo(t, srv, "GET", "/ip"), 400, "RateLimit", "")
	pbWant(t, "ip with header", pbDo(t, srv, "GET", "/ip", "CF-Connecting-IP", "198.51.100.94"), 200, "RateLimit", `"ip";r=99;t=120`)
	pbWant(t, "tenant without header", pbDo(t, srv, "GET", "/tenant"), 400, "RateLimit", "")
	pbWant(t, "tenant with header", pbDo(t, srv, "GET", "/tenant", "X-Tenant", "acme"), 200, "RateLimit", `"tenant";r=99;t=120`)
	pbWant(t, "optional without header", pbDo(t, srv, "GET", "/optional"), 200, "RateLimit", "")
}

// TestPeerBugTollboothEchoesForwardingHeaders guards against didip/tollbooth
// sending X-Rate-Limit-Request-Forwarded-For and
// X-Rate-Limit-Request-Remote-Addr on every response: the request's
// forwarding chain and peer address, internal proxy addresses included,
// echoed to the client. No header or body of ours, 200 or 429, holds them.
func TestPeerBugTollboothEchoesForwardingHeaders(t *testing.T) {
	_, store := clockedStore(t)
	m, _ := pbNew(t, store, []*policy.Policy{policy.Must(policy.PerMinute("once", 1, pbIP(t)))})
	srv := pbServe(t, "chi", m.Handler, "GET /a")
	for i, want := range []int{200, 429} {
		got := pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "198.51.100.99, 10.20.30.40")
		pbWant(t, fmt.Sprint("request ", i+1), got, want)
		for name, vals := range got.header {
			for _, v := range vals {
				if strings.Contains(v, "198.51.100.99") || strings.Contains(v, "10.20.30.40") || strings.Contains(v, "127.0.0.1") {
					t.Errorf("response %d: header %s: %q echoes an address", want, name, v)
				}
			}
		}
		if strings.Contains(got.body, "198.51.100.99") || strings.Contains(got.body, "10.20.30.40") || strings.Contains(got.body, "127.0.0.1") {
			t.Errorf("response %d: body %q echoes an address", want, got.body)
		}
	}
}

// pbTenant is a context key of type string, like the ones tollbooth users
// pass to SetContextValue.
type pbTenant string

// TestPeerBugTollboothContextValueReadsHeader guards against
// didip/tollbooth's context-value filter, which compares
// r.Header.Get(contextKey) instead of the context's value (peers.md §5): a
// client sets the header and chooses the value. Ours reads the context
// alone: the header of the same name changes nothing, and without the
// context value the request has no key.
func TestPeerBugTollboothContextValueReadsHeader(t *testing.T) {
	const key = pbTenant("tenant")
	_, store := clockedStore(t)
	m, _ := pbNew(t, store, []*policy.Policy{policy.Must(policy.PerMinute("tenant", 2, keyfunc.Must(keyfunc.ContextValue(key))))})
	authn := func(next http.Handler) http.Handler {
		return m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r)
		}))
	}
	// The application's authentication puts the tenant it checked into
	// the context (here from X-Auth-Tenant), before the limiter.
	withTenant := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if v := r.Header.Get("X-Auth-Tenant"); v != "" {
				r = r.WithContext(context.WithValue(r.Context(), key, v))
			}
			next.ServeHTTP(w, r)
		})
	}
	srv := pbServe(t, "stdlib", func(h http.Handler) http.Handler { return withTenant(authn(h)) }, "GET /a")
	pbWant(t, "header only", pbDo(t, srv, "GET", "/a", "Tenant", "acme"), 400)
	pbWant(t, "acme 1", pbDo(t, srv, "GET", "/a", "X-Auth-Tenant", "acme", "Tenant", "x1"), 200, "RateLimit", `"tenant";r=1;t=120`)
	pbWant(t, "acme 2", pbDo(t, srv, "GET", "/a", "X-Auth-Tenant", "acme", "Tenant", "x2"), 200, "RateLimit", `"tenant";r=0;t=90`)
	pbWant(t, "acme 3", pbDo(t, srv, "GET", "/a", "X-Auth-Tenant", "acme", "Tenant", "x3"), 429)
}

// ---------------------------------------------------------------------------
// Route and composite keys (peers.md (b) 10)

// TestPeerBugHttprateKeyByEndpointRawPath guards against httprate's
// KeyByEndpoint (and tollbooth's path part), which key by the raw
// r.URL.Path: /users/1, /users/2, ... are a fresh bucket each, and the key
// count grows with every ID a client invents. Ours keys by the route
// pattern, on chi and on ServeMux.
func TestPeerBugHttprateKeyByEndpointRawPath(t *testing.T) {
	for _, router := range pbRouters {
		t.Run(router, func(t *testing.T) {
			_, store := clockedStore(t)
			route := keyfunc.Route()
			m, _ := pbNew(t, store, []*policy.Policy{policy.Must(policy.PerMinute("route", 2, route, policy.WithAlgorithm(algorithms.FixedWindow)))})
			var keysSeen []string
			var mu sync.Mutex
			spy := func(h http.Handler) http.Handler {
				return m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					k, err := route(r)
					mu.Lock()
					keysSeen = append(keysSeen, fmt.Sprint(k, err))
					mu.Unlock()
					h.ServeHTTP(w, r)
				}))
			}
			srv := pbServe(t, router, spy, "GET /users/{id}")
			pbWant(t, "/users/1", pbDo(t, srv, "GET", "/users/1"), 200)
			pbWant(t, "/users/2", pbDo(t, srv, "GET", "/users/2"), 200)
			pbWant(t, "/users/3", pbDo(t, srv, "GET", "/users/3"), 429, "Retry-After", "60")
			want := map[string]string{"chi": "/users/{id}<nil>", "stdlib": "GET /users/{id}<nil>"}[router]
			if len(keysSeen) != 2 || keysSeen[0] != want || keysSeen[1] != want {
				t.Errorf("route keys %q, want %q twice", keysSeen, want)
			}
		})
	}
}

// TestPeerBugCompositeKeySeparatorCollisions guards against composite keys
// joined with a separator and no escaping: httprate's JoinKeys (":"),
// tollbooth's ("|") and throttled's VaryBy ("\n") make "a:b"+"c" and
// "a"+"b:c" one key, so one client exhausts (or escapes into) another's
// bucket (peers.md (b) 10). Our Join is injective, and bounded in length.
func TestPeerBugCompositeKeySeparatorCollisions(t *testing.T) {
	join := keyfunc.Must(keyfunc.Join(keyfunc.Must(keyfunc.Header("X-A")), keyfunc.Must(keyfunc.Header("X-B"))))
	key := func(a, b string) string {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header["X-A"] = []string{a} // set raw: a "\n" cannot travel over HTTP
		r.Header["X-B"] = []string{b}
		k, err := join(r)
		if err != nil {
			t.Fatalf("Join(%q, %q): %v", a, b, err)
		}
		return k
	}
	seen := map[string][2]string{}
	for _, sep := range []string{":", "|", "\n", ", "} {
		for _, pair := range [][2]string{{"a" + sep + "b", "c"}, {"a", "b" + sep + "c"}} {
			k := key(pair[0], pair[1])
			if prev, ok := seen[k]; ok {
				t.Errorf("Join(%q) and Join(%q) share key %q", prev, pair, k)
			}
			seen[k] = pair
		}
	}
	if k := key(strings.Repeat("x", 10_000), strings.Repeat("y", 10_000)); len(k) > 2*(3+keyfunc.MaxPartLen) {
		t.Errorf("key of two 10 000-byte parts is %d bytes, want at most %d", len(k), 2*(3+keyfunc.MaxPartLen))
	}

	_, store := clockedStore(t)
	m, _ := pbNew(t, store, []*policy.Policy{policy.Must(policy.PerMinute("once", 1, join))})
	srv := pbServe(t, "chi", m.Handler, "GET /a")
	for _, pair := range [][2]string{{"a:b", "c"}, {"a", "b:c"}, {"a|b", "c"}, {"a", "b|c"}} {
		pbWant(t, fmt.Sprintf("%q", pair), pbDo(t, srv, "GET", "/a", "X-A", pair[0], "X-B", pair[1]), 200)
	}
	pbWant(t, `"a:b" "c" again`, pbDo(t, srv, "GET", "/a", "X-A", "a:b", "X-B", "c"), 429)
}

// TestPeerBugThrottledVaryByParamsConsumesBody guards against throttled's
// VaryBy.Params, which calls r.FormValue and so parses and consumes the
// request body before the handler runs (peers.md §4). Keying ours by IP,
// user and route leaves the body to the handler, byte for byte, also on a
// rule-table middleware wrapping the whole router.
func TestPeerBugThrottledVaryByParamsConsumesBody(t *testing.T) {
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	})
	ip, ipUser := keys(t)
	_, store := clockedStore(t)
	m, _ := pbNew(t, store, []*policy.Policy{
		policy.Must(policy.PerMinute("ip", 10, ip)),
		policy.Must(policy.PerMinute("user-route", 10, keyfunc.Must(keyfunc.Join(ipUser, keyfunc.Route())), policy.WithRoutes("POST /form"))),
	})
	mux := http.NewServeMux()
	mux.Handle("POST /form", echo)
	mw, err := middleware.New(store, m.Set().Policies(), middleware.WithPatternFunc(policy.ServeMuxPattern(mux)), middleware.CheckForwarding(false))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(auth(mw.Handler(mux)))
	defer srv.Close()
	form := url.Values{"user": {"ann"}, "note": {"x=1&y=2"}}.Encode()
	got := pbDoBody(t, srv, "POST", "/form", strings.NewReader(form),
		"Content-Type", "application/x-www-form-urlencoded", "X-Forwarded-For", "198.51.100.8", "X-User", "ann")
	pbWant(t, "form", got, 200, "RateLimit", `"ip";r=9;t=120, "user-route";r=9;t=120`)
	if got.body != form {
		t.Errorf("handler read body %q, want %q", got.body, form)
	}
}

// TestPeerBugGoLimiterStoreHoldsRawCredentials guards against what
// sethvargo/go-limiter's Store docs only recommend (hash or HMAC keys) and
// no peer does (peers.md (b) 10): a key by API key or token lands in the
// store, its dumps and its logs as the credential itself. Ours keys a
// credential header by its digest: Redis holds no trace of the token.
func TestPeerBugGoLimiterStoreHoldsRawCredentials(t *testing.T) {
	srv := redistest.New(t)
	rdb := pbClient(t, srv.Addr)
	store := pbRedisStore(t, rdb, redisstore.WithClock(algotest.NewClock(t0)))
	const token = "sk_live_S3CR3Tt0k3n"
	for _, name := range []string{"X-Api-Key", "Authorization"} {
		m, _ := pbNew(t, store, []*policy.Policy{policy.Must(policy.PerMinute("by-"+strings.ToLower(name), 5, keyfunc.Must(keyfunc.Header(name))))})
		hs := pbServe(t, "chi", m.Handler, "GET /a")
		pbWant(t, name, pbDo(t, hs, "GET", "/a", name, token), 200, "RateLimit", fmt.Sprintf(`"by-%s";r=4;t=120`, strings.ToLower(name)))
	}
	ks, err := rdb.Keys(context.Background(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) < 2 {
		t.Fatalf("Redis keys %q: want the state of two policies", ks)
	}
	for _, k := range ks {
		if strings.Contains(k, "S3CR3T") || strings.Contains(k, "sk_live") {
			t.Errorf("Redis key %q holds the credential", k)
		}
	}
}

// ---------------------------------------------------------------------------
// Stacked policies and their headers (peers.md (b) 1, 2)

// TestPeerBugOuterLimiterCountsInnerRejection guards against chained
// limiters (httprate, ulule/limiter, throttled: one middleware per limit,
// peers.md (b) 1): the outer one has counted a request the inner one then
// rejects, so failed logins use up the global allowance. Policies of one
// middleware are one all-or-nothing decision: 5 logins against a login
// limit of 2 use 2 of the global 5, on memory and on Redis (one script),
// and on a Redis Cluster where the two policies' keys are in two slots.
func TestPeerBugOuterLimiterCountsInnerRejection(t *testing.T) {
	for _, name := range storetest.Names {
		for _, router := range pbRouters {
			t.Run(name+"/"+router, func(t *testing.T) {
				store := storetest.New(t, name, algotest.NewClock(t0))
				ip := pbIP(t)
				m, _ := pbNew(t, store, []*policy.Policy{
					policy.Must(policy.PerMinute("global", 5, ip, policy.WithAlgorithm(algorithms.FixedWindow))),
					policy.Must(policy.PerMinute("login", 2, ip, policy.WithAlgorithm(algorithms.FixedWindow), policy.WithRoutes("POST /login"))),
				})
				srv := pbServe(t, router, m.Handler, "POST /login", "GET /home")
				c := "198.51.100.1"
				pbWant(t, "login 1", pbDo(t, srv, "POST", "/login", "X-Forwarded-For", c), 200, "RateLimit", `"global";r=4;t=60, "login";r=1;t=60`)
				pbWant(t, "login 2", pbDo(t, srv, "POST", "/login", "X-Forwarded-For", c), 200, "RateLimit", `"global";r=3;t=60, "login";r=0;t=60`)
				for i := 3; i <= 5; i++ {
					pbWant(t, fmt.Sprint("login ", i), pbDo(t, srv, "POST", "/login", "X-Forwarded-For", c), 429,
						"Retry-After", "60", "RateLimit", `"global";r=3;t=60, "login";r=0;t=60`)
				}
				pbWant(t, "home", pbDo(t, srv, "GET", "/home", "X-Forwarded-For", c), 200, "RateLimit", `"global";r=2;t=60`)
			})
		}
	}
	// On a Redis Cluster, with the login limit per user: the two policies'
	// keys are in two slots, and the decision is still all or nothing.
	t.Run("redis cluster, two slots", func(t *testing.T) {
		cluster := redistest.NewCluster(t)
		rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cluster.Addrs()})
		t.Cleanup(func() { rdb.Close() })
		store := pbRedisStore(t, rdb, redisstore.WithClock(algotest.NewClock(t0)))
		m, errs := pbNew(t, store, []*policy.Policy{
			policy.Must(policy.PerMinute("global", 5, pbIP(t), policy.WithAlgorithm(algorithms.FixedWindow))),
			policy.Must(policy.PerMinute("login", 2, keyfunc.User(), policy.WithAlgorithm(algorithms.FixedWindow), policy.WithRoutes("POST /login"))),
		})
		srv := pbServe(t, "chi", func(h http.Handler) http.Handler { return auth(m.Handler(h)) }, "POST /login", "GET /home")
		c, user := "198.51.100.1", "ann"
		pbWant(t, "login 1", pbDo(t, srv, "POST", "/login", "X-Forwarded-For", c, "X-User", user), 200, "RateLimit", `"global";r=4;t=60, "login";r=1;t=60`)
		pbWant(t, "login 2", pbDo(t, srv, "POST", "/login", "X-Forwarded-For", c, "X-User", user), 200, "RateLimit", `"global";r=3;t=60, "login";r=0;t=60`)
		for i := 3; i <= 5; i++ {
			pbWant(t, fmt.Sprint("login ", i), pbDo(t, srv, "POST", "/login", "X-Forwarded-For", c, "X-User", user), 429,
				"Retry-After", "60", "RateLimit", `"global";r=3;t=60, "login";r=0;t=60`)
		}
		pbWant(t, "home", pbDo(t, srv, "GET", "/home", "X-Forwarded-For", c), 200, "RateLimit", `"global";r=2;t=60`)
		if e := errs.list(); len(e) != 0 {
			t.Errorf("store errors: %v", e)
		}
		ctx := context.Background()
		slots := map[int64]bool{}
		var slotsMu sync.Mutex
		err := rdb.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			ks, err := node.Keys(ctx, "*").Result()
			for _, k := range ks {
				if strings.Contains(k, "{"+c+"}") || strings.Contains(k, "{"+user+"}") {
					slot, err := rdb.ClusterKeySlot(ctx, k).Result()
					if err != nil {
						return err
					}
					slotsMu.Lock() // ForEachMaster calls this on every master at once
					slots[slot] = true
					slotsMu.Unlock()
				}
			}
			return err
		})
		if err != nil || len(slots) != 2 {
			t.Errorf("the policies' keys are in slots %v (%v), want two", slots, err)
		}
	})
}

// TestPeerBugExpress130OneLimiterTwiceCountsOnce guards against the
// double counting express-rate-limit validates at run time and its users
// trip over (express-rate-limit#17, #130: one limiter applied globally and
// again on a route), which every Go peer does silently: chi's r.Use and
// then r.With of the same httprate limiter counts each request twice,
// halving the limit. Ours counts it once, and tells ErrCountedTwice.
func TestPeerBugExpress130OneLimiterTwiceCountsOnce(t *testing.T) {
	_, store := clockedStore(t)
	m, errs := pbNew(t, store, []*policy.Policy{policy.Must(policy.PerMinute("pm", 2, pbIP(t), policy.WithAlgorithm(algorithms.FixedWindow)))})
	r := chi.NewRouter()
	r.Use(m.Handler)
	r.With(m.Handler).Get("/a", hello)
	srv := httptest.NewServer(r)
	defer srv.Close()
	pbWant(t, "1", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "198.51.100.13"), 200, "RateLimit", `"pm";r=1;t=60`)
	pbWant(t, "2", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "198.51.100.13"), 200, "RateLimit", `"pm";r=0;t=60`)
	pbWant(t, "3", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "198.51.100.13"), 429, "Retry-After", "60")
	if e := errs.list(); len(e) != 1 || !errors.Is(e[0], middleware.ErrCountedTwice) {
		t.Errorf("errors %v, want ErrCountedTwice once", e)
	}
}

// TestPeerBugEnvoy383NamedRateLimitPolicy guards against the lack of the
// IETF structured headers with named policies in every Go peer
// (envoyproxy/ratelimit#383 and #384, stale; tollbooth's old draft; peers.md
// (b) 2), and envoyproxy/ratelimit#693 (two limits on one descriptor key
// are refused): ours puts two limits on one key (the client IP) and sends
// one RateLimit-Policy and one RateLimit field, one
// named member per policy, in the -11 syntax.
func TestPeerBugEnvoy383NamedRateLimitPolicy(t *testing.T) {
	_, store := clockedStore(t)
	ip := pbIP(t)
	m, _ := pbNew(t, store, []*policy.Policy{
		policy.Must(policy.PerSecond("per-second", 10, ip, policy.WithAlgorithm(algorithms.FixedWindow))),
		policy.Must(policy.PerMinute("per-minute", 100, ip, policy.WithAlgorithm(algorithms.FixedWindow))),
	})
	srv := pbServe(t, "chi", m.Handler, "GET /a")
	pbWant(t, "first", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "198.51.100.83"), 200,
		"RateLimit-Policy", `"per-second";q=10;w=1, "per-minute";q=100;w=60`,
		"RateLimit", `"per-second";r=9;t=1, "per-minute";r=99;t=60`)
}

// TestPeerBugHttprateInnerLimiterClobbersHeaders guards against httprate's
// stacked limiters each Setting the same header names, so the innermost
// one's values overwrite the outer one's (peers.md §1, (b) 2): a client
// sees the per-route limit and not the global one it is closer to. Nested
// ratekeeper middlewares add their members: the 429 of the outer limit
// still shows the inner route's policy was never reached.
func TestPeerBugHttprateInnerLimiterClobbersHeaders(t *testing.T) {
	for _, router := range []string{"chi", "stdlib"} {
		t.Run(router, func(t *testing.T) {
			_, store := clockedStore(t)
			ip := pbIP(t)
			outer, _ := pbNew(t, store, []*policy.Policy{policy.Must(policy.PerMinute("global", 2, ip, policy.WithAlgorithm(algorithms.FixedWindow)))})
			inner, _ := pbNew(t, store, []*policy.Policy{policy.Must(policy.PerMinute("search", 10, ip, policy.WithAlgorithm(algorithms.FixedWindow)))})
			srv := pbServe(t, router, func(h http.Handler) http.Handler { return outer.Handler(inner.Handler(h)) }, "GET /search")
			c := "198.51.100.2"
			for i, want := range []string{`"global";r=1;t=60`, `"global";r=0;t=60`} {
				got := pbDo(t, srv, "GET", "/search", "X-Forwarded-For", c)
				pbWant(t, fmt.Sprint("search ", i+1), got, 200)
				if rl := got.header.Values("RateLimit"); !slices.Equal(rl, []string{want, fmt.Sprintf(`"search";r=%d;t=60`, 9-i)}) {
					t.Errorf("search %d: RateLimit %q, want the global member %s and the search one", i+1, rl, want)
				}
				if rp := got.header.Values("RateLimit-Policy"); !slices.Equal(rp, []string{`"global";q=2;w=60`, `"search";q=10;w=60`}) {
					t.Errorf("search %d: RateLimit-Policy %q", i+1, rp)
				}
			}
			pbWant(t, "search 3", pbDo(t, srv, "GET", "/search", "X-Forwarded-For", c), 429,
				"Retry-After", "60", "RateLimit", `"global";r=0;t=60`)
		})
	}
}

// TestPeerBugUluleThrottledDuplicateLegacyHeaders guards against
// ulule/limiter and throttled adding their X-RateLimit-* headers with
// Header().Add: stacked limiters send each header twice, with different
// values, which clients read as they please (peers.md §2, §4). Ours sends
// each single-valued header once, for the policy with the lowest remaining,
// whether the policies share a middleware or are nested.
func TestPeerBugUluleThrottledDuplicateLegacyHeaders(t *testing.T) {
	for _, nested := range []bool{false, true} {
		t.Run(fmt.Sprint("nested=", nested), func(t *testing.T) {
			_, store := clockedStore(t)
			ip := pbIP(t)
			legacy := middleware.WithHeaders(middleware.Legacy)
			perMinute := policy.Must(policy.PerMinute("per-minute", 3, ip, policy.WithAlgorithm(algorithms.FixedWindow)))
			perSecond := policy.Must(policy.PerSecond("per-second", 10, ip, policy.WithAlgorithm(algorithms.FixedWindow)))
			var mw func(http.Handler) http.Handler
			if nested {
				outer, _ := pbNew(t, store, []*policy.Policy{perMinute}, legacy)
				inner, _ := pbNew(t, store, []*policy.Policy{perSecond}, legacy)
				mw = func(h http.Handler) http.Handler { return outer.Handler(inner.Handler(h)) }
			} else {
				m, _ := pbNew(t, store, []*policy.Policy{perSecond, perMinute}, legacy)
				mw = m.Handler
			}
			srv := pbServe(t, "chi", mw, "GET /a")
			pbWant(t, "first", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "198.51.100.3"), 200,
				"X-RateLimit-Limit", "3", "X-RateLimit-Remaining", "2", "X-RateLimit-Reset", "60", "RateLimit", "")
		})
	}
}

// TestPeerBugHttprateRedisCrossSlotMGET guards against httprate-redis's
// MGET of two unrelated keys, which Redis Cluster refuses across slots, and
// redis_rate's missing hash tag (go-redis/redis_rate#96): neither runs
// stacked windows for one client on a cluster. Ours hash-tags the client
// key, so every policy's state of one client is in one slot, decided in
// one call: a per-second, a per-minute and a sliding-log policy on a real
// three-master cluster, over HTTP.
func TestPeerBugHttprateRedisCrossSlotMGET(t *testing.T) {
	cluster := redistest.NewCluster(t)
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cluster.Addrs()})
	t.Cleanup(func() { rdb.Close() })
	clock := algotest.NewClock(t0)
	store := pbRedisStore(t, rdb, redisstore.WithClock(clock))
	ip := pbIP(t)
	m, errs := pbNew(t, store, []*policy.Policy{
		policy.Must(policy.PerSecond("per-second", 2, ip, policy.WithAlgorithm(algorithms.FixedWindow))),
		policy.Must(policy.PerMinute("per-minute", 3, ip, policy.WithAlgorithm(algorithms.FixedWindow))),
		policy.Must(policy.PerMinute("log", 10, ip, policy.WithAlgorithm(algorithms.SlidingLog))),
	}, middleware.OnStoreError(middleware.FailClosed(time.Second)))
	srv := pbServe(t, "chi", m.Handler, "GET /a")
	c := "198.51.100.96"
	pbWant(t, "1", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 200, "RateLimit", `"per-second";r=1;t=1, "per-minute";r=2;t=60, "log";r=9;t=61`)
	pbWant(t, "2", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 200, "RateLimit", `"per-second";r=0;t=1, "per-minute";r=1;t=60, "log";r=8;t=61`)
	pbWant(t, "3", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 429, "Retry-After", "1")
	clock.Advance(time.Second)
	pbWant(t, "4", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 200, "RateLimit", `"per-second";r=1;t=1, "per-minute";r=0;t=59, "log";r=7;t=60`)
	pbWant(t, "5", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", c), 429, "Retry-After", "59")
	if got := errs.list(); len(got) != 0 {
		t.Errorf("store errors on the cluster: %v", got)
	}

	ctx := context.Background()
	slots := map[int64][]string{}
	var slotsMu sync.Mutex
	err := rdb.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		ks, err := node.Keys(ctx, "*").Result()
		if err != nil {
			return err
		}
		for _, k := range ks {
			if strings.Contains(k, c) {
				slot, err := rdb.ClusterKeySlot(ctx, k).Result()
				if err != nil {
					return err
				}
				slotsMu.Lock() // ForEachMaster calls this on every master at once
				slots[slot] = append(slots[slot], k)
				slotsMu.Unlock()
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(slots) != 1 {
		t.Errorf("the client's keys are in %d slots: %v", len(slots), slots)
	}
	for _, ks := range slots {
		if len(ks) < 3 {
			t.Errorf("the client's keys %q: want the three policies' state", ks)
		}
	}
}

// ---------------------------------------------------------------------------
// Redis store

// TestPeerBugRedisRate69KeyPrefixConfigurable guards against
// go-redis/redis_rate's key prefix, hardcoded to "rate:" although asked for
// since 2021 (redis_rate#69, #70, #74, #109, #111): two applications on one
// Redis share every limit. Ours takes WithPrefix: two prefixes on one
// server are two independent limits, their keys under their own prefix, and
// a prefix that would break the hash tag is refused.
func TestPeerBugRedisRate69KeyPrefixConfigurable(t *testing.T) {
	srv := redistest.New(t)
	rdb := pbClient(t, srv.Addr)
	clock := algotest.NewClock(t0)
	ip := pbIP(t)
	var servers []*httptest.Server
	for _, prefix := range []string{"app-a", "app-b"} {
		store := pbRedisStore(t, rdb, redisstore.WithClock(clock), redisstore.WithPrefix(prefix))
		m, _ := pbNew(t, store, []*policy.Policy{policy.Must(policy.PerMinute("once", 1, ip))})
		servers = append(servers, pbServe(t, "chi", m.Handler, "GET /a"))
	}
	pbWant(t, "app-a 1", pbDo(t, servers[0], "GET", "/a", "X-Forwarded-For", "198.51.100.69"), 200)
	pbWant(t, "app-a 2", pbDo(t, servers[0], "GET", "/a", "X-Forwarded-For", "198.51.100.69"), 429)
	pbWant(t, "app-b 1", pbDo(t, servers[1], "GET", "/a", "X-Forwarded-For", "198.51.100.69"), 200)
	ks, err := rdb.Keys(context.Background(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	var a, b int
	for _, k := range ks {
		switch {
		case strings.HasPrefix(k, "app-a:{"):
			a++
		case strings.HasPrefix(k, "app-b:{"):
			b++
		default:
			t.Errorf("key %q under neither prefix", k)
		}
	}
	if a == 0 || b == 0 {
		t.Errorf("keys %q: want some under each prefix", ks)
	}
	for _, bad := range []string{"", "a{b}", "a b"} {
		if _, err := redisstore.New(rdb, redisstore.WithPrefix(bad)); err == nil {
			t.Errorf("WithPrefix(%q) accepted", bad)
		}
	}
}

// TestPeerBugGoRedisstoreSubSecondTTLZero guards against
// sethvargo/go-redisstore's key TTL of 3·floor(interval/1e9) seconds: for a
// sub-second interval that is EXPIRE 0, which deletes the key on every take,
// so the limit never binds (peers.md §3). Ours: 2 per 500 ms on Redis denies
// the third request, and its keys expire after a positive TTL of at most
// about a second (the window's state, not whole seconds of it).
//
// On an injected clock a key lives at least redisstore.DefaultClockTTL (an
// hour), which would hide a TTL of 0 from both checks: the TTLs are read
// from a store with WithMinTTL(0), whose keys expire as on the server's
// clock, in real time. Its three takes and the read must then come within
// the window; an attempt slower than 250 ms is repeated, not judged (up to
// 20 attempts: a loaded machine under -race can stall several in a row).
func TestPeerBugGoRedisstoreSubSecondTTLZero(t *testing.T) {
	srv := redistest.New(t)
	rdb := pbClient(t, srv.Addr)
	clock := algotest.NewClock(t0)
	store := pbRedisStore(t, rdb, redisstore.WithClock(clock))
	ip := pbIP(t)
	kinds := []algorithms.Kind{algorithms.FixedWindow, algorithms.SlidingWindow, algorithms.SlidingLog,
		algorithms.SlidingBuckets, algorithms.TokenBucket, algorithms.LeakyBucket}
	for _, kind := range kinds {
		t.Run(string(kind), func(t *testing.T) {
			name := "sub-" + strings.ReplaceAll(string(kind), "_", "-")
			opts := []policy.Option{policy.WithAlgorithm(kind)}
			if kind == algorithms.SlidingBuckets {
				opts = append(opts, policy.WithBuckets(2))
			}
			m, _ := pbNew(t, store, []*policy.Policy{policy.Must(policy.Per(name, 2, 500*time.Millisecond, ip, opts...))})
			hs := pbServe(t, "chi", m.Handler, "GET /a")
			pbWant(t, "1", pbDo(t, hs, "GET", "/a", "X-Forwarded-For", "198.51.100.50"), 200)
			pbWant(t, "2", pbDo(t, hs, "GET", "/a", "X-Forwarded-For", "198.51.100.50"), 200)
			// w and t are whole seconds, rounded up, at least 1.
			pbWant(t, "3", pbDo(t, hs, "GET", "/a", "X-Forwarded-For", "198.51.100.50"), 429,
				"Retry-After", "1", "RateLimit-Policy", fmt.Sprintf(`"%s";q=2;w=1`, name), "RateLimit", fmt.Sprintf(`"%s";r=0;t=1`, name))
		})
	}
	ctx := context.Background()
	ks, err := rdb.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) < 6 {
		t.Fatalf("keys %q: want the state of six policies", ks)
	}
	for _, k := range ks {
		if ttl, err := rdb.PTTL(ctx, k).Result(); err != nil || ttl <= 0 {
			t.Errorf("PTTL %s = %v, %v; want a positive TTL", k, ttl, err)
		}
	}

	for _, kind := range kinds {
		spec := algorithms.Spec{Algorithm: kind, Limit: 2, Window: 500 * time.Millisecond}
		if kind == algorithms.SlidingBuckets {
			spec.Buckets = 2
		}
		judged := false
		for attempt := 0; attempt < 20 && !judged; attempt++ {
			prefix := fmt.Sprintf("ttl-%s-%d", strings.ReplaceAll(string(kind), "_", "-"), attempt)
			real := pbRedisStore(t, rdb, redisstore.WithClock(clock), redisstore.WithMinTTL(0), redisstore.WithPrefix(prefix))
			start := time.Now()
			var allowed []bool
			for range 3 {
				ds, err := real.Take(ctx, algorithms.Check{Spec: spec, Key: "198.51.100.50"})
				if err != nil {
					t.Fatalf("%s: Take: %v", kind, err)
				}
				allowed = append(allowed, ds[0].Allowed)
			}
			ks, err := rdb.Keys(ctx, prefix+":*").Result()
			if err != nil {
				t.Fatal(err)
			}
			ttls := make([]time.Duration, len(ks))
			for i, k := range ks {
				if ttls[i], err = rdb.PTTL(ctx, k).Result(); err != nil {
					t.Fatal(err)
				}
			}
			if time.Since(start) > 250*time.Millisecond { // a failure bound: the keys may have expired meanwhile
				continue
			}
			judged = true
			if !slices.Equal(allowed, []bool{true, true, false}) {
				t.Errorf("%s, MinTTL 0: three takes allowed %v, want [true true false]", kind, allowed)
			}
			if len(ks) == 0 {
				t.Errorf("%s, MinTTL 0: no key under %s", kind, prefix)
			}
			for i, k := range ks {
				if ttls[i] <= 0 || ttls[i] > time.Second+10*time.Millisecond {
					t.Errorf("%s, MinTTL 0: PTTL %s = %v, want in (0, 1.01s]", kind, k, ttls[i])
				}
			}
		}
		if !judged {
			t.Errorf("%s: none of 20 attempts of three takes and a TTL read ran within 250 ms", kind)
		}
	}
}

// TestPeerBugHttprate19ConcurrentRequestsNeverOverAdmit guards against
// httprate-redis reading with MGET and writing with MULTI/INCRBY, not
// atomically across instances ("you can send more than limit",
// go-chi/httprate#19; its fix, a limiter-wide mutex, holds only within one
// process), and throttled's optimistic CAS under concurrency
// (throttled/throttled#41). 40 concurrent requests of one client against 10
// per minute admit exactly 10: on one memory store, and on two app
// instances sharing one Redis.
func TestPeerBugHttprate19ConcurrentRequestsNeverOverAdmit(t *testing.T) {
	ip := pbIP(t)
	clock := algotest.NewClock(t0)
	for _, tt := range []struct {
		name string
		kind algorithms.Kind
	}{
		{"memory", algorithms.SlidingWindow}, {"redis, two instances", algorithms.SlidingWindow},
		{"memory", algorithms.SlidingLog}, {"redis, two instances", algorithms.SlidingLog},
		{"memory", algorithms.TokenBucket}, {"redis, two instances", algorithms.TokenBucket},
	} {
		name := tt.name
		newPolicy := func() []*policy.Policy {
			return []*policy.Policy{policy.Must(policy.PerMinute("pm", 10, ip, policy.WithAlgorithm(tt.kind)))}
		}
		t.Run(name+"/"+string(tt.kind), func(t *testing.T) {
			var servers []*httptest.Server
			if name == "memory" {
				_, store := clockedStore(t)
				m, _ := pbNew(t, store, newPolicy())
				servers = append(servers, pbServe(t, "chi", m.Handler, "GET /a"))
			} else {
				rs := redistest.New(t)
				for _, router := range pbRouters {
					rdb := pbClient(t, rs.Addr)
					store := pbRedisStore(t, rdb, redisstore.WithClock(clock))
					m, _ := pbNew(t, store, newPolicy(), middleware.OnStoreError(middleware.FailClosed(time.Second)))
					servers = append(servers, pbServe(t, router, m.Handler, "GET /a"))
				}
			}
			var wg sync.WaitGroup
			var mu sync.Mutex
			counts := map[int]int{}
			for i := range 40 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					srv := servers[i%len(servers)]
					r, _ := http.NewRequest("GET", srv.URL+"/a", nil)
					r.Header.Set("X-Forwarded-For", "198.51.100.19")
					resp, err := srv.Client().Do(r)
					if err != nil {
						t.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					mu.Lock()
					counts[resp.StatusCode]++
					mu.Unlock()
				}()
			}
			wg.Wait()
			if counts[200] != 10 || counts[429] != 30 {
				t.Errorf("statuses %v, want 10 × 200 and 30 × 429", counts)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// Failures (peers.md (b) 6)

// pbFailing is a store whose backend is down with an error text that must
// not reach a client.
type pbFailing struct{}

var errPbBackend = errors.New("redis: NOAUTH password=hunter2 at 10.9.8.7:6379")

func (pbFailing) Take(context.Context, ...algorithms.Check) ([]algorithms.Decision, error) {
	return nil, errPbBackend
}

// TestPeerBugHttprate428LeaksErrorText guards against httprate's default
// error response: 428 Precondition Required with err.Error() in the body,
// an odd status that also hands the client the backend's error text (its
// address, here a password). Ours, failing closed, answers 503 with
// Retry-After and a body free of the error; the error goes to the handler.
func TestPeerBugHttprate428LeaksErrorText(t *testing.T) {
	for _, router := range pbRouters {
		t.Run(router, func(t *testing.T) {
			m, errs := pbNew(t, pbFailing{}, []*policy.Policy{policy.Must(policy.PerMinute("pm", 10, pbIP(t)))},
				middleware.OnStoreError(middleware.FailClosed(30*time.Second)), middleware.WithBreaker(0, 0))
			srv := pbServe(t, router, m.Handler, "GET /a")
			got := pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "198.51.100.28")
			pbWant(t, "store down", got, 503, "Retry-After", "30", "RateLimit", "")
			for _, secret := range []string{"hunter2", "10.9.8.7", "NOAUTH"} {
				if strings.Contains(got.body, secret) || strings.Contains(fmt.Sprint(got.header), secret) {
					t.Errorf("response holds %q: %q %q", secret, got.header, got.body)
				}
			}
			if e := errs.list(); len(e) != 1 || !errors.Is(e[0], errPbBackend) {
				t.Errorf("error handler told %v, want the backend's error once", e)
			}
		})
	}
}

// TestPeerBugUlule266StoreErrorPanics guards against ulule/limiter's
// DefaultErrorHandler, which panics on a store error (a 500 with a stack
// trace; ulule/limiter#266 would make it 503), and users told to copy the
// middleware to fail open (ulule/limiter#128); go-limiter and throttled
// fail closed with 500. Our default fails open: the handler answers, no
// rate-limit fields claim a decision, and the error handler is told.
func TestPeerBugUlule266StoreErrorPanics(t *testing.T) {
	for _, router := range pbRouters {
		t.Run(router, func(t *testing.T) {
			m, errs := pbNew(t, pbFailing{}, []*policy.Policy{policy.Must(policy.PerMinute("pm", 10, pbIP(t)))}, middleware.WithBreaker(0, 0))
			srv := pbServe(t, router, m.Handler, "GET /a")
			for i := range 2 {
				got := pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "198.51.100.66")
				pbWant(t, fmt.Sprint("request ", i+1), got, 200, "RateLimit", "", "Retry-After", "")
				if got.body != "hello" {
					t.Errorf("body %q, want the handler's", got.body)
				}
			}
			if e := errs.list(); len(e) != 2 || !errors.Is(e[0], errPbBackend) {
				t.Errorf("error handler told %v, want the backend's error twice", e)
			}
		})
	}
}

// TestPeerBugNoPerRouteFailurePolicy guards against the single, global
// failure behaviour of every peer (peers.md (b) 6: "None can say fail
// closed for /login, fail open for /search"). Each of our middlewares has
// its own: during one outage /login answers 503 and /search 200.
func TestPeerBugNoPerRouteFailurePolicy(t *testing.T) {
	ip := pbIP(t)
	login, _ := pbNew(t, pbFailing{}, []*policy.Policy{policy.Must(policy.Login(ip))},
		middleware.OnStoreError(middleware.FailClosed(10*time.Second)), middleware.WithBreaker(0, 0))
	search, _ := pbNew(t, pbFailing{}, []*policy.Policy{policy.Must(policy.PerMinute("search", 100, ip))},
		middleware.OnStoreError(middleware.FailOpen()), middleware.WithBreaker(0, 0))
	r := chi.NewRouter()
	r.With(login.Handler).Post("/login", hello)
	r.With(search.Handler).Get("/search", hello)
	srv := httptest.NewServer(r)
	defer srv.Close()
	pbWant(t, "login", pbDo(t, srv, "POST", "/login", "X-Forwarded-For", "198.51.100.6"), 503, "Retry-After", "10")
	pbWant(t, "search", pbDo(t, srv, "GET", "/search", "X-Forwarded-For", "198.51.100.6"), 200, "Retry-After", "")
}

// TestPeerBugHttprateRedis15OutageAtBoot guards against httprate-redis
// before its fallback (go-chi/httprate-redis#15, #16, #22): a Redis down at
// boot panicked, and requests got slow 428s. Ours: a Redis store built
// while its server is down is no error and no panic (New does not contact
// Redis); the requests fail open (200), or under FailClosed answer 503,
// never 428, each within the store's timeout.
func TestPeerBugHttprateRedis15OutageAtBoot(t *testing.T) {
	rs := redistest.New(t)
	if err := rs.Stop(); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	store, err := redisstore.New(rdb, redisstore.WithTimeout(500*time.Millisecond))
	if err != nil {
		t.Fatalf("New with Redis down: %v", err)
	}
	ip := pbIP(t)
	for _, tt := range []struct {
		failure middleware.Failure
		status  int
		retry   string
	}{
		{middleware.FailOpen(), 200, ""},
		{middleware.FailClosed(5 * time.Second), 503, "5"},
	} {
		m, errs := pbNew(t, store, []*policy.Policy{policy.Must(policy.PerMinute("pm", 10, ip))}, middleware.OnStoreError(tt.failure))
		srv := pbServe(t, "chi", m.Handler, "GET /a")
		start := time.Now()
		pbWant(t, fmt.Sprint(tt.status), pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "198.51.100.15"), tt.status, "Retry-After", tt.retry)
		if d := time.Since(start); d > 10*time.Second { // a failure bound, far above the 500 ms timeout
			t.Errorf("request took %v with Redis down", d)
		}
		if len(errs.list()) != 1 {
			t.Errorf("errors %v, want one", errs.list())
		}
	}
}

// ---------------------------------------------------------------------------
// Limits, memory and rollout (peers.md §3, (b) 8, 9)

// TestPeerBugGoLimiter61SetZeroPanics guards against sethvargo/go-limiter's
// Set(key, 0, interval), which panicked dividing by zero (go-limiter#61).
// A zero or negative limit, or a zero window, is an error from our
// constructors, never a panic and never a silent "block all".
func TestPeerBugGoLimiter61SetZeroPanics(t *testing.T) {
	ip := pbIP(t)
	if _, err := policy.PerSecond("zero", 0, ip); err == nil {
		t.Error("PerSecond(0) accepted")
	}
	if _, err := policy.Per("neg", -1, time.Minute, ip); err == nil {
		t.Error("Per(-1) accepted")
	}
	if _, err := policy.Per("nowindow", 5, 0, ip); err == nil {
		t.Error("Per(window 0) accepted")
	}
	_, store := clockedStore(t)
	for _, k := range algorithms.Kinds {
		if _, err := algorithms.NewLimiter(store, algorithms.Spec{Algorithm: k, Limit: 0, Window: time.Second}); !errors.Is(err, algorithms.ErrInvalidSpec) {
			t.Errorf("NewLimiter(%s, limit 0) error %v, want ErrInvalidSpec", k, err)
		}
	}
	if _, err := store.Take(context.Background(), algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.TokenBucket, Window: time.Second}, Key: "k"}); err == nil {
		t.Error("Take of a limit-0 check accepted")
	}
	if _, err := middleware.New(nil, []*policy.Policy{policy.Must(policy.PerSecond("ok", 1, ip))}); err == nil {
		t.Error("middleware.New(nil store) accepted") // throttled's nil RateLimiter fell through
	}
}

// TestPeerBugUnboundedMemoryDefaults guards against the memory defaults of
// the peers (peers.md (b) 8): go-limiter keeps idle buckets 12 h, tollbooth
// 10 years, ulule and mennanov are unbounded between sweeps, throttled has
// an LRU that evicts active clients first. Our store drops idle keys with
// no goroutine, and at WithMaxKeys a flood of one-request keys evicts its
// own kind, not a client being limited.
func TestPeerBugUnboundedMemoryDefaults(t *testing.T) {
	clock := algotest.NewClock(t0)
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock), algorithms.WithMaxKeys(64))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 3, Window: time.Minute}
	ctx := context.Background()
	take := func(key string) algorithms.Decision {
		t.Helper()
		ds, err := store.Take(ctx, algorithms.Check{Spec: spec, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		return ds[0]
	}
	for range 3 {
		take("victim")
	}
	for i := range 10_000 {
		take(fmt.Sprint("flood-", i))
	}
	if n := store.Len(); n > 64 {
		t.Errorf("Len = %d after the flood, want at most 64", n)
	}
	if d := take("victim"); d.Allowed || d.RetryAfter != time.Minute {
		t.Errorf("victim after the flood: %+v, want denied for 1m (its state kept)", d)
	}
	clock.Advance(2 * time.Minute)
	store.Sweep()
	if n := store.Len(); n != 0 {
		t.Errorf("Len = %d two windows later, want 0 (idle keys dropped)", n)
	}
}

// TestPeerBugNoShadowMode guards against the lack of a dry-run mode in every
// peer but envoy's service (peers.md (b) 9): a new limit cannot be tried on
// live traffic. Our WithShadow evaluates and reports, never refuses: the
// over-limit request is served, its headers say r=0, and the report names it.
func TestPeerBugNoShadowMode(t *testing.T) {
	_, store := clockedStore(t)
	var reported []bool
	var mu sync.Mutex
	m, _ := pbNew(t, store, []*policy.Policy{policy.Must(policy.PerMinute("once", 1, pbIP(t), policy.WithAlgorithm(algorithms.FixedWindow)))},
		middleware.WithShadow(func(_ *http.Request, res *middleware.Result) {
			mu.Lock()
			defer mu.Unlock()
			reported = append(reported, res.Allowed())
		}))
	srv := pbServe(t, "chi", m.Handler, "GET /a")
	pbWant(t, "first", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "198.51.100.9"), 200, "RateLimit", `"once";r=0;t=60`)
	pbWant(t, "second", pbDo(t, srv, "GET", "/a", "X-Forwarded-For", "198.51.100.9"), 200, "RateLimit", `"once";r=0;t=60`, "Retry-After", "")
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(reported, []bool{false}) {
		t.Errorf("shadow reports %v, want one denied request", reported)
	}
}

// pbClient returns a go-redis client of the server at addr, closed when
// the test ends.
func pbClient(t *testing.T, addr string) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// pbRedisStore returns a Redis store on rdb with opts, failing the test
// when New refuses them.
func pbRedisStore(t *testing.T, rdb redis.UniversalClient, opts ...redisstore.Option) *redisstore.Store {
	t.Helper()
	s, err := redisstore.New(rdb, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
