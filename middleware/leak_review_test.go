package middleware_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/prommetrics"
	"github.com/ratekeeper/ratekeeper/policy"
)

// keyEchoStore fails every Take with an error about the key's state whose
// text holds the key, as a backend reporting a key of the wrong type does.
type keyEchoStore struct{}

func (keyEchoStore) Take(_ context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	return nil, fmt.Errorf("%w: WRONGTYPE at %q", algorithms.ErrKeyState, checks[0].Key)
}

// TestCredentialKeyLeaksNowhere: a policy keyed by the raw Authorization
// header (a key function of the application's own: keyfunc.Header keys a
// credential by its digest) holds a credential in its key. Whatever
// happens to the request (allowed, denied, denied in shadow mode, the
// store failing with an error that quotes the key, open or closed), the
// credential must not reach the response (headers, 429 or 503 body), the
// logs (the middleware's LogObserver at debug level) nor the Prometheus
// metrics, served through a real chi router and a ServeMux.
func TestCredentialKeyLeaksNowhere(t *testing.T) {
	const secret = "sk_live_51HvQ3zR0ck3tS3cr3tT0k3n"
	auth := keyfunc.Func(func(r *http.Request) (string, error) {
		if v := r.Header.Get("Authorization"); v != "" {
			return v, nil
		}
		return "", keyfunc.ErrNoKey
	})
	for _, tc := range []struct {
		name  string
		store func(t *testing.T) algorithms.Store
		opts  []middleware.Option
	}{
		{name: "memory", store: func(t *testing.T) algorithms.Store { s, _ := newStore(t); return s }},
		{name: "memory shadow", store: func(t *testing.T) algorithms.Store { s, _ := newStore(t); return s },
			opts: []middleware.Option{middleware.WithShadow(nil)}},
		{name: "store error closed", store: func(*testing.T) algorithms.Store { return keyEchoStore{} },
			opts: []middleware.Option{middleware.OnStoreError(middleware.FailClosed(time.Second))}},
		{name: "store error open", store: func(*testing.T) algorithms.Store { return keyEchoStore{} },
			opts: []middleware.Option{middleware.OnStoreError(middleware.FailOpen())}},
	} {
		for _, router := range []string{"chi", "mux"} {
			t.Run(tc.name+"/"+router, func(t *testing.T) {
				var logs bytes.Buffer
				logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
				reg := prometheus.NewRegistry()
				metrics, err := prommetrics.New(reg)
				if err != nil {
					t.Fatal(err)
				}
				opts := append([]middleware.Option{
					middleware.WithLogger(logger),
					middleware.WithObserver(metrics),
					middleware.WithPartitionKey([]byte("0123456789abcdef0123456789abcdef")),
				}, tc.opts...)
				m := middleware.MustNew(tc.store(t), []*policy.Policy{fixed("per-token", 1, time.Minute, auth)}, opts...)
				var h http.Handler
				if router == "chi" {
					r := chi.NewRouter()
					r.Use(m.Handler)
					r.Get("/v1/orders", ok)
					h = r
				} else {
					mux := http.NewServeMux()
					mux.Handle("GET /v1/orders", m.Handler(ok))
					h = mux
				}
				statuses := map[int]bool{}
				for range 3 {
					req := httptest.NewRequest("GET", "/v1/orders", nil)
					req.Header.Set("Authorization", "Bearer "+secret)
					w := httptest.NewRecorder()
					h.ServeHTTP(w, req)
					statuses[w.Code] = true
					for name, vs := range w.Header() {
						for _, v := range vs {
							if strings.Contains(v, secret) {
								t.Errorf("response header %s: %q holds the credential", name, v)
							}
						}
					}
					if strings.Contains(w.Body.String(), secret) || strings.Contains(w.Body.String(), "WRONGTYPE") {
						t.Errorf("%d body %q holds the credential or the store's error text", w.Code, w.Body)
					}
				}
				want := map[string]int{"memory": http.StatusTooManyRequests, "memory shadow": http.StatusOK,
					"store error closed": http.StatusServiceUnavailable, "store error open": http.StatusOK}[tc.name]
				if !statuses[want] {
					t.Fatalf("statuses %v, want one %d: the case did not take the path it tests", statuses, want)
				}
				if logs.Len() == 0 {
					t.Errorf("nothing logged: the case did not reach the log")
				}
				if strings.Contains(logs.String(), secret) {
					t.Errorf("the log holds the credential:\n%s", logs.String())
				}
				w := httptest.NewRecorder()
				promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
				if !strings.Contains(w.Body.String(), "ratekeeper_") {
					t.Fatalf("no ratekeeper metrics served:\n%s", w.Body)
				}
				if strings.Contains(w.Body.String(), secret) {
					t.Errorf("the metrics hold the credential")
				}
			})
		}
	}
}

// TestSameNameOtherLimitKeepsItsOwnCount: two middlewares sharing one
// store each have a policy named "api" for the same client, one of 1 a
// minute on /a and one of 3 a minute on /b (django-brake#19: two limits on
// one view shared a counter, because the cache key held neither rate nor
// window). The store keeps state per Spec as well as per key, so neither
// limit counts the other's requests, through chi and a ServeMux.
func TestSameNameOtherLimitKeepsItsOwnCount(t *testing.T) {
	for _, router := range []string{"chi", "mux"} {
		t.Run(router, func(t *testing.T) {
			store, _ := newStore(t)
			a := middleware.MustNew(store, []*policy.Policy{fixed("api", 1, time.Minute, remote)})
			b := middleware.MustNew(store, []*policy.Policy{fixed("api", 3, time.Minute, remote)})
			var h http.Handler
			if router == "chi" {
				r := chi.NewRouter()
				r.With(a.Handler).Get("/a", ok)
				r.With(b.Handler).Get("/b", ok)
				h = r
			} else {
				mux := http.NewServeMux()
				mux.Handle("GET /a", a.Handler(ok))
				mux.Handle("GET /b", b.Handler(ok))
				h = mux
			}
			var got []int
			for _, p := range []string{"/b", "/b", "/b", "/a", "/a", "/b"} {
				got = append(got, serve(h, "GET", p).Code)
			}
			want := []int{200, 200, 200, 200, 429, 429}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("/b /b /b /a /a /b: %v, want %v", got, want)
			}
		})
	}
}

// TestRequestAddressesNotEchoed: tollbooth answers every request with
// X-Rate-Limit-Request-Forwarded-For and -Remote-Addr, echoing the
// client's X-Forwarded-For and the peer's address (an internal proxy's).
// Under every header profile, allowed and denied, no response header of
// the middleware holds the client's address, the proxy's, or anything the
// client wrote in its forwarding headers.
func TestRequestAddressesNotEchoed(t *testing.T) {
	ip := keyfunc.Must(keyfunc.IP(keyfunc.TrustedProxies(netip.MustParsePrefix("10.0.0.0/8"))))
	for _, p := range []middleware.Profile{middleware.IETF, middleware.Draft7, middleware.Draft6, middleware.Legacy, middleware.LegacyUnix} {
		store, _ := newStore(t)
		m := middleware.MustNew(store, []*policy.Policy{fixed("per-ip", 1, time.Minute, ip)},
			middleware.WithHeaders(p), middleware.WithPartitionKey([]byte("0123456789abcdef")))
		r := chi.NewRouter()
		r.Use(m.Handler)
		r.Get("/", ok)
		codes := []int{}
		for range 2 {
			req := httptest.NewRequest("GET", "/", nil)
			req.RemoteAddr = "10.1.2.3:47913"
			req.Header.Set("X-Forwarded-For", "198.51.100.250, 203.0.113.77")
			req.Header.Set("X-Real-IP", "198.51.100.251")
			w := httptest.NewRecorder()
			r.ServeHTTP(w, req)
			codes = append(codes, w.Code)
			for name, vs := range w.Header() {
				for _, v := range vs {
					for _, addr := range []string{"203.0.113.77", "10.1.2.3", "198.51.100.25", ":47913"} {
						if strings.Contains(v, addr) {
							t.Errorf("profile %v, %d: header %s: %q echoes %s", p, w.Code, name, v, addr)
						}
					}
				}
			}
		}
		if codes[0] != http.StatusOK || codes[1] != http.StatusTooManyRequests {
			t.Errorf("profile %v: statuses %v, want [200 429]", p, codes)
		}
	}
}
