package middleware_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// members returns the members of the list field k of h, all its lines
// read as one list, sorted.
func members(h http.Header, k string) []string {
	var ms []string
	for _, line := range h.Values(k) {
		ms = append(ms, strings.Split(line, ", ")...)
	}
	slices.Sort(ms)
	return ms
}

// sorted returns ms sorted.
func sorted(ms ...string) []string {
	slices.Sort(ms)
	return ms
}

// checkRaisedHeaders checks the rate-limit headers of w (the response to
// request req) under prof for the policy "p" of a 60 s fixed window,
// reported once at limit with left units left and t (and reset) 50,
// beside the members of policies of other names (IETF RateLimit-Policy
// and RateLimit members, draft -06/-07 RateLimit-Policy ones; the lists
// read in any order), and a 429's Retry-After 50.
func checkRaisedHeaders(t *testing.T, req int, w *httptest.ResponseRecorder, prof middleware.Profile, limit, left int, ietfPolicies, ietfState, legacyPolicies []string) {
	t.Helper()
	if w.Code == http.StatusTooManyRequests && w.Header().Get("Retry-After") != "50" {
		t.Errorf("request %d: Retry-After %q, want 50", req, w.Header().Get("Retry-After"))
	}
	l, r := strconv.Itoa(limit), strconv.Itoa(left)
	var want map[string][]string
	switch prof {
	case middleware.IETF:
		want = map[string][]string{
			"RateLimit-Policy": sorted(append([]string{`"p";q=` + l + `;w=60`}, ietfPolicies...)...),
			"RateLimit":        sorted(append([]string{`"p";r=` + r + `;t=50`}, ietfState...)...),
		}
	case middleware.Draft7:
		want = map[string][]string{
			"RateLimit-Policy": sorted(append([]string{l + ";w=60"}, legacyPolicies...)...),
			"RateLimit":        {"limit=" + l + ", remaining=" + r + ", reset=50"},
		}
	case middleware.Draft6:
		want = map[string][]string{
			"RateLimit-Policy":    sorted(append([]string{l + ";w=60"}, legacyPolicies...)...),
			"RateLimit-Limit":     {l},
			"RateLimit-Remaining": {r},
			"RateLimit-Reset":     {"50"},
		}
	case middleware.Legacy:
		want = map[string][]string{
			"X-RateLimit-Limit":     {l},
			"X-RateLimit-Remaining": {r},
			"X-RateLimit-Reset":     {"50"},
		}
	}
	for k, v := range want {
		got := w.Header().Values(k)
		if k == "RateLimit-Policy" || k == "RateLimit" && prof == middleware.IETF {
			got = members(w.Header(), k) // a list, over its lines
		}
		if !slices.Equal(got, v) {
			t.Errorf("request %d (%d): %s %q, want %q", req, w.Code, k, w.Header().Values(k), v)
		}
	}
}

// TestSharedPolicyOuterRaisedHeadersDrafts: as
// TestSharedPolicyOuterRaisedHeaders (a policy of 5 a minute given to two
// nested middlewares, the one further out raising it to 8 by SetLimit or
// a reload, in shadow mode or not), under the draft -07 and -06 profiles,
// whose RateLimit-Policy is a list of nameless members ("5;w=60"): it
// must list the policy once, at the 5 in force for the client, not the
// 8 further out (while the one further in is under its limit), nor both
// (once it refuses). With others, each middleware has a policy of its
// own too (an hour's 100 further out, a minute's 20 further in): their
// members stay, in every profile. With "same quota", the one further
// out has a policy of another name at 8 a minute, whose draft member
// "8;w=60" is the raised policy's too: it stays, beside "5;w=60".
// Through chi and a ServeMux, on the memory store and on Redis, on an
// injected clock 10 s into a minute.
func TestSharedPolicyOuterRaisedHeadersDrafts(t *testing.T) {
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	for _, name := range storetest.Names {
		for _, how := range []string{"SetLimit", "reload"} {
			for _, shadow := range []bool{false, true} {
				for _, others := range []string{"", "others", "same quota"} {
					profs := []middleware.Profile{middleware.Draft7, middleware.Draft6}
					if others != "" {
						profs = append(profs, middleware.IETF, middleware.Legacy)
					}
					for _, prof := range profs {
						for _, mux := range []string{"chi", "ServeMux"} {
							t.Run(fmt.Sprintf("%s/%s/outer-shadow=%v/%s/%v/%s", name, how, shadow, others, prof, mux), func(t *testing.T) {
								clock := algotest.NewClock(t0.Add(10 * time.Second))
								store := storetest.New(t, name, clock)
								oo := []middleware.Option{middleware.WithClock(clock), quiet, middleware.WithHeaders(prof)}
								if shadow {
									oo = append(oo, middleware.WithShadow(nil))
								}
								outerPolicies := func(limit int64) []*policy.Policy {
									ps := []*policy.Policy{fixed("p", limit, time.Minute, constKey)}
									switch others {
									case "others":
										ps = append(ps, fixed("wide", 100, time.Hour, constKey))
									case "same quota":
										ps = append(ps, fixed("eight", 8, time.Minute, constKey))
									}
									return ps
								}
								innerPolicies := []*policy.Policy{fixed("p", 5, time.Minute, constKey)}
								if others == "others" {
									innerPolicies = append(innerPolicies, fixed("route", 20, time.Minute, constKey))
								}
								outer := middleware.MustNew(store, outerPolicies(5), oo...)
								inner := middleware.MustNew(store, innerPolicies, middleware.WithClock(clock), quiet, middleware.WithHeaders(prof))
								if how == "SetLimit" {
									setLimit(t, outer, "p", 8)
								} else if err := outer.SetPolicies(outerPolicies(8)); err != nil {
									t.Fatal(err)
								}
								h := nestedRouter(mux, outer, inner)
								// 1_700_000_050 is 850 s into its hour.
								const limit, raised, hourLeft = 5, 8, 3600 - 850
								for used := 1; used <= raised; used++ {
									w := serve(h, "GET", "/")
									code, left := http.StatusOK, limit-used
									if left < 0 {
										code, left = http.StatusTooManyRequests, 0
									}
									if w.Code != code {
										t.Errorf("request %d: %d, want %d", used, w.Code, code)
									}
									var ietfPolicies, ietfState, legacyPolicies []string
									// The one further out counts every
									// request; the one further in those it
									// admits.
									switch others {
									case "others":
										ietfPolicies = []string{`"wide";q=100;w=3600`, `"route";q=20;w=60`}
										ietfState = []string{
											`"wide";r=` + strconv.Itoa(100-used) + `;t=` + strconv.Itoa(hourLeft),
											`"route";r=` + strconv.Itoa(20-min(used, limit)) + `;t=50`,
										}
										legacyPolicies = []string{"100;w=3600", "20;w=60"}
									case "same quota":
										ietfPolicies = []string{`"eight";q=8;w=60`}
										ietfState = []string{`"eight";r=` + strconv.Itoa(raised-used) + `;t=50`}
										legacyPolicies = []string{"8;w=60"}
									}
									checkRaisedHeaders(t, used, w, prof, limit, left, ietfPolicies, ietfState, legacyPolicies)
								}
							})
						}
					}
				}
			}
		}
	}
}

// TestSharedPolicyThreeRaisedHeaders: one policy of 5 a minute given to
// three nested middlewares, two of which raise it (SetLimit or a reload)
// further out than the one at 5: to 8 and 6, or 6 and 8. Each request
// every middleware admits counts once in its state, which the one at 5
// holds the client to: 5 a minute are admitted, not 6 (the one at 5
// took the one in the middle for a repeat that counted the request
// within its limit). Each response reports the policy once, at the
// lowest limit of the middlewares the request reached (the one that
// refused it is the lowest of them), with what is left there, in every
// profile: not a member further out at its higher limit beside it.
// Through chi and a ServeMux, on the memory store and on Redis, on an
// injected clock 10 s into a minute (t=50).
func TestSharedPolicyThreeRaisedHeaders(t *testing.T) {
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	profs := []middleware.Profile{middleware.IETF, middleware.Draft7, middleware.Draft6, middleware.Legacy}
	for _, name := range storetest.Names {
		for _, limits := range [][3]int{{8, 6, 5}, {6, 8, 5}} {
			for _, how := range []string{"SetLimit", "reload"} {
				for _, prof := range profs {
					for _, mux := range []string{"chi", "ServeMux"} {
						t.Run(fmt.Sprintf("%s/%v/%s/%v/%s", name, limits, how, prof, mux), func(t *testing.T) {
							clock := algotest.NewClock(t0.Add(10 * time.Second))
							store := storetest.New(t, name, clock)
							var ms [3]*middleware.Middleware
							for i, l := range limits {
								ms[i] = middleware.MustNew(store, []*policy.Policy{fixed("p", 5, time.Minute, constKey)},
									middleware.WithClock(clock), quiet, middleware.WithHeaders(prof))
								switch {
								case l == 5:
								case how == "SetLimit":
									setLimit(t, ms[i], "p", int64(l))
								default:
									if err := ms[i].SetPolicies([]*policy.Policy{fixed("p", int64(l), time.Minute, constKey)}); err != nil {
										t.Fatal(err)
									}
								}
							}
							h := nested3Router(mux, ms[0], ms[1], ms[2])
							for used := 1; used <= 8; used++ {
								// The request reaches the middlewares up to
								// the first one past its limit, which
								// refuses it: the lowest limit reached.
								code, limit := http.StatusOK, limits[0]
								for _, l := range limits {
									limit = min(limit, l)
									if used > l {
										code = http.StatusTooManyRequests
										break
									}
								}
								w := serve(h, "GET", "/")
								if w.Code != code {
									t.Errorf("request %d: %d, want %d", used, w.Code, code)
								}
								checkRaisedHeaders(t, used, w, prof, limit, max(0, limit-used), nil, nil, nil)
							}
						})
					}
				}
			}
		}
	}
}

// TestSharedPolicyRedecidedDraftMember: a policy that a middleware
// further in decides again, its member replacing the one further out
// (see middleware.ErrCountedTwice), under the draft -07 and -06
// profiles, where the two members are the same quota value ("5;w=60"),
// of which the list holds one: it must stay. The one further out runs
// the policy lowered from 10 to 5 by SetLimit (checked on the 10's
// state) and the one further in runs it built at 5; or the one further
// out, in shadow mode, denies every request but the first (a policy of
// its own, 1 a minute) and counts nothing, so the one further in decides
// it (the list alone is checked then: the values are those of the
// shadow one's denied policy). Through chi and a ServeMux, on the memory
// store and on Redis.
func TestSharedPolicyRedecidedDraftMember(t *testing.T) {
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	for _, name := range storetest.Names {
		for _, outerHas := range []string{"lowered", "shadow denial"} {
			for _, prof := range []middleware.Profile{middleware.Draft7, middleware.Draft6} {
				for _, mux := range []string{"chi", "ServeMux"} {
					t.Run(fmt.Sprintf("%s/%s/%v/%s", name, outerHas, prof, mux), func(t *testing.T) {
						clock := algotest.NewClock(t0.Add(10 * time.Second))
						store := storetest.New(t, name, clock)
						oo := []middleware.Option{middleware.WithClock(clock), quiet, middleware.WithHeaders(prof)}
						outerPolicies := []*policy.Policy{fixed("p", 10, time.Minute, constKey)}
						var others []string
						if outerHas == "shadow denial" {
							oo = append(oo, middleware.WithShadow(nil))
							outerPolicies = []*policy.Policy{fixed("p", 5, time.Minute, constKey), fixed("own", 1, time.Minute, constKey)}
							others = []string{"1;w=60"}
						}
						outer := middleware.MustNew(store, outerPolicies, oo...)
						if outerHas == "lowered" {
							setLimit(t, outer, "p", 5)
						}
						inner := middleware.MustNew(store, []*policy.Policy{fixed("p", 5, time.Minute, constKey)},
							middleware.WithClock(clock), quiet, middleware.WithHeaders(prof))
						h := nestedRouter(mux, outer, inner)
						for used := 1; used <= 6; used++ {
							w := serve(h, "GET", "/")
							code, left := http.StatusOK, 5-used
							if left < 0 {
								code, left = http.StatusTooManyRequests, 0
							}
							if w.Code != code {
								t.Errorf("request %d: %d, want %d", used, w.Code, code)
							}
							if others == nil {
								checkRaisedHeaders(t, used, w, prof, 5, left, nil, nil, nil)
								continue
							}
							// The values are those of the shadow one's own
							// policy, denied (a denial comes first): the
							// list alone is checked.
							if want, got := sorted("5;w=60", "1;w=60"), members(w.Header(), "RateLimit-Policy"); !slices.Equal(got, want) {
								t.Errorf("request %d (%d): RateLimit-Policy %q, want %q", used, w.Code, w.Header().Values("RateLimit-Policy"), want)
							}
						}
					})
				}
			}
		}
	}
}
