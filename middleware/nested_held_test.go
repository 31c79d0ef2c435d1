package middleware_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// queueEvery is a leaky_queue named name of one request per every that
// holds up to a minute.
func queueEvery(name string, every time.Duration) *policy.Policy {
	spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: every, MaxDelay: time.Minute}
	return policy.Must(policy.New(name, spec, remote))
}

// advancing is a wait that holds a request by advancing clock.
func advancing(clock *algotest.Clock) middleware.Option {
	return middleware.WithWait(func(_ context.Context, d time.Duration) error {
		clock.Advance(d)
		return nil
	})
}

// TestNestedOuterHeadersAfterInnerHold: a middleware further in that holds
// a leaky_queue request sends it on, and its response, after the hold; the
// rate-limit headers the middleware further out wrote before (its delta
// seconds counted from its decision) must then be counted from the end of
// the hold too, as the middleware counts its own (reduced by the hold).
// The outer policy, 3 a minute, has 1 left after the second request and is
// reset 60 s after it; the inner queue holds that request 10 s: the
// response reports 50 s. It reported 60, 10 s late, in every profile but
// LegacyUnix, whose reset is an instant.
func TestNestedOuterHeadersAfterInnerHold(t *testing.T) {
	for p, want := range map[middleware.Profile]map[string]string{
		middleware.IETF:       {"RateLimit": `"minute";r=1;t=50|"queue";r=5;t=0`, "RateLimit-Policy": `"minute";q=3;w=60|"queue";q=7;w=10`},
		middleware.Draft7:     {"RateLimit": "limit=3, remaining=1, reset=50", "RateLimit-Policy": "3;w=60|7;w=10"},
		middleware.Draft6:     {"RateLimit-Limit": "3", "RateLimit-Remaining": "1", "RateLimit-Reset": "50", "RateLimit-Policy": "3;w=60|7;w=10"},
		middleware.Legacy:     {"X-RateLimit-Limit": "3", "X-RateLimit-Remaining": "1", "X-RateLimit-Reset": "50"},
		middleware.LegacyUnix: {"X-RateLimit-Limit": "3", "X-RateLimit-Remaining": "1", "X-RateLimit-Reset": strconv.FormatInt(t0.Unix()+60, 10)},
	} {
		t.Run(p.String(), func(t *testing.T) {
			store, clock := newStore(t)
			outer := middleware.MustNew(store, []*policy.Policy{fixed("minute", 3, time.Minute, remote)},
				middleware.WithHeaders(p), middleware.WithClock(clock))
			inner := middleware.MustNew(store, []*policy.Policy{queueEvery("queue", 10*time.Second)},
				middleware.WithClock(clock), advancing(clock))
			h := outer.Handler(inner.Handler(ok))
			serve(h, "GET", "/") // departs at once
			w := serve(h, "GET", "/")
			if w.Code != http.StatusOK || !clock.Now().Equal(t0.Add(10*time.Second)) {
				t.Fatalf("second request: %d at %s; want 200 after a hold of 10 s", w.Code, clock.Now().Sub(t0))
			}
			for k, v := range want {
				if got := strings.Join(w.Header().Values(k), "|"); got != v {
					t.Errorf("%s %q, want %q", k, got, v)
				}
			}
		})
	}
}

// TestNestedHoldsAddUp: of three nested middlewares, the middle one and
// the inner one both hold the second request, 10 s each. The outer line
// of the IETF field, written before both holds, is counted after both
// (60 - 20 s); the middle one's, written after its own hold, after the
// inner's too. A middle middleware without headers (NoHeaders) that holds
// the request stales the outer line all the same.
func TestNestedHoldsAddUp(t *testing.T) {
	t.Run("both hold", func(t *testing.T) {
		store, clock := newStore(t)
		outer := middleware.MustNew(store, []*policy.Policy{fixed("minute", 3, time.Minute, remote)}, middleware.WithClock(clock))
		mid := middleware.MustNew(store, []*policy.Policy{queueEvery("q10", 10*time.Second)}, middleware.WithClock(clock), advancing(clock))
		inner := middleware.MustNew(store, []*policy.Policy{queueEvery("q20", 20*time.Second)}, middleware.WithClock(clock), advancing(clock))
		h := outer.Handler(mid.Handler(inner.Handler(ok)))
		serve(h, "GET", "/")
		w := serve(h, "GET", "/")
		if !clock.Now().Equal(t0.Add(20 * time.Second)) {
			t.Fatalf("held %s, want 20 s", clock.Now().Sub(t0))
		}
		if got, want := strings.Join(w.Header().Values("RateLimit"), "|"), `"minute";r=1;t=40|"q10";r=5;t=0|"q20";r=2;t=0`; got != want {
			t.Errorf("RateLimit %q, want %q", got, want)
		}
	})
	t.Run("both hold, single-valued", func(t *testing.T) {
		// The outer values (1 left) stay the lowest: both holds count.
		store, clock := newStore(t)
		opts := []middleware.Option{middleware.WithHeaders(middleware.Draft6), middleware.WithClock(clock)}
		outer := middleware.MustNew(store, []*policy.Policy{fixed("minute", 3, time.Minute, remote)}, opts...)
		mid := middleware.MustNew(store, []*policy.Policy{queueEvery("q10", 10*time.Second)}, append(opts, advancing(clock))...)
		inner := middleware.MustNew(store, []*policy.Policy{queueEvery("q20", 20*time.Second)}, append(opts, advancing(clock))...)
		var res *middleware.Result
		h := outer.Handler(mid.Handler(inner.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))))
		serve(h, "GET", "/")
		h = outer.Handler(mid.Handler(inner.Handler(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			res, _ = middleware.FromContext(r.Context())
		}))))
		w := serve(h, "GET", "/")
		if got := w.Header().Get("RateLimit-Remaining") + " " + w.Header().Get("RateLimit-Reset"); got != "1 40" {
			t.Errorf("RateLimit-Remaining and -Reset %q, want %q (the outer policy's, 60 - 20 s)", got, "1 40")
		}
		if res == nil || res.Policy(0).Name() != "q20" {
			t.Errorf("FromContext in the handler after two holds: %v, want the inner Result", res)
		}
	})
	t.Run("held without headers", func(t *testing.T) {
		store, clock := newStore(t)
		outer := middleware.MustNew(store, []*policy.Policy{fixed("minute", 3, time.Minute, remote)}, middleware.WithClock(clock))
		mid := middleware.MustNew(store, []*policy.Policy{queueEvery("q10", 10*time.Second)},
			middleware.WithHeaders(middleware.NoHeaders), middleware.WithClock(clock), advancing(clock))
		inner := middleware.MustNew(store, []*policy.Policy{fixed("hour", 10, time.Hour, remote)}, middleware.WithClock(clock))
		h := outer.Handler(mid.Handler(inner.Handler(ok)))
		serve(h, "GET", "/")
		w := serve(h, "GET", "/")
		if got, want := strings.Join(w.Header().Values("RateLimit"), "|"), `"minute";r=1;t=50|"hour";r=8;t=2750`; got != want {
			t.Errorf("RateLimit %q, want %q", got, want)
		}
	})
}

// TestNestedHoldKeepsPK: the outer line counted after an inner hold keeps
// the outer middleware's pk parameters (its secret is not the inner's).
func TestNestedHoldKeepsPK(t *testing.T) {
	store, clock := newStore(t)
	outer := middleware.MustNew(store, []*policy.Policy{fixed("a", 3, time.Minute, remote), fixed("b", 5, time.Hour, remote)},
		middleware.WithClock(clock), middleware.WithPartitionKey([]byte("the outer secret, 16+ bytes")))
	inner := middleware.MustNew(store, []*policy.Policy{queueEvery("queue", 10*time.Second)}, middleware.WithClock(clock), advancing(clock))
	h := outer.Handler(inner.Handler(ok))
	first := serve(h, "GET", "/").Header().Values("RateLimit")[0]
	w := serve(h, "GET", "/")
	got := w.Header().Values("RateLimit")
	pk := strings.Split(first, ";pk=")
	if len(pk) != 3 {
		t.Fatalf("first outer line %q, want two pks", first)
	}
	a, b := strings.Split(pk[1], ",")[0], pk[2]
	if want := `"a";r=1;t=50;pk=` + a + `, "b";r=3;t=2750;pk=` + b; len(got) != 2 || got[0] != want {
		t.Errorf("RateLimit %q, want the outer line %q", got, want)
	}
}

// TestNestedOuterFieldsEditedBeforeInnerHold: a handler between two
// middlewares removed or replaced fields the outer one wrote (in a
// single-valued profile); the inner one, after holding the request,
// counts after the hold only the outer values still there, and writes
// back none that the handler removed or replaced. The outer policy (3 a
// minute) has 1 left, the inner queue 5: the inner one reports none of
// its own values.
func TestNestedOuterFieldsEditedBeforeInnerHold(t *testing.T) {
	legacy := []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"}
	draft6 := []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"}
	for _, tc := range []struct {
		name string
		p    middleware.Profile
		edit func(h http.Header)
		want map[string]string // "|" joins field lines; "" is no field
	}{
		{"legacy removed", middleware.Legacy, func(h http.Header) {
			for _, k := range legacy {
				h.Del(k)
			}
		}, map[string]string{"X-RateLimit-Limit": "", "X-RateLimit-Remaining": "", "X-RateLimit-Reset": ""}},
		{"legacy replaced", middleware.Legacy, func(h http.Header) {
			for _, k := range legacy {
				h.Set(k, "7")
			}
		}, map[string]string{"X-RateLimit-Limit": "7", "X-RateLimit-Remaining": "7", "X-RateLimit-Reset": "7"}},
		{"draft-6 values removed", middleware.Draft6, func(h http.Header) {
			for _, k := range draft6 {
				h.Del(k)
			}
		}, map[string]string{"RateLimit-Limit": "", "RateLimit-Remaining": "", "RateLimit-Reset": "", "RateLimit-Policy": "3;w=60|7;w=10"}},
		{"draft-6 policy removed", middleware.Draft6, func(h http.Header) {
			h.Del("RateLimit-Policy")
		}, map[string]string{"RateLimit-Limit": "3", "RateLimit-Remaining": "1", "RateLimit-Reset": "50", "RateLimit-Policy": "7;w=10"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, clock := newStore(t)
			outer := middleware.MustNew(store, []*policy.Policy{fixed("minute", 3, time.Minute, remote)},
				middleware.WithHeaders(tc.p), middleware.WithClock(clock))
			inner := middleware.MustNew(store, []*policy.Policy{queueEvery("queue", 10*time.Second)},
				middleware.WithClock(clock), advancing(clock))
			between := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				tc.edit(w.Header())
				inner.Handler(ok).ServeHTTP(w, r)
			})
			mux := http.NewServeMux()
			mux.Handle("/", outer.Handler(between))
			serve(mux, "GET", "/") // departs at once
			w := serve(mux, "GET", "/")
			if w.Code != http.StatusOK || !clock.Now().Equal(t0.Add(10*time.Second)) {
				t.Fatalf("second request: %d at %s; want 200 after a hold of 10 s", w.Code, clock.Now().Sub(t0))
			}
			for k, v := range tc.want {
				if got := strings.Join(w.Header().Values(k), "|"); got != v {
					t.Errorf("%s %q, want %q", k, got, v)
				}
			}
		})
	}
}
