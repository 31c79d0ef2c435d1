package middleware_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// peerIP keys by the peer's address without its port (each request of
// srv.Client() may come from another port).
var peerIP = keyfunc.Must(keyfunc.IP())

// getStatuses sends n GETs to url and returns their statuses and the last
// response's RateLimit lines.
func getStatuses(t *testing.T, c *http.Client, url string, n int) ([]int, []string) {
	t.Helper()
	var codes []int
	var lines []string
	for range n {
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
		lines = resp.Header.Values("RateLimit")
	}
	return codes, lines
}

// TestNestedInItselfCountsOnce: the same middleware installed twice on a
// route (chi's r.Use, then r.With on the route; a ServeMux handler wrapped
// by a middleware that also wraps the whole mux) counted each request
// twice against each of its policies, so a limit of 3 let 1 request in
// (with 3 it took 2 units, and the second request's first unit filled
// it). Now the inner one leaves them out: 3 pass, the 4th is refused, the
// response reports the policy once, and the error handler hears of it once.
func TestNestedInItselfCountsOnce(t *testing.T) {
	for _, mux := range []string{"chi", "ServeMux"} {
		t.Run(mux, func(t *testing.T) {
			store, _ := newStore(t)
			var got reports
			m := middleware.MustNew(store, []*policy.Policy{fixed("per-min", 3, time.Minute, peerIP)}, got.handler())
			srv := httptest.NewServer(nestedRouter(mux, m, m))
			defer srv.Close()
			codes, lines := getStatuses(t, srv.Client(), srv.URL+"/", 4)
			if want := []int{200, 200, 200, 429}; !slices.Equal(codes, want) {
				t.Errorf("statuses %v, want %v", codes, want)
			}
			if len(lines) != 1 || !strings.HasPrefix(lines[0], `"per-min";r=0;`) {
				t.Errorf("RateLimit lines %q, want the policy once", lines)
			}
			if errs := got.twice(); len(errs) != 1 || !strings.Contains(errs[0].Error(), `"per-min"`) {
				t.Errorf("reports %v, want one ErrCountedTwice naming the policy", errs)
			}
		})
	}
}

// TestSharedPolicyCountsOnce: one *policy.Policy given to two nested
// middlewares (a global list reused in a stricter route's middleware) is
// counted by the outer one only; the others of the inner one still count.
func TestSharedPolicyCountsOnce(t *testing.T) {
	store, _ := newStore(t)
	shared := fixed("per-min", 3, time.Minute, peerIP)
	var got reports
	global := middleware.MustNew(store, []*policy.Policy{shared})
	strict := middleware.MustNew(store, []*policy.Policy{shared, fixed("login", 2, time.Minute, peerIP)}, got.handler())
	srv := httptest.NewServer(nestedRouter("chi", global, strict))
	defer srv.Close()
	codes, lines := getStatuses(t, srv.Client(), srv.URL+"/", 2)
	if want := []int{200, 200}; !slices.Equal(codes, want) {
		t.Errorf("statuses %v, want %v", codes, want)
	}
	joined := strings.Join(lines, " | ")
	if !strings.Contains(joined, `"per-min";r=1;`) || !strings.Contains(joined, `"login";r=0;`) || strings.Count(joined, `"per-min"`) != 1 {
		t.Errorf("RateLimit lines %q: want per-min counted once (r=1) and login (r=0)", lines)
	}
	codes, _ = getStatuses(t, srv.Client(), srv.URL+"/", 1)
	if codes[0] != 429 {
		t.Errorf("third login: %d, want 429 by the login policy", codes[0])
	}
	if errs := got.twice(); len(errs) != 1 || !strings.Contains(errs[0].Error(), `"per-min"`) || strings.Contains(errs[0].Error(), `"login"`) {
		t.Errorf("reports %v, want one naming per-min alone", errs)
	}
}

// TestSharedPolicyCountsOnceWithShadow: one policy shared by nested
// middlewares counts each request once whatever their modes. A middleware
// in shadow mode (dry run) further out counts the requests it admits as any
// other does, so the one further in leaves the policy out of its decision,
// its headers and its Take; a request the shadow one denied consumed
// nothing there, so the one further in decides it, and refuses it unless
// it is in shadow mode too. With the shadow one further out, the one
// further in decided every request again: each counted twice, the third of
// a limit of 4 was refused, and the response reported the policy twice.
// Through chi and a ServeMux.
func TestSharedPolicyCountsOnceWithShadow(t *testing.T) {
	for _, tt := range []struct {
		name                     string
		outerShadow, innerShadow bool
		fifth                    int // the status of the fifth request
	}{
		{"shadow outside", true, false, http.StatusTooManyRequests},
		{"shadow inside", false, true, http.StatusTooManyRequests},
		{"both in shadow mode", true, true, http.StatusOK},
	} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(tt.name+"/"+mux, func(t *testing.T) {
				store, _ := newStore(t)
				shared := fixed("per-min", 4, time.Minute, peerIP)
				var got reports
				mw := func(shadow bool, opts ...middleware.Option) *middleware.Middleware {
					if shadow {
						opts = append(opts, middleware.WithShadow(nil))
					}
					return middleware.MustNew(store, []*policy.Policy{shared}, opts...)
				}
				outer, inner := mw(tt.outerShadow), mw(tt.innerShadow, got.handler())
				h := nestedRouter(mux, outer, inner)
				for i := range 4 {
					w := serve(h, "GET", "/")
					lines := w.Header().Values("RateLimit")
					if want := fmt.Sprintf(`"per-min";r=%d;`, 3-i); w.Code != http.StatusOK || len(lines) != 1 || !strings.HasPrefix(lines[0], want) {
						t.Errorf("request %d: %d, RateLimit lines %q; want 200 and the policy once, %s", i+1, w.Code, lines, want)
					}
				}
				if w := serve(h, "GET", "/"); w.Code != tt.fifth {
					t.Errorf("fifth request: %d, want %d", w.Code, tt.fifth)
				}
				if errs := got.twice(); len(errs) != 1 || !strings.Contains(errs[0].Error(), `"per-min"`) {
					t.Errorf("reports %v, want one ErrCountedTwice naming the policy", errs)
				}
			})
		}
	}
}

// TestSharedPolicyShadowOuterRetryAfter: a middleware further in that
// left a shared policy out because one in shadow mode further out counted
// it (TestSharedPolicyCountsOnceWithShadow) enforces that policy on the
// retry: the shadow one denies without counting, and the one further in
// decides it then. So a 429 it answers for another policy, when the shadow
// one admitted the request with the shared policy's last unit, waits for
// that policy too: 119 s, not the other policy's 59, at which the retry
// was refused again. Through chi and a ServeMux, on an injected clock.
func TestSharedPolicyShadowOuterRetryAfter(t *testing.T) {
	for i, mux := range []string{"chi", "ServeMux"} {
		t.Run(mux, func(t *testing.T) {
			store, clock := newStore(t)
			clock.Set(t0.Add(time.Duration(4+4*i) * time.Minute)) // a two-minute boundary
			shared := fixed("two-min", 2, 2*time.Minute, constKey)
			outer := middleware.MustNew(store, []*policy.Policy{shared}, middleware.WithClock(clock), middleware.WithShadow(nil))
			inner := middleware.MustNew(store, []*policy.Policy{shared, fixed("minute", 1, time.Minute, constKey)}, middleware.WithClock(clock))
			h := nestedRouter(mux, outer, inner)
			w := admitThenDeny(t, mux, h, clock)
			if got := w.Header().Get("Retry-After"); got != "119" {
				t.Errorf("Retry-After %q, want 119 (the shared policy's wait; RateLimit %q)", got, w.Header().Values("RateLimit"))
			}
			retryAdmittedAt(t, mux, h, clock, 119*time.Second)
		})
	}
}

// TestSharedPolicyCountsOnceWhereverItStands: the shared policy is found
// in the inner middleware's list after one that is its own, and still left
// out there, so a limit of 3 admits 3.
func TestSharedPolicyCountsOnceWhereverItStands(t *testing.T) {
	store, _ := newStore(t)
	shared := fixed("per-min", 3, time.Minute, peerIP)
	global := middleware.MustNew(store, []*policy.Policy{shared})
	strict := middleware.MustNew(store, []*policy.Policy{fixed("login", 10, time.Minute, peerIP), shared})
	srv := httptest.NewServer(nestedRouter("chi", global, strict))
	defer srv.Close()
	codes, _ := getStatuses(t, srv.Client(), srv.URL+"/", 4)
	if want := []int{200, 200, 200, 429}; !slices.Equal(codes, want) {
		t.Errorf("statuses %v, want %v", codes, want)
	}
}

// TestCountedTwiceReportSaysWhichWay: the one report of a policy shared
// with a middleware further out says what this one did with it. Counted
// there: left out here. Denied there in shadow mode, which counts
// nothing: decided here.
func TestCountedTwiceReportSaysWhichWay(t *testing.T) {
	for _, tc := range []struct {
		name      string
		spendWith string // "outer": the outer one alone spends the limit first
		want      string
	}{
		{"counted further out", "", "left out here"},
		{"denied further out in shadow mode", "outer", "decided here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, _ := newStore(t)
			shared := fixed("per-min", 1, time.Minute, constKey)
			var got reports
			outer := middleware.MustNew(store, []*policy.Policy{shared}, middleware.WithShadow(nil))
			inner := middleware.MustNew(store, []*policy.Policy{shared}, got.handler())
			if tc.spendWith == "outer" {
				serve(outer.Handler(ok), "GET", "/")
			}
			serve(nestedRouter("chi", outer, inner), "GET", "/")
			if errs := got.twice(); len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want) {
				t.Errorf("reports %v, want one ErrCountedTwice saying %q", errs, tc.want)
			}
		})
	}
}
