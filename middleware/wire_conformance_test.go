package middleware_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// wireProfiles are the profiles that send fields.
var wireProfiles = []middleware.Profile{middleware.IETF, middleware.Draft7, middleware.Draft6, middleware.Legacy, middleware.LegacyUnix}

// TestWireFieldsParseStrictly: what the middleware puts on the wire, read
// as a strict RFC 9651 recipient and a client of each draft read it,
// through a real server (HTTP/1.1 and HTTP/2, chi and a ServeMux), in
// every profile: allowed, denied, and a denied HEAD (the 429's headers,
// its Content-Length that of the GET's body, no body). See checkWire.
func TestWireFieldsParseStrictly(t *testing.T) {
	for _, prof := range wireProfiles {
		for _, h2 := range []bool{false, true} {
			for _, mux := range []string{"chi", "ServeMux"} {
				t.Run(fmt.Sprintf("%v/h2=%v/%s", prof, h2, mux), func(t *testing.T) {
					store, clock := newStore(t)
					m := middleware.MustNew(store, []*policy.Policy{
						fixed("per-second", 2, time.Second, constKey),
						fixed("per-minute", 100, time.Minute, constKey),
					}, middleware.WithHeaders(prof), middleware.WithClock(clock),
						middleware.WithPartitionKey([]byte("0123456789abcdef")))
					var h http.Handler
					if mux == "chi" {
						r := chi.NewRouter()
						r.Use(m.Handler)
						r.Get("/x", ok)
						r.Head("/x", ok)
						h = r
					} else {
						sm := http.NewServeMux()
						sm.Handle("GET /x", ok)
						h = m.Handler(sm)
					}
					srv := httptest.NewUnstartedServer(h)
					if h2 {
						srv.EnableHTTP2 = true
						srv.StartTLS()
					} else {
						srv.Start()
					}
					defer srv.Close()
					var denied string
					for i, method := range []string{"GET", "GET", "GET", "HEAD"} {
						req, err := http.NewRequest(method, srv.URL+"/x", nil)
						if err != nil {
							t.Fatal(err)
						}
						resp, err := srv.Client().Do(req)
						if err != nil {
							t.Fatal(err)
						}
						body, err := io.ReadAll(resp.Body)
						resp.Body.Close()
						if err != nil {
							t.Fatal(err)
						}
						if h2 != (resp.ProtoMajor == 2) {
							t.Fatalf("request %d: %s", i, resp.Proto)
						}
						if wantCode := []int{200, 200, 429, 429}[i]; resp.StatusCode != wantCode {
							t.Fatalf("request %d (%s): %d, want %d", i, method, resp.StatusCode, wantCode)
						}
						if err := checkWire(prof, resp.StatusCode, resp.Header, body, method, clock.Now()); err != nil {
							t.Errorf("request %d (%s): %v\n%v\n%s", i, method, err, resp.Header, body)
						}
						switch {
						case method == "GET" && resp.StatusCode == 429:
							denied = string(body)
						case method == "HEAD":
							if len(body) != 0 || resp.ContentLength != int64(len(denied)) {
								t.Errorf("HEAD 429: body %q, Content-Length %d; want none, %d (the GET's)", body, resp.ContentLength, len(denied))
							}
						}
						if h2 {
							for _, f := range []string{"Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "Upgrade"} {
								if v := resp.Header.Values(f); len(v) != 0 {
									t.Errorf("HTTP/2 response carries %s: %q", f, v)
								}
							}
						}
					}
				})
			}
		}
	}
}

// TestWireFieldsParseStrictlyNested: checkWire on the responses of one to
// three nested middlewares, their policies drawn at random (every kind, a
// leaky_queue held on the test's clock; a cost of 1 to 3; a policy given
// to two of them; counted only when failed; the outer ones in shadow
// mode; one middleware's limits lowered by SetLimit), in every profile,
// on an injected clock: the fields the middlewares further in add to,
// edit or replace still parse and agree with Retry-After.
func TestWireFieldsParseStrictlyNested(t *testing.T) {
	for seed := range uint64(600) {
		rng := rand.New(rand.NewPCG(seed, 7))
		store, clock := newStore(t)
		prof := wireProfiles[rng.IntN(len(wireProfiles))]
		var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.Header.Get("X-Fail") != "":
				w.WriteHeader(500)
			case r.Header.Get("X-Silent") == "":
				w.Write([]byte("ok"))
			}
		})
		var desc string
		var ms []*middleware.Middleware
		var shared *policy.Policy
		sharedLayer := -1
		costly := rng.IntN(3) == 0
		for layer := range 1 + rng.IntN(3) { // layer 0 innermost
			var ps []*policy.Policy
			for k := range 1 + rng.IntN(3) {
				var opts []policy.Option
				if rng.IntN(4) == 0 {
					opts = append(opts, policy.CountIf(policy.CountFailed))
				}
				if costly {
					opts = append(opts, policy.WithCost(func(r *http.Request) int64 {
						n, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
						return n
					}))
				}
				p := policy.Must(policy.New(fmt.Sprintf("l%dp%d", layer, k), randWireSpec(rng), remote, opts...))
				if shared != nil && sharedLayer < layer && rng.IntN(3) == 0 {
					p, sharedLayer = shared, layer
				} else if shared == nil {
					shared, sharedLayer = p, layer
				}
				ps = append(ps, p)
				desc += fmt.Sprintf(" [%d] %s %v", layer, p.Name(), p.Spec())
			}
			opts := []middleware.Option{middleware.WithHeaders(prof), middleware.WithClock(clock),
				middleware.WithErrorHandler(func(*http.Request, error) {}),
				middleware.WithWait(func(context.Context, time.Duration) error { return nil })}
			if rng.IntN(2) == 0 {
				opts = append(opts, middleware.WithPartitionKey([]byte("0123456789abcdef")))
			}
			if layer > 0 && rng.IntN(4) == 0 {
				opts = append(opts, middleware.WithShadow(nil))
				desc += " (shadow)"
			}
			m, err := middleware.New(store, ps, opts...)
			if err != nil {
				t.Fatal(err)
			}
			ms = append(ms, m)
			h = m.Handler(h)
		}
		lowered := ms[rng.IntN(len(ms))]
		for step := range 12 {
			clock.Advance(time.Duration(rng.IntN(1200)) * time.Millisecond)
			if rng.IntN(10) == 0 {
				ps := lowered.Set().Policies()
				p := ps[rng.IntN(len(ps))]
				if l := int64(rng.IntN(3)); l < p.Configured().Limit {
					_ = lowered.SetLimit(p.Name(), l)
				}
			}
			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set("X-Cost", strconv.Itoa(1+rng.IntN(3)))
			if rng.IntN(3) == 0 {
				r.Header.Set("X-Fail", "1")
			}
			if rng.IntN(4) == 0 {
				r.Header.Set("X-Silent", "1")
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if err := checkWire(prof, w.Code, w.Result().Header, w.Body.Bytes(), "GET", clock.Now()); err != nil {
				t.Fatalf("seed %d, request %d, %v:%s:\n%v\n%v\n%s", seed, step, prof, desc, err, w.Header(), w.Body)
			}
		}
	}
}

// randWireSpec draws a Spec of any kind.
func randWireSpec(rng *rand.Rand) algorithms.Spec {
	windows := []time.Duration{300 * time.Millisecond, time.Second, 1500 * time.Millisecond, 10 * time.Second, time.Minute}
	w := windows[rng.IntN(len(windows))]
	l := int64(1 + rng.IntN(5))
	switch algorithms.Kinds[rng.IntN(len(algorithms.Kinds))] {
	case algorithms.SlidingLog:
		return algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: l, Window: w}
	case algorithms.SlidingWindow:
		return algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: l, Window: w}
	case algorithms.SlidingBuckets:
		return algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: l, Window: 10 * time.Second, Buckets: 5}
	case algorithms.TokenBucket:
		return algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: l, Window: w, Burst: l + int64(rng.IntN(3))}
	case algorithms.LeakyBucket:
		return algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: l, Window: w}
	case algorithms.LeakyQueue:
		return algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: l, Window: w, MaxDelay: w}
	}
	return algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: l, Window: w}
}

// checkWire reports what, in a response with status code and header h
// (and body, for a GET), a strict reader of profile p would refuse or
// find inconsistent:
//
//   - each field parses as the RFC 9651 type its draft defines: IETF
//     RateLimit-Policy and RateLimit Lists of Strings with Integer q
//     and w >= 1, r and t, and a Byte Sequence pk; draft -07's RateLimit
//     a Dictionary of limit, remaining and reset; draft -06's and the
//     legacy fields single Integers; -06/-07 RateLimit-Policy a List of
//     Integers with w, no two of one quota value, one of them the limit
//     reported;
//   - every IETF RateLimit member names a RateLimit-Policy member;
//   - a 429 (but the cost no wait admits, which has no Retry-After) has
//     Retry-After in delay-seconds, at least 1, no earlier than the t of
//     each violated policy, which RateLimit lists; the single-valued
//     profiles' reset is that Retry-After (LegacyUnix: not before now
//     plus it); Cache-Control: no-store, an RFC 9457 problem+json body
//     whose status is the response's, and a Content-Length that is the
//     body's.
func checkWire(p middleware.Profile, code int, h http.Header, body []byte, method string, now time.Time) error {
	retry := int64(-1)
	if ra := h.Values("Retry-After"); len(ra) > 0 {
		n, err := strconv.ParseInt(ra[0], 10, 64)
		if len(ra) != 1 || err != nil || n < 1 || ra[0] != strconv.FormatInt(n, 10) {
			return fmt.Errorf("Retry-After %q: want one delay-seconds of at least 1", ra)
		}
		retry = n
	}
	var violated []string
	if code == http.StatusTooManyRequests {
		if h.Get("Cache-Control") != "no-store" || h.Get("Content-Type") != "application/problem+json" {
			return fmt.Errorf("429 with Cache-Control %q, Content-Type %q", h.Get("Cache-Control"), h.Get("Content-Type"))
		}
		if method != "HEAD" {
			var pd struct {
				Type     string   `json:"type"`
				Title    string   `json:"title"`
				Status   int      `json:"status"`
				Violated []string `json:"violated-policies"`
			}
			if err := json.Unmarshal(body, &pd); err != nil || pd.Status != code || pd.Type == "" || pd.Title == "" || len(pd.Violated) == 0 {
				return fmt.Errorf("429 body %+v: %v", pd, err)
			}
			if cl := h.Get("Content-Length"); cl != strconv.Itoa(len(body)) {
				return fmt.Errorf("Content-Length %q for a body of %d bytes", cl, len(body))
			}
			violated = pd.Violated
		}
		if retry < 0 {
			return nil // a cost no wait admits: no policy's wait applies
		}
	}
	switch p {
	case middleware.IETF:
		pol, err := parseSFListStrict(h.Values("RateLimit-Policy"))
		if err != nil {
			return fmt.Errorf("RateLimit-Policy: %v", err)
		}
		rl, err := parseSFListStrict(h.Values("RateLimit"))
		if err != nil {
			return fmt.Errorf("RateLimit: %v", err)
		}
		if len(pol) == 0 || len(rl) == 0 {
			if len(pol)+len(rl) != 0 || violated != nil {
				return fmt.Errorf("RateLimit-Policy of %d members, RateLimit of %d", len(pol), len(rl))
			}
			return nil
		}
		names := map[string]bool{}
		for _, m := range pol {
			name, ok := m.val.(string)
			if !ok || !intParam(m, "q", 0, true) || !intParam(m, "w", 1, true) || !bytesParam(m, "pk") {
				return fmt.Errorf("RateLimit-Policy member %+v", m)
			}
			names[name] = true
		}
		ts := map[string]int64{}
		for _, m := range rl {
			name, ok := m.val.(string)
			if !ok || !names[name] || !intParam(m, "r", 0, true) || !intParam(m, "t", 0, false) || !bytesParam(m, "pk") {
				return fmt.Errorf("RateLimit member %+v (policies %v)", m, names)
			}
			if v, ok := m.param("t"); ok {
				ts[name] = max(ts[name], v.(int64))
			}
		}
		for _, v := range violated {
			t, ok := ts[v]
			if !ok {
				return fmt.Errorf("violated policy %q has no RateLimit member with t", v)
			}
			if t > retry {
				return fmt.Errorf("violated policy %q: t=%d after Retry-After %d", v, t, retry)
			}
		}
	case middleware.Draft7, middleware.Draft6, middleware.Legacy, middleware.LegacyUnix:
		var limit, reset int64
		switch p {
		case middleware.Draft7:
			if len(h.Values("RateLimit")) == 0 {
				return nil
			}
			d, err := parseSFDictStrict(h.Values("RateLimit"))
			if err != nil {
				return fmt.Errorf("RateLimit: %v", err)
			}
			vals := map[string]int64{}
			for _, m := range d {
				v, ok := m.val.(int64)
				if _, dup := vals[m.key]; !ok || v < 0 || len(m.params) != 0 || dup {
					return fmt.Errorf("RateLimit member %+v", m)
				}
				vals[m.key] = v
			}
			if _, ok := vals["remaining"]; len(vals) != 3 || !ok {
				return fmt.Errorf("RateLimit %v: want limit, remaining and reset", vals)
			}
			limit, reset = vals["limit"], vals["reset"]
		default:
			prefix := "RateLimit-"
			if p != middleware.Draft6 {
				prefix = "X-RateLimit-"
			}
			if len(h.Values(prefix+"Limit")) == 0 {
				return nil
			}
			vals := map[string]int64{}
			for _, f := range []string{"Limit", "Remaining", "Reset"} {
				it, err := parseSFItemStrict(h.Values(prefix + f))
				v, ok := it.val.(int64)
				if err != nil || !ok || v < 0 || len(it.params) != 0 {
					return fmt.Errorf("%s%s %q: %v", prefix, f, h.Values(prefix+f), err)
				}
				vals[f] = v
			}
			limit, reset = vals["Limit"], vals["Reset"]
		}
		if p == middleware.Draft7 || p == middleware.Draft6 {
			pol, err := parseSFListStrict(h.Values("RateLimit-Policy"))
			if err != nil {
				return fmt.Errorf("RateLimit-Policy: %v", err)
			}
			quotas := map[int64]bool{}
			for _, m := range pol {
				q, ok := m.val.(int64)
				if !ok || q < 0 || quotas[q] || !intParam(m, "w", 1, true) {
					return fmt.Errorf("RateLimit-Policy member %+v", m)
				}
				quotas[q] = true
			}
			if !quotas[limit] {
				return fmt.Errorf("limit %d is no quota of RateLimit-Policy %q", limit, h.Values("RateLimit-Policy"))
			}
		}
		if code == http.StatusTooManyRequests {
			if p == middleware.LegacyUnix {
				if reset < now.Unix()+retry {
					return fmt.Errorf("reset %d before now plus Retry-After (%d)", reset, now.Unix()+retry)
				}
			} else if reset != retry {
				return fmt.Errorf("reset %d, Retry-After %d", reset, retry)
			}
		}
	}
	return nil
}

// intParam reports whether m's parameter key is an Integer of at least
// lo, or absent when not required.
func intParam(m sfMember, key string, lo int64, required bool) bool {
	v, ok := m.param(key)
	if !ok {
		return !required
	}
	n, ok := v.(int64)
	return ok && n >= lo
}

// bytesParam reports whether m's parameter key, if present, is a Byte
// Sequence.
func bytesParam(m sfMember, key string) bool {
	v, ok := m.param(key)
	if !ok {
		return true
	}
	_, ok = v.([]byte)
	return ok
}
