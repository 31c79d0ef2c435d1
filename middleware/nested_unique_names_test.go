package middleware_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// memberParams returns, for the IETF list field k of h (all its lines
// read as one list), each member's name and its parameters (name to
// integer value), and the names seen more than once.
func memberParams(t *testing.T, h http.Header, k string) (map[string]map[string]int64, []string) {
	t.Helper()
	ms := map[string]map[string]int64{}
	var twice []string
	for _, line := range h.Values(k) {
		for m := range strings.SplitSeq(line, ", ") {
			name, params, ok := strings.Cut(strings.TrimPrefix(m, `"`), `"`)
			if !ok {
				t.Fatalf("%s member %q: no quoted name", k, m)
			}
			if _, seen := ms[name]; seen {
				twice = append(twice, name)
			}
			ps := map[string]int64{}
			for p := range strings.SplitSeq(strings.TrimPrefix(params, ";"), ";") {
				pk, pv, _ := strings.Cut(p, "=")
				if v, err := strconv.ParseInt(pv, 10, 64); err == nil {
					ps[pk] = v
				}
			}
			ms[name] = ps
		}
	}
	return ms, twice
}

// TestNestedSameNameOneMember: two nested middlewares that both decide a
// policy named "api", counting apart (a global "api" of 100 a minute and
// a route's of 5; the same policy keyed apart in each; a token_bucket's
// copy lowered by SetLimitUnguarded), would each write a member of that
// name: two members of one name in each field, which a client cannot
// tell apart, nor match a RateLimit member to its RateLimit-Policy one.
// Each field carries one "api" member: the more constraining of the two
// (the lower r; of equal r the longer t), and in RateLimit-Policy the
// member of the same middleware, so that the two fields describe one
// quota. Under IETFMostConstraining too, where each RateLimit line holds
// one member (another policy's, "sec", further out: the inner line's
// "api" then stands; or the outer "api", which goes: the outer line then
// reports its next most constraining policy, as IETF keeps its members).
// Through chi and a ServeMux.
func TestNestedSameNameOneMember(t *testing.T) {
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	otherKey := func(*http.Request) (string, error) { return "other", nil }
	bucket := policy.Must(policy.New("api", algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 5, Window: time.Minute}, constKey))
	type shape struct {
		name         string
		outer, inner []*policy.Policy
		lowerInner   int64 // SetLimitUnguarded of the inner "api", when > 0
		// The "api" r of the outer and inner middlewares after the n-th
		// request (from 1), and the q of each.
		outerR, innerR func(n int64) int64
		outerQ, innerQ int64
		// The request from which on the outer one refuses: the inner
		// one sees it no more (0: none).
		outerOnlyFrom int64
		// A policy of another name whose RateLimit member the response
		// carries too, if any.
		also string
	}
	shapes := []shape{
		{
			name:  "apart",
			outer: []*policy.Policy{fixed("api", 100, time.Minute, constKey)},
			inner: []*policy.Policy{fixed("api", 5, time.Minute, constKey)},
			// The outer one counts every request; the inner one's
			// refusals count nothing there.
			outerR: func(n int64) int64 { return 100 - n },
			innerR: func(n int64) int64 { return max(0, 5-n) },
			outerQ: 100, innerQ: 5,
		},
		{
			name:   "keyed apart",
			outer:  []*policy.Policy{fixed("api", 100, time.Minute, constKey)},
			inner:  []*policy.Policy{fixed("api", 100, time.Minute, otherKey)},
			outerR: func(n int64) int64 { return 100 - n },
			innerR: func(n int64) int64 { return 100 - n },
			outerQ: 100, innerQ: 100,
		},
		{
			name:          "unguarded copy",
			outer:         []*policy.Policy{bucket},
			inner:         []*policy.Policy{bucket},
			lowerInner:    3,
			outerOnlyFrom: 6,
			outerR:        func(n int64) int64 { return max(0, 5-n) },
			innerR:        func(n int64) int64 { return max(0, 3-n) },
			outerQ:        5, innerQ: 3,
		},
		{
			name:   "with others",
			outer:  []*policy.Policy{fixed("api", 100, time.Minute, constKey), fixed("sec", 10, time.Second, constKey)},
			inner:  []*policy.Policy{fixed("day", 1000, 24*time.Hour, constKey), fixed("api", 5, time.Minute, constKey)},
			outerR: func(n int64) int64 { return 100 - n },
			innerR: func(n int64) int64 { return max(0, 5-n) },
			outerQ: 100, innerQ: 5,
		},
	}
	shapes = append(shapes, shape{
		// Under IETFMostConstraining the outer line's one member is
		// its "api" (r=99 of 100, the hour's r=999 of 1000); the inner
		// "api" stands for the name, and the outer line reports its
		// next most constraining policy, the hour, as IETF keeps it.
		name:   "outer line refilled",
		outer:  []*policy.Policy{fixed("api", 100, time.Minute, constKey), fixed("hour", 1000, time.Hour, constKey)},
		inner:  []*policy.Policy{fixed("api", 5, time.Minute, constKey)},
		outerR: func(n int64) int64 { return 100 - n },
		innerR: func(n int64) int64 { return max(0, 5-n) },
		outerQ: 100, innerQ: 5,
		also: "hour",
	})
	for _, prof := range []middleware.Profile{middleware.IETF, middleware.IETFMostConstraining} {
		for _, sh := range shapes {
			for _, mux := range []string{"chi", "ServeMux"} {
				t.Run(fmt.Sprintf("%v/%s/%s", prof, sh.name, mux), func(t *testing.T) {
					store, clock := newStore(t)
					outer := middleware.MustNew(store, sh.outer, middleware.WithClock(clock), middleware.WithHeaders(prof), quiet)
					inner := middleware.MustNew(store, sh.inner, middleware.WithClock(clock), quiet)
					if sh.lowerInner > 0 {
						if err := inner.SetLimitUnguarded("api", sh.lowerInner); err != nil {
							t.Fatal(err)
						}
					}
					h := nestedRouter(mux, outer, inner)
					for n := int64(1); n <= 7; n++ {
						w := serve(h, "GET", "/")
						pol, twiceP := memberParams(t, w.Header(), "RateLimit-Policy")
						rl, twiceR := memberParams(t, w.Header(), "RateLimit")
						if twiceP != nil || twiceR != nil {
							t.Fatalf("request %d: members of one name %q %q:\n RateLimit-Policy %q\n RateLimit        %q",
								n, twiceP, twiceR, w.Header().Values("RateLimit-Policy"), w.Header().Values("RateLimit"))
						}
						or, ir := sh.outerR(n), sh.innerR(n)
						wantQ := sh.innerQ
						if or < ir {
							wantQ = sh.outerQ
						}
						if sh.outerOnlyFrom > 0 && n >= sh.outerOnlyFrom {
							wantQ, ir = sh.outerQ, or
						}
						if got := pol["api"]["q"]; got != wantQ {
							t.Errorf("request %d: RateLimit-Policy %q: api q=%d, want %d", n, w.Header().Values("RateLimit-Policy"), got, wantQ)
						}
						if _, ok := rl[sh.also]; sh.also != "" && !ok {
							t.Errorf("request %d: RateLimit %q: no %s member", n, w.Header().Values("RateLimit"), sh.also)
						}
						m, ok := rl["api"]
						if !ok {
							if prof == middleware.IETF || sh.name != "with others" {
								t.Errorf("request %d: RateLimit %q: no api member", n, w.Header().Values("RateLimit"))
							}
							continue
						}
						if got, want := m["r"], min(or, ir); got != want {
							t.Errorf("request %d: RateLimit %q: api r=%d, want %d (the lower of %d and %d)", n, w.Header().Values("RateLimit"), got, want, or, ir)
						}
					}
				})
			}
		}
	}
}

// TestNestedSameNameOneMemberGivenBack: the inner "api" (5 a minute)
// counts failed requests only (policy.CountFailed), so its middleware
// serves the request through its give-back writer: the members of the
// name are made one there too, after the give-back where the headers are
// still unsent. A handler that writes nothing (net/http sends 200 once it
// returns) has its unit given back before the headers go out: the inner
// member reports r=5 (the outer one r=100-n), and stands. A handler that
// writes its 200 sends the headers first: the inner member then reports
// the unit counted, r=4, and stands. Through chi and a ServeMux.
func TestNestedSameNameOneMemberGivenBack(t *testing.T) {
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	silent := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, writes := range []bool{false, true} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(fmt.Sprintf("writes=%v/%s", writes, mux), func(t *testing.T) {
				store, clock := newStore(t)
				outer := middleware.MustNew(store, []*policy.Policy{fixed("api", 100, time.Minute, constKey)}, middleware.WithClock(clock), quiet)
				inner := middleware.MustNew(store, []*policy.Policy{fixed("api", 5, time.Minute, constKey, policy.CountIf(policy.CountFailed))},
					middleware.WithClock(clock), quiet)
				handler, wantR := http.Handler(silent), int64(5)
				if writes {
					handler, wantR = ok, 4
				}
				var h http.Handler
				if mux == "chi" {
					r := chi.NewRouter()
					r.Use(outer.Handler)
					r.With(inner.Handler).Get("/", handler.ServeHTTP)
					h = r
				} else {
					sm := http.NewServeMux()
					sm.Handle("GET /", inner.Handler(handler))
					h = outer.Handler(sm)
				}
				for n := range 3 {
					srv := httptest.NewServer(h)
					resp, err := srv.Client().Get(srv.URL)
					srv.Close()
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					rl, twice := memberParams(t, resp.Header, "RateLimit")
					pol, twiceP := memberParams(t, resp.Header, "RateLimit-Policy")
					if resp.StatusCode != http.StatusOK || twice != nil || twiceP != nil {
						t.Fatalf("request %d: %d, RateLimit %q, RateLimit-Policy %q: want 200 and one api member in each",
							n+1, resp.StatusCode, resp.Header.Values("RateLimit"), resp.Header.Values("RateLimit-Policy"))
					}
					if got := rl["api"]["r"]; got != wantR || pol["api"]["q"] != 5 {
						t.Errorf("request %d: RateLimit %q, RateLimit-Policy %q: want the inner member, r=%d of q=5",
							n+1, resp.Header.Values("RateLimit"), resp.Header.Values("RateLimit-Policy"), wantR)
					}
				}
			})
		}
	}
}
