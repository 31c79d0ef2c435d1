package middleware_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// rateLimitFieldNames are the names of the fields that some profile of the middleware
// writes, from its exported names.
var rateLimitFieldNames = []string{
	middleware.HeaderRateLimitPolicy, middleware.HeaderRateLimit,
	middleware.HeaderRateLimitLimit, middleware.HeaderRateLimitRemaining, middleware.HeaderRateLimitReset,
	middleware.HeaderXRateLimitLimit, middleware.HeaderXRateLimitRemaining, middleware.HeaderXRateLimitReset,
}

var allProfiles = []middleware.Profile{
	middleware.IETF, middleware.IETFMostConstraining, middleware.Draft7, middleware.Draft6,
	middleware.Legacy, middleware.LegacyUnix, middleware.NoHeaders,
}

// recordingTransport passes requests to http.DefaultTransport and keeps a
// copy of each response's header as the backend sent it, before the
// proxy's ModifyResponse.
type recordingTransport struct {
	mu   sync.Mutex
	seen []http.Header
}

func (rt *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		rt.mu.Lock()
		rt.seen = append(rt.seen, resp.Header.Clone())
		rt.mu.Unlock()
	}
	return resp, err
}

func (rt *recordingTransport) take() (http.Header, bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if len(rt.seen) == 0 {
		return nil, false
	}
	h := rt.seen[0]
	rt.seen = rt.seen[1:]
	return h, true
}

// TestDropBackendRateLimitFieldsThroughReverseProxy: a ReverseProxy whose
// ModifyResponse is DropBackendRateLimitFields, behind the middleware
// ("front", 5 a minute), in front of a backend limited by ratekeeper too
// ("back", 3 a minute), in every pair of profiles. Each rate-limit field
// the client reads is the one a twin of the front middleware, on a store
// of its own, writes for a handler of its own (the middleware's fields,
// and only those), while the backend did send its own (unless in
// NoHeaders). Retry-After is the backend's on its own 429s (requests 4
// and 5, which the front admits) and the front's on its 429 (request 6,
// which never reaches the backend). Through chi and a ServeMux, to a real
// backend server.
func TestDropBackendRateLimitFieldsThroughReverseProxy(t *testing.T) {
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	for _, frontProf := range allProfiles {
		for _, backProf := range allProfiles {
			for _, mux := range []string{"chi", "ServeMux"} {
				t.Run(fmt.Sprintf("front=%v/back=%v/%s", frontProf, backProf, mux), func(t *testing.T) {
					store, clock := newStore(t)
					back := middleware.MustNew(store, []*policy.Policy{fixed("back", 3, time.Minute, constKey)},
						middleware.WithClock(clock), middleware.WithHeaders(backProf), quiet)
					backend := httptest.NewServer(back.Handler(ok))
					defer backend.Close()
					target, err := url.Parse(backend.URL)
					if err != nil {
						t.Fatal(err)
					}
					rt := &recordingTransport{}
					proxy := httputil.NewSingleHostReverseProxy(target)
					proxy.Transport = rt
					proxy.ModifyResponse = middleware.DropBackendRateLimitFields(proxy.ModifyResponse)
					frontPolicies := func() []*policy.Policy {
						return []*policy.Policy{fixed("front", 5, time.Minute, constKey)}
					}
					front := middleware.MustNew(store, frontPolicies(), middleware.WithClock(clock), middleware.WithHeaders(frontProf), quiet)
					h := behindFront(mux, front, proxy)
					twinStore, twinClock := newStore(t)
					twin := middleware.MustNew(twinStore, frontPolicies(), middleware.WithClock(twinClock), middleware.WithHeaders(frontProf), quiet).Handler(ok)

					for n := 1; n <= 6; n++ {
						w := serve(h, "GET", "/")
						want := serve(twin, "GET", "/")
						sent, reached := rt.take()
						if reached != (n <= 5) {
							t.Fatalf("request %d: backend reached %v, want %v", n, reached, n <= 5)
						}
						wantCode, wantRetry := want.Code, want.Header().Values(middleware.HeaderRetryAfter)
						if reached {
							wantCode = http.StatusOK
							if n > 3 {
								wantCode = http.StatusTooManyRequests // the backend's
							}
							wantRetry = sent.Values(middleware.HeaderRetryAfter)
							if backProf != middleware.NoHeaders && !slices.ContainsFunc(rateLimitFieldNames, func(f string) bool { return sent.Get(f) != "" }) {
								t.Fatalf("request %d: the backend sent no rate-limit field: %v", n, sent)
							}
						}
						if w.Code != wantCode {
							t.Fatalf("request %d: %d, want %d", n, w.Code, wantCode)
						}
						if w.Code == http.StatusTooManyRequests && len(wantRetry) == 0 {
							t.Fatalf("request %d: 429 without Retry-After to compare with", n)
						}
						if got := w.Header().Values(middleware.HeaderRetryAfter); !slices.Equal(got, wantRetry) {
							t.Errorf("request %d: Retry-After %q, want %q", n, got, wantRetry)
						}
						for _, f := range rateLimitFieldNames {
							if got, want := w.Header().Values(f), want.Header().Values(f); !slices.Equal(got, want) {
								t.Errorf("request %d: %s %q, want the middleware's %q", n, f, got, want)
							}
						}
					}
				})
			}
		}
	}
}

// TestDropRateLimitFields: every rate-limit field goes, whatever the case
// of its key in the map; every other field stays as it was, Retry-After
// and fields whose names merely start like a rate-limit field's included.
func TestDropRateLimitFields(t *testing.T) {
	h := http.Header{}
	for i, f := range rateLimitFieldNames {
		h.Add(f, fmt.Sprint(i))
		h.Add(f, "again")
	}
	h["ratelimit"] = []string{"lower case"}             // not canonical: set by hand
	h["X-RATELIMIT-REMAINING"] = []string{"upper case"} // likewise
	kept := http.Header{
		middleware.HeaderRetryAfter:   {"30"},
		middleware.HeaderCacheControl: {"no-store"},
		"Content-Type":                {"application/problem+json"},
		"Ratelimit-Policies":          {"not a field of ours"},
		"X-Ratelimit-Used":            {"not a field of ours"},
	}
	for k, v := range kept {
		h[k] = slices.Clone(v)
	}
	middleware.DropRateLimitFields(h)
	for k := range h {
		for _, f := range rateLimitFieldNames {
			if strings.EqualFold(k, f) {
				t.Errorf("DropRateLimitFields left %s: %q", k, h[k])
			}
		}
	}
	if len(h) != len(kept) {
		t.Errorf("DropRateLimitFields left %v, want %v", h, kept)
	}
	for k, v := range kept {
		if got := h[k]; !slices.Equal(got, v) {
			t.Errorf("DropRateLimitFields: %s %q, want %q", k, got, v)
		}
	}
	middleware.DropRateLimitFields(nil) // a nil map has nothing to drop
}

// TestDropBackendRateLimitFieldsComposes: the ModifyResponse returned
// drops the fields before it calls the one it wraps, which sees the
// response without them, returns that one's error, and takes nil.
func TestDropBackendRateLimitFieldsComposes(t *testing.T) {
	newResp := func() *http.Response {
		return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{
			"Ratelimit":   {"limit=3, remaining=0, reset=60"},
			"Retry-After": {"60"},
		}}
	}
	resp := newResp()
	if err := middleware.DropBackendRateLimitFields(nil)(resp); err != nil {
		t.Fatalf("DropBackendRateLimitFields(nil) = %v, want nil", err)
	}
	if got, want := resp.Header, (http.Header{"Retry-After": {"60"}}); len(got) != len(want) || got.Get("Retry-After") != "60" {
		t.Errorf("DropBackendRateLimitFields(nil) left %v, want %v", got, want)
	}

	errModify := errors.New("modify failed")
	var saw http.Header
	resp = newResp()
	err := middleware.DropBackendRateLimitFields(func(r *http.Response) error {
		saw = r.Header.Clone()
		r.Header.Set("X-Modified", "yes")
		return errModify
	})(resp)
	if !errors.Is(err, errModify) {
		t.Errorf("DropBackendRateLimitFields(modify) = %v, want modify's %v", err, errModify)
	}
	if saw == nil || saw.Get("Ratelimit") != "" || saw.Get("Retry-After") != "60" {
		t.Errorf("modify saw %v, want the response without RateLimit, with Retry-After", saw)
	}
	if resp.Header.Get("X-Modified") != "yes" {
		t.Errorf("modify's change lost: %v", resp.Header)
	}
}

// TestDropRateLimitFieldsASCIICase: field names are ASCII tokens, matched
// without regard to ASCII case alone: a key of any ASCII case goes, and a
// key that only Unicode folding matches to a rate-limit field's name (the
// long s "ſ", U+017F, folds to "s"; the Kelvin sign, U+212A, to "k") is
// not that field, and stays. No key is rewritten to compare it: dropping
// from a header of non-canonical keys allocates nothing.
func TestDropRateLimitFieldsASCIICase(t *testing.T) {
	h := http.Header{
		"RATELIMIT-RESET":       {"1"},
		"x-ratelimit-reset":     {"2"},
		"rAtElImIt-pOlIcY":      {"3"},
		"Ratelimit-Reſet":       {"not a field of ours"},
		"X-Ratelimit-Reſet":     {"not a field of ours"},
		"X-Ratelimit-Remaining": {"4"},
	}
	middleware.DropRateLimitFields(h)
	want := http.Header{
		"Ratelimit-Reſet":   {"not a field of ours"},
		"X-Ratelimit-Reſet": {"not a field of ours"},
	}
	if len(h) != len(want) {
		t.Errorf("DropRateLimitFields left %q, want %q", h, want)
	}
	for k, v := range want {
		if !slices.Equal(h[k], v) {
			t.Errorf("DropRateLimitFields: %s %q, want %q kept", k, h[k], v)
		}
	}

	if raceEnabled {
		return // allocation counts differ under the race detector
	}
	other := http.Header{"content-type": {"text/plain"}, "X-RATELIMIT-USED": {"1"}, "ratelimit-policies": {"x"}, "etag": {`"a"`}}
	if n := testing.AllocsPerRun(100, func() { middleware.DropRateLimitFields(other) }); n != 0 || len(other) != 4 {
		t.Errorf("DropRateLimitFields of non-canonical keys: %v allocations, %d keys left; want 0, 4", n, len(other))
	}
}

// TestDropBackendRateLimitFieldsAfter103 pins what DropBackendRateLimitFields's
// doc says of a backend's 103 Early Hints: the ReverseProxy passes the
// 103 on, without ModifyResponse, with the middleware's fields and the
// backend's (a backend behind ratekeeper has set them before its handler
// wrote the 103), then clears the header map (see the package doc), so
// the final response carries no rate-limit field at all: neither the
// middleware's nor the backend's, which were dropped. Should Go stop
// clearing the map, or pass the 103 through ModifyResponse, this fails,
// and the doc is to change. Through a ServeMux, to a real backend server,
// from a real client.
func TestDropBackendRateLimitFieldsAfter103(t *testing.T) {
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	store, clock := newStore(t)
	back := middleware.MustNew(store, []*policy.Policy{fixed("back", 3, time.Minute, constKey)},
		middleware.WithClock(clock), middleware.WithHeaders(middleware.Legacy), quiet)
	backend := httptest.NewServer(back.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload; as=style")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		_, _ = w.Write([]byte("ok"))
	})))
	defer backend.Close()
	target, err := url.Parse(backend.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = middleware.DropBackendRateLimitFields(proxy.ModifyResponse)
	front := middleware.MustNew(store, []*policy.Policy{fixed("front", 5, time.Minute, constKey)},
		middleware.WithClock(clock), middleware.WithHeaders(middleware.Legacy), quiet)
	mux := http.NewServeMux()
	mux.Handle("GET /page", front.Handler(proxy))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	req, err := http.NewRequest(http.MethodGet, srv.URL+"/page", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, early := doEarlyHints(t, srv.Client(), req)
	if resp.StatusCode != http.StatusOK || len(early) != 1 {
		t.Fatalf("GET /page = %d after %d 103s; want 200 after one 103", resp.StatusCode, len(early))
	}
	if got, want := early[0].Values(middleware.HeaderXRateLimitLimit), []string{"5", "3"}; !slices.Equal(got, want) {
		t.Errorf("the 103's X-RateLimit-Limit = %q, want the middleware's and the backend's, %q", got, want)
	}
	for _, f := range rateLimitFieldNames {
		if got := resp.Header.Values(f); len(got) != 0 {
			t.Errorf("the final response's %s = %q; the doc says it carries no rate-limit field after a 103 (update it if Go no longer clears the map)", f, got)
		}
	}
}

// TestDropRateLimitFieldsCoversEveryProfile: every field the middleware
// writes, under each profile, with and without a partition key (pk), on
// the responses to requests it admits and the 429 of one it denies, is
// either one DropRateLimitFields drops or one its doc says it keeps
// (Retry-After, Cache-Control) or the 429's body's (Content-Type,
// Content-Length). Found by what the middleware writes, not by the list
// of names: a profile that came to write a field of another name fails
// here.
func TestDropRateLimitFieldsCoversEveryProfile(t *testing.T) {
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	bare := serve(ok, "GET", "/").Header() // what the handler and the recorder write
	kept := map[string]bool{
		middleware.HeaderRetryAfter: true, middleware.HeaderCacheControl: true,
		"Content-Type": true, "Content-Length": true,
	}
	for _, prof := range allProfiles {
		for _, pk := range [][]byte{nil, []byte("a secret of 16 bytes or more")} {
			t.Run(fmt.Sprintf("%v/pk=%v", prof, pk != nil), func(t *testing.T) {
				store, clock := newStore(t)
				opts := []middleware.Option{middleware.WithClock(clock), middleware.WithHeaders(prof), quiet}
				if pk != nil {
					opts = append(opts, middleware.WithPartitionKey(pk))
				}
				h := middleware.MustNew(store, []*policy.Policy{
					fixed("per-second", 2, time.Second, constKey),
					fixed("per-minute", 3, time.Minute, constKey),
				}, opts...).Handler(ok)
				for n := 1; n <= 3; n++ {
					w := serve(h, "GET", "/")
					wantCode := http.StatusOK
					if n == 3 {
						wantCode = http.StatusTooManyRequests
					}
					if w.Code != wantCode {
						t.Fatalf("request %d: %d, want %d", n, w.Code, wantCode)
					}
					got := w.Header().Clone()
					if prof != middleware.NoHeaders && !slices.ContainsFunc(rateLimitFieldNames, func(f string) bool { return got.Get(f) != "" }) {
						t.Fatalf("request %d: no rate-limit field written: %v", n, got)
					}
					ietf := prof == middleware.IETF || prof == middleware.IETFMostConstraining
					if pk != nil && ietf && !strings.Contains(got.Get(middleware.HeaderRateLimit), ";pk=") {
						t.Fatalf("request %d: RateLimit %q without the pk parameter", n, got.Get(middleware.HeaderRateLimit))
					}
					middleware.DropRateLimitFields(got)
					for k, v := range got {
						if _, ok := bare[k]; ok && w.Code == http.StatusOK {
							continue
						}
						if w.Code == http.StatusOK || !kept[k] {
							t.Errorf("request %d (%d): %s %q left, a field the middleware wrote that is neither a rate-limit field nor one kept", n, w.Code, k, v)
						}
					}
				}
			})
		}
	}
}
