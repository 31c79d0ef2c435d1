package middleware_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metricset"
	"github.com/ratekeeper/ratekeeper/policy"
)

// loweredKinds are the seven kinds at a capacity of 100 units; lowered
// to 80 they hold 80. The leaky_queue leaks one unit a second and holds
// a request up to 99 s: a queue of 100 places, 80 at 80 a window.
var loweredKinds = []algorithms.Spec{
	{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Minute},
	{Algorithm: algorithms.SlidingLog, Limit: 100, Window: time.Minute},
	{Algorithm: algorithms.SlidingWindow, Limit: 100, Window: time.Minute},
	{Algorithm: algorithms.SlidingBuckets, Limit: 100, Window: time.Minute, Buckets: 6},
	{Algorithm: algorithms.TokenBucket, Limit: 100, Window: time.Minute},
	{Algorithm: algorithms.LeakyBucket, Limit: 100, Window: time.Minute},
	{Algorithm: algorithms.LeakyQueue, Limit: 100, Window: 100 * time.Second, MaxDelay: 99 * time.Second},
}

// loweredEvents records the Events of the requests a middleware decides:
// each one's outcome, the policies that denied it, and the series the
// metrics adapters count it under ("policy/series").
type loweredEvents struct{ outcomes, denied, series []string }

func (le *loweredEvents) observer() middleware.Option {
	ps := metricset.NewPolicies(func(name string) string { return name })
	return middleware.WithObserver(errRecorder{request: func(e middleware.Event) {
		ps.Count(e, func(name string, s metricset.Series) { le.series = append(le.series, name+"/"+s.Label()) })
		le.outcomes = append(le.outcomes, e.Outcome.String())
		var by []string
		for i := 0; i < e.Result.Len(); i++ {
			if e.DeniedBy(i) {
				by = append(by, e.Result.Policy(i).Name())
			}
		}
		le.denied = append(le.denied, strings.Join(by, ","))
	}})
}

// TestCostAboveLoweredLimitDenied: a request costing 90 units of a policy
// of 100 whose limit in force is lowered to 80 (SetLimit, as an
// adaptive.Controller's level; SetLimitUnguarded, as an adaptive.Fleet's
// share) is admissible once the limit is back, so it is denied as any
// request the policy cannot admit now: 429 with the policy's RateLimit
// members at the limit in force (r and t as a peek at the key reads
// them), a Retry-After, and a problem naming the policy and saying its
// limit is lowered; observed as Denied by the policy, no error reported.
// Its Retry-After is the wait after which the same request would be
// admitted were the configured limit back (a peek of it then), never
// below the policy's t nor 1 s: the limit restored at that instant, the
// request is admitted (and, when the wait alone made it, denied 1 s
// before). A cost above the configured 100 stays out of range: no
// Retry-After. Every kind, through chi and a ServeMux, on both stores.
func TestCostAboveLoweredLimitDenied(t *testing.T) {
	setters := map[string]func(*middleware.Middleware, string, int64) error{
		"SetLimit":          (*middleware.Middleware).SetLimit,
		"SetLimitUnguarded": (*middleware.Middleware).SetLimitUnguarded,
	}
	for _, spec := range loweredKinds {
		for _, setter := range []string{"SetLimit", "SetLimitUnguarded"} {
			for _, name := range storetest.Names {
				for _, mux := range []string{"chi", "ServeMux"} {
					t.Run(string(spec.Algorithm)+"/"+setter+"/"+name+"/"+mux, func(t *testing.T) {
						clock := algotest.NewClock(t0.Add(10 * time.Second))
						store := storetest.New(t, name, clock)
						var ev loweredEvents
						var errs []error
						upload := policy.Must(policy.New("upload", spec, remote, policy.WithCost(headerCost)))
						m := middleware.MustNew(store, []*policy.Policy{upload}, middleware.WithClock(clock),
							middleware.WithWait(clock.Sleep), ev.observer(),
							middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) }))
						h := costRouters(m)[mux]
						costing := func(n int64) *http.Request {
							r := httptest.NewRequest("POST", "/upload", nil)
							r.Header.Set("X-Cost", strconv.FormatInt(n, 10))
							return r
						}
						send := func(n int64) *httptest.ResponseRecorder {
							w := httptest.NewRecorder()
							h.ServeHTTP(w, costing(n))
							return w
						}
						if w := send(30); w.Code != http.StatusOK {
							t.Fatalf("30 units: %d, want 200", w.Code)
						}
						clock.Advance(5 * time.Second)
						if err := setters[setter](m, "upload", 80); err != nil {
							t.Fatal(err)
						}
						// The key as the policy in force has it.
						res, err := m.Peek(costing(1))
						if err != nil {
							t.Fatal(err)
						}
						d := res.Decision(0)
						tIn := (d.NextAfter + time.Second - 1) / time.Second
						window := (spec.Window + time.Second - 1) / time.Second
						wantPolicy := `"upload";q=80;w=` + strconv.Itoa(int(window))
						wantState := `"upload";r=` + strconv.FormatInt(d.Remaining, 10) + ";t=" + strconv.Itoa(int(tIn))

						w := send(90)
						ra, _ := strconv.Atoi(w.Header().Get("Retry-After"))
						if w.Code != http.StatusTooManyRequests || ra < 1 ||
							w.Header().Get("RateLimit-Policy") != wantPolicy || w.Header().Get("RateLimit") != wantState {
							t.Fatalf("90 units at 80: %d, Retry-After %q, RateLimit-Policy %q, RateLimit %q, body %s;\nwant 429, a Retry-After, %s, %s",
								w.Code, w.Header().Get("Retry-After"), w.Header().Get("RateLimit-Policy"), w.Header().Get("RateLimit"),
								w.Body.String(), wantPolicy, wantState)
						}
						p := decodeProblem(t, w.Body.String())
						if p.Type != middleware.ProblemTypeQuotaExceeded || p.Status != 429 || len(p.Violated) != 1 || p.Violated[0] != "upload" ||
							!strings.Contains(p.Detail, "upload") || !strings.Contains(p.Detail, "lowered") {
							t.Errorf("problem %+v, want the quota exceeded for upload, its limit lowered", p)
						}
						if ev.outcomes[1] != "denied" || ev.denied[1] != "upload" || len(errs) != 0 || m.Stats().Denied != 1 ||
							len(ev.series) != 2 || ev.series[1] != "upload/denied" {
							t.Errorf("observed %q by %q, counted %q, errors %v, %d denied; want denied by upload, counted so, no error, 1 denied",
								ev.outcomes[1], ev.denied[1], ev.series, errs, m.Stats().Denied)
						}

						// Were the limit back now, the wait for 90 units.
						if err := m.SetLimit("upload", 0); err != nil {
							t.Fatal(err)
						}
						back, err := m.Peek(costing(90))
						if err != nil {
							t.Fatal(err)
						}
						wait := int((back.Decision(0).RetryAfter + time.Second - 1) / time.Second)
						if want := max(1, wait, int(tIn)); ra != want {
							t.Errorf("Retry-After %d, want %d (the configured limit's wait %d s, t %d)", ra, want, wait, tIn)
						}
						if ra == wait && ra > 1 {
							clock.Advance(time.Duration(ra-1) * time.Second)
							if w := send(90); w.Code != http.StatusTooManyRequests {
								t.Errorf("limit back, 1 s before Retry-After: %d, want 429", w.Code)
							}
							clock.Advance(time.Second)
						} else {
							clock.Advance(time.Duration(ra) * time.Second)
						}
						if w := send(90); w.Code != http.StatusOK {
							t.Errorf("limit back, at Retry-After: %d, want 200", w.Code)
						}

						// Above the configured capacity: never admissible.
						if err := setters[setter](m, "upload", 80); err != nil {
							t.Fatal(err)
						}
						w = send(150)
						if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "" || !strings.Contains(w.Body.String(), "admits 1 to ") {
							t.Errorf("150 units at 80: %d, Retry-After %q, body %s; want 429 out of range, no Retry-After",
								w.Code, w.Header().Get("Retry-After"), w.Body.String())
						}
					})
				}
			}
		}
	}
}

// TestCostAboveLoweredLimitShadowed: shadow mode lets through the request
// costing more than the lowered limit, as it does a denial: ShadowDenied
// by the policy, with the policy's RateLimit member, no Retry-After.
func TestCostAboveLoweredLimitShadowed(t *testing.T) {
	for _, mux := range []string{"chi", "ServeMux"} {
		t.Run(mux, func(t *testing.T) {
			store, clock := newStore(t)
			var ev loweredEvents
			var shadowed []string
			upload := fixed("upload", 100, time.Minute, remote, policy.WithCost(headerCost))
			m := middleware.MustNew(store, []*policy.Policy{upload}, middleware.WithClock(clock), ev.observer(),
				middleware.WithShadow(func(_ *http.Request, res *middleware.Result) {
					shadowed = append(shadowed, strconv.FormatBool(res.Taken())+" "+strconv.FormatBool(res.Err() == nil))
				}))
			if err := m.SetLimit("upload", 80); err != nil {
				t.Fatal(err)
			}
			w := serve(costRouters(m)[mux], "POST", "/upload", "X-Cost", "90")
			if w.Code != http.StatusOK || w.Header().Get("Retry-After") != "" || w.Header().Get("RateLimit") != `"upload";r=80;t=0` {
				t.Errorf("shadowed: %d, Retry-After %q, RateLimit %q; want 200, none, r=80", w.Code, w.Header().Get("Retry-After"), w.Header().Get("RateLimit"))
			}
			if len(ev.outcomes) != 1 || ev.outcomes[0] != "shadow_denied" || ev.denied[0] != "upload" ||
				len(shadowed) != 1 || shadowed[0] != "true true" {
				t.Errorf("observed %q by %q, shadow reports %q; want shadow_denied by upload, one report of a taken Result", ev.outcomes, ev.denied, shadowed)
			}
		})
	}
}

// TestCostAboveLoweredLimitStacked: the request costing 90 units at a
// limit lowered to 80 is one decision of all its policies, all or
// nothing: a second policy that would admit it counts nothing (its r the
// same as after the first request), and, lowered too, denies it beside
// the first, the Retry-After the longer wait. 10 units used at the start
// of a minute, 840 s into an hour: the configured limits would admit 90
// more at once, so each waits for its t (60 s, 2760 s). Through chi and a
// ServeMux.
func TestCostAboveLoweredLimitStacked(t *testing.T) {
	for _, mux := range []string{"chi", "ServeMux"} {
		t.Run(mux, func(t *testing.T) {
			store, clock := newStore(t)
			upload := fixed("upload", 100, time.Minute, remote, policy.WithCost(headerCost))
			hourly := fixed("hourly", 1000, time.Hour, remote, policy.WithCost(headerCost))
			m := middleware.MustNew(store, []*policy.Policy{upload, hourly}, middleware.WithClock(clock))
			h := costRouters(m)[mux]
			if w := serve(h, "POST", "/upload", "X-Cost", "10"); w.Code != http.StatusOK {
				t.Fatalf("10 units: %d", w.Code)
			}
			if err := m.SetLimit("upload", 80); err != nil {
				t.Fatal(err)
			}
			w := serve(h, "POST", "/upload", "X-Cost", "90")
			if got := violated(t, w); w.Code != 429 || len(got) != 1 || got[0] != "upload" || w.Header().Get("Retry-After") != "60" ||
				!strings.Contains(w.Header().Get("RateLimit"), `"hourly";r=990;`) {
				t.Errorf("90 units at 80: %d, violated %q, Retry-After %q, RateLimit %q; want upload alone, 60 s, hourly's 990 untouched",
					w.Code, got, w.Header().Get("Retry-After"), w.Header().Get("RateLimit"))
			}
			// hourly at 80 too: 90 is above it as well.
			if err := m.SetLimit("hourly", 80); err != nil {
				t.Fatal(err)
			}
			w = serve(h, "POST", "/upload", "X-Cost", "90")
			if got := violated(t, w); w.Code != 429 || len(got) != 2 || got[0] != "upload" || got[1] != "hourly" ||
				w.Header().Get("Retry-After") != "2760" {
				t.Errorf("90 units, both at 80: %d, violated %q, Retry-After %q, body %s; want both, 2760",
					w.Code, got, w.Header().Get("Retry-After"), w.Body.String())
			}
		})
	}
}

// TestCostAboveLoweredLimitStoreCannotPeek: over a store that cannot peek
// the request costing more than the lowered limit is refused as out of
// range, as before (429 without Retry-After, the error handler told of
// the *policy.CostError), which says nothing of the store: no store
// error, no change of State, the breaker not tripped.
func TestCostAboveLoweredLimitStoreCannotPeek(t *testing.T) {
	for _, mux := range []string{"chi", "ServeMux"} {
		t.Run(mux, func(t *testing.T) {
			mem, clock := newStore(t)
			var errs []error
			m := middleware.MustNew(takeOnly{mem}, []*policy.Policy{fixed("upload", 100, time.Minute, remote, policy.WithCost(headerCost))},
				middleware.WithClock(clock), middleware.WithBreaker(1, time.Minute),
				middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) }))
			if err := m.SetLimit("upload", 80); err != nil {
				t.Fatal(err)
			}
			h := costRouters(m)[mux]
			for range 2 {
				w := serve(h, "POST", "/upload", "X-Cost", "90")
				if w.Code != 429 || w.Header().Get("Retry-After") != "" || !strings.Contains(w.Body.String(), "policy upload admits 1 to 80.") {
					t.Errorf("90 units at 80: %d, Retry-After %q, body %s; want 429 out of range", w.Code, w.Header().Get("Retry-After"), w.Body.String())
				}
			}
			var ce *policy.CostError
			if len(errs) != 2 || !errors.As(errs[0], &ce) || m.Stats().StoreErrors != 0 || m.Stats().BreakerOpen != 0 || m.State() != middleware.StateHealthy {
				t.Errorf("errors %v, %+v, State %v; want two CostErrors, no store error, healthy", errs, m.Stats(), m.State())
			}
			if w := serve(h, "POST", "/upload", "X-Cost", "80"); w.Code != http.StatusOK {
				t.Errorf("80 units at 80: %d, want 200", w.Code)
			}
		})
	}
}
