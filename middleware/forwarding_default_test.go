package middleware_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestForwardingCheckOnByDefaultInCode: a middleware built from a
// configuration checks for forwarding headers its ip keys ignore; one
// built in code did not unless given CheckForwarding(true), so deployed
// behind a reverse proxy as the quick start wrote it (keyfunc.IP(), no
// trusted proxy) every client shared the proxy's limit and nothing said
// so. The check is now on by default in code too: the first request
// carrying a forwarding header is logged, once, at Warn, saying what to
// do, and the key stays the peer's (a client writing X-Forwarded-For to a
// server it reaches directly changes nothing). CheckForwarding(false)
// turns it off. Through a real server, behind chi and a ServeMux.
func TestForwardingCheckOnByDefaultInCode(t *testing.T) {
	for _, mux := range []string{"chi", "ServeMux"} {
		for _, tc := range []struct {
			name  string
			opts  []middleware.Option
			warns int
		}{
			{"default", nil, 1},
			{"CheckForwarding(false)", []middleware.Option{middleware.CheckForwarding(false)}, 0},
		} {
			t.Run(mux+"/"+tc.name, func(t *testing.T) {
				var logs lockedBuffer
				store, _ := newStore(t)
				opts := append([]middleware.Option{middleware.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil)))}, tc.opts...)
				m := middleware.MustNew(store, []*policy.Policy{fixed("per-ip", 3, time.Minute, peerIP)}, opts...)
				srv := httptest.NewServer(routedBy(mux, m))
				defer srv.Close()
				// A client rotating X-Forwarded-For: the key is the
				// peer's all the same, so the fourth is denied.
				for i, want := range []int{200, 200, 200, 429} {
					req, err := http.NewRequest("GET", srv.URL+"/", nil)
					if err != nil {
						t.Fatal(err)
					}
					req.Header.Set("X-Forwarded-For", "198.51.100."+string(rune('1'+i)))
					resp, err := srv.Client().Do(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if resp.StatusCode != want {
						t.Fatalf("request %d: %d, want %d (keyed by the peer, whatever the header)", i+1, resp.StatusCode, want)
					}
				}
				var warns []string
				for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
					var rec map[string]any
					if line == "" || json.Unmarshal([]byte(line), &rec) != nil {
						continue
					}
					if rec["msg"] == "ratekeeper: setup warning" && rec["level"] == "WARN" {
						e, _ := rec["error"].(string)
						warns = append(warns, e)
					}
				}
				if len(warns) != tc.warns {
					t.Fatalf("%d setup warnings, want %d: %q", len(warns), tc.warns, warns)
				}
				for _, w := range warns {
					for _, want := range []string{"X-Forwarded-For", "127.0.0.1", "keyfunc.TrustedProxies", "CheckForwardingFrom", "CheckForwarding(false)"} {
						if !strings.Contains(w, want) {
							t.Errorf("warning %q does not name %q", w, want)
						}
					}
					if strings.Contains(w, "198.51.100.") {
						t.Errorf("warning %q gives the header's value", w)
					}
				}
			})
		}
	}
}

// TestForwardingCheckDefaultNested: with the check on by default, a
// middleware nested in another (the README's login limit inside the
// global one) reported the same request a second time; and when the
// middleware further out had been given the proxies its keys trust
// (CheckForwardingFrom), as the documentation says to, the inner one,
// which knows of none, reported a request through a trusted proxy as if
// its header were ignored. A check that is on by default leaves a request
// a middleware further out decided to that one. Given explicitly, it
// checks as before. Through a real chi router and a ServeMux.
func TestForwardingCheckDefaultNested(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	trusting := keyfunc.Must(keyfunc.IP(keyfunc.TrustedProxies(proxies...)))
	for _, tc := range []struct {
		name       string
		key        keyfunc.Func
		outer      []middleware.Option
		inner      []middleware.Option
		wantOuter  int
		wantInner  int
		innerAlone int // the inner one's reports for a request it alone decides
	}{
		{"both by default", peerIP, nil, nil, 1, 0, 1},
		// The keys trust the proxy: alone, the inner one asks them and
		// says nothing either (it did, needlessly, before it asked the
		// keys: see TestForwardingCheckAsksTheKeys).
		{"outer given the proxies", trusting, []middleware.Option{middleware.CheckForwardingFrom("X-Forwarded-For", proxies...)}, nil, 0, 0, 0},
		{"outer off", peerIP, []middleware.Option{middleware.CheckForwarding(false)}, nil, 0, 0, 1},
		{"inner explicit", peerIP, nil, []middleware.Option{middleware.CheckForwarding(true)}, 1, 1, 1},
	} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(tc.name+"/"+mux, func(t *testing.T) {
				store, _ := newStore(t)
				var outerRep, innerRep reports
				outer := middleware.MustNew(store, []*policy.Policy{fixed("global", 100, time.Minute, tc.key)}, append(tc.outer, outerRep.handler())...)
				inner := middleware.MustNew(store, []*policy.Policy{fixed("login", 100, time.Minute, tc.key)}, append(tc.inner, innerRep.handler())...)
				var h http.Handler
				if mux == "chi" {
					r := chi.NewRouter()
					r.Use(outer.Handler)
					r.With(inner.Handler).Post("/login", ok)
					r.Get("/", ok)
					h = r
				} else {
					sm := http.NewServeMux()
					sm.Handle("POST /login", inner.Handler(ok))
					sm.Handle("GET /", ok)
					h = outer.Handler(sm)
				}
				for _, method := range []string{"POST", "GET", "POST"} {
					target := "/login"
					if method == "GET" {
						target = "/"
					}
					req := httptest.NewRequest(method, target, nil)
					req.RemoteAddr = "10.0.0.5:41000" // the proxy
					req.Header.Set("X-Forwarded-For", "203.0.113.7")
					w := httptest.NewRecorder()
					h.ServeHTTP(w, req)
					if w.Code != 200 {
						t.Fatalf("%s %s: %d", method, target, w.Code)
					}
				}
				if n := len(outerRep.forwarding()); n != tc.wantOuter {
					t.Errorf("outer: %d reports, want %d: %v", n, tc.wantOuter, outerRep.forwarding())
				}
				if n := len(innerRep.forwarding()); n != tc.wantInner {
					t.Errorf("inner: %d reports, want %d: %v", n, tc.wantInner, innerRep.forwarding())
				}
				// Alone, the inner one checks.
				req := httptest.NewRequest("POST", "/login", nil)
				req.RemoteAddr = "10.0.0.5:41000"
				req.Header.Set("X-Forwarded-For", "203.0.113.7")
				inner.Handler(ok).ServeHTTP(httptest.NewRecorder(), req)
				if n := len(innerRep.forwarding()); n != tc.innerAlone {
					t.Errorf("inner alone: %d reports in all, want %d: %v", n, tc.innerAlone, innerRep.forwarding())
				}
			})
		}
	}
}
