package middleware_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	chimw "github.com/go-chi/chi/v5/middleware"
	"github.com/ratekeeper/ratekeeper/middleware"
)

// wrongPrefixConfig trusts 10.1.0.0/16 as its proxies: a load balancer
// anywhere else (10.0.0.5, or a proxy on the same host at 127.0.0.1) is
// not among them.
const wrongPrefixConfig = `
trusted_proxies: [10.1.0.0/16]
ip_source: x-forwarded-for
policies:
  - name: per-ip
    limit: 2
    window: 1m
`

// fourClients sends srv four requests from the local peer, 127.0.0.1,
// each forwarding another client in X-Forwarded-For, and returns their
// statuses.
func fourClients(t *testing.T, srv *httptest.Server) []int {
	t.Helper()
	var codes []int
	for _, client := range []string{"198.51.100.1", "198.51.100.2", "198.51.100.3", "198.51.100.4"} {
		req, err := http.NewRequest("GET", srv.URL+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Forwarded-For", client)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
	}
	return codes
}

// TestForwardingWrongTrustedPrefixReported: the most common
// misconfiguration behind a proxy is a trusted prefix that misses it.
// Every client is then keyed as the proxy and shares one limit: four
// clients behind a proxy at 127.0.0.1 got [200 200 429 429], and nothing
// said why (the check was off for a configuration that declares trusted
// proxies). The middleware now tells the error handler, once, naming the
// header, the peer and the trusted proxies it is not among, and never
// says there are no trusted proxies. Through a real server, behind chi
// and behind a ServeMux.
func TestForwardingWrongTrustedPrefixReported(t *testing.T) {
	for _, mux := range []string{"chi", "ServeMux"} {
		t.Run(mux, func(t *testing.T) {
			store, _ := newStore(t)
			var got reports
			m, err := middleware.FromConfig(store, mustConfig(t, wrongPrefixConfig), got.handler())
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(routedBy(mux, m))
			defer srv.Close()
			codes := fourClients(t, srv)
			// The check warns; it does not change what is decided.
			if got, want := fmt.Sprint(codes), "[200 200 429 429]"; got != want {
				t.Errorf("statuses %s, want %s (one shared limit)", got, want)
			}
			reps := got.forwarding()
			if len(reps) != 1 {
				t.Fatalf("%d forwarding reports, want 1: %v", len(reps), reps)
			}
			msg := reps[0].Error()
			for _, want := range []string{"X-Forwarded-For", "127.0.0.1", "not among the trusted proxies", "10.1.0.0/16", "trusted_proxies"} {
				if !strings.Contains(msg, want) {
					t.Errorf("report %q does not say %q", msg, want)
				}
			}
			if strings.Contains(msg, "no trusted prox") {
				t.Errorf("report %q says there are no trusted proxies; the configuration has one", msg)
			}
			for _, client := range []string{"198.51.100.1", "198.51.100.4"} {
				if strings.Contains(msg, client) {
					t.Errorf("report %q gives the header's value %s", msg, client)
				}
			}
		})
	}
}

// TestForwardingUntrustedPeerKinds: with trusted proxies declared, a
// forwarding header from a peer outside them is reported only when the
// peer's address is one a proxy of this server has and an internet
// client never does (private, loopback, link-local, unique local, shared
// address space); a public peer sending the header is more likely a
// client forging it, and a trusted peer is read as configured. Through a
// real chi router and a real ServeMux.
func TestForwardingUntrustedPeerKinds(t *testing.T) {
	for _, tc := range []struct {
		remoteAddr string
		want       string // the address the report names; "" for none
	}{
		{"10.0.0.5:41000", "10.0.0.5"},
		{"172.16.3.4:41000", "172.16.3.4"},
		{"192.168.1.2:41000", "192.168.1.2"},
		{"127.0.0.1:41000", "127.0.0.1"},
		{"169.254.10.1:41000", "169.254.10.1"},
		{"100.64.0.7:41000", "100.64.0.7"},
		{"[::ffff:10.0.0.5]:41000", "10.0.0.5"},
		{"[fd00::5]:41000", "fd00::5"},
		{"[fe80::1%eth0]:41000", "fe80::1"},
		{"[::1]:41000", "::1"},
		// Public: a client sending its own header.
		{"198.51.100.9:41000", ""},
		{"203.0.113.9:41000", ""},
		{"8.8.8.8:41000", ""},
		{"[2001:db8::1]:41000", ""},
		{"[2a00:1450::1]:41000", ""},
		// Trusted: its header is read.
		{"10.1.2.3:41000", ""},
		{"[::ffff:10.1.2.3]:41000", ""},
		// No peer address (a Unix socket): the key fails, no limit is shared.
		{"@", ""},
	} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(mux+" "+tc.remoteAddr, func(t *testing.T) {
				store, _ := newStore(t)
				var got reports
				m, err := middleware.FromConfig(store, mustConfig(t, wrongPrefixConfig), got.handler())
				if err != nil {
					t.Fatal(err)
				}
				h := routedBy(mux, m)
				for range 2 {
					req := httptest.NewRequest("GET", "/", nil)
					req.RemoteAddr = tc.remoteAddr
					req.Header.Set("X-Forwarded-For", "198.51.100.77")
					h.ServeHTTP(httptest.NewRecorder(), req)
				}
				reps := got.forwarding()
				if tc.want == "" {
					if len(reps) != 0 {
						t.Errorf("reported %v", reps)
					}
					return
				}
				if len(reps) != 1 {
					t.Fatalf("%d reports, want 1: %v", len(reps), reps)
				}
				if msg := reps[0].Error(); !strings.Contains(msg, "from "+tc.want+" ") {
					t.Errorf("report %q does not name the peer %s", msg, tc.want)
				}
			})
		}
	}
}

// TestForwardingUntrustedHeaderTheKeyReads: the report names the header
// the ip key reads (ip_source) when the request carries it, and another
// forwarding header when that is all it carries.
func TestForwardingUntrustedHeaderTheKeyReads(t *testing.T) {
	for _, tc := range []struct {
		source  string
		headers []string
		want    string
	}{
		{"forwarded", []string{"X-Forwarded-For", "Forwarded"}, "Forwarded"},
		{"header:X-Real-IP", []string{"X-Forwarded-For", "X-Real-IP"}, "X-Real-Ip"},
		{"header:CF-Connecting-IP", []string{"CF-Connecting-IP", "X-Forwarded-For"}, "Cf-Connecting-Ip"},
		{"header:CF-Connecting-IP", []string{"X-Forwarded-For"}, "X-Forwarded-For"},
		{"x-forwarded-for", []string{"Forwarded"}, "Forwarded"},
	} {
		t.Run(tc.source+" "+strings.Join(tc.headers, ","), func(t *testing.T) {
			store, _ := newStore(t)
			var got reports
			cfg := "trusted_proxies: [10.1.0.0/16]\nip_source: " + tc.source + "\n" + ipConfig
			m, err := middleware.FromConfig(store, mustConfig(t, cfg), got.handler())
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest("GET", "/", nil)
			req.RemoteAddr = "10.0.0.5:41000"
			for _, h := range tc.headers {
				v := "198.51.100.7"
				if h == "Forwarded" {
					v = "for=198.51.100.7"
				}
				req.Header.Set(h, v)
			}
			routedBy("chi", m).ServeHTTP(httptest.NewRecorder(), req)
			reps := got.forwarding()
			if len(reps) != 1 {
				t.Fatalf("%d reports, want 1: %v", len(reps), reps)
			}
			if msg := reps[0].Error(); !strings.Contains(msg, "carries "+tc.want+",") {
				t.Errorf("report %q does not name %s", msg, tc.want)
			}
		})
	}
}

// TestForwardingCheckedOnWithTrustedProxies: CheckForwarding(true) on a
// configuration with trusted proxies compares the peer with them: a
// request through a trusted proxy is not reported (before, it was, as if
// there were none: "no trusted proxies"), one through a private peer
// outside them is. trusted_hops reads every peer's header, so nothing is
// reported there; CheckForwarding(false) keeps the check off.
func TestForwardingCheckedOnWithTrustedProxies(t *testing.T) {
	serveFrom := func(h http.Handler, remoteAddr string) {
		req := httptest.NewRequest("GET", "/", nil)
		req.RemoteAddr = remoteAddr
		req.Header.Set("X-Forwarded-For", "198.51.100.7")
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	t.Run("CheckForwarding(true)", func(t *testing.T) {
		store, _ := newStore(t)
		var got reports
		m, err := middleware.FromConfig(store, mustConfig(t, wrongPrefixConfig), middleware.CheckForwarding(true), got.handler())
		if err != nil {
			t.Fatal(err)
		}
		h := routedBy("ServeMux", m)
		serveFrom(h, "10.1.0.9:41000")
		if reps := got.forwarding(); len(reps) != 0 {
			t.Fatalf("a request through a trusted proxy was reported: %v", reps)
		}
		serveFrom(h, "10.0.0.5:41000")
		if reps := got.forwarding(); len(reps) != 1 || !strings.Contains(reps[0].Error(), "10.0.0.5") {
			t.Fatalf("reports %v, want one naming 10.0.0.5", reps)
		}
	})
	t.Run("trusted_hops", func(t *testing.T) {
		store, _ := newStore(t)
		var got reports
		m, err := middleware.FromConfig(store, mustConfig(t, "trusted_hops: 1\n"+ipConfig), middleware.CheckForwarding(true), got.handler())
		if err != nil {
			t.Fatal(err)
		}
		serveFrom(routedBy("chi", m), "10.0.0.5:41000")
		if reps := got.forwarding(); len(reps) != 0 {
			t.Fatalf("reported %v; with trusted_hops every peer's header is read", reps)
		}
	})
	t.Run("CheckForwarding(false)", func(t *testing.T) {
		store, _ := newStore(t)
		var got reports
		m, err := middleware.FromConfig(store, mustConfig(t, wrongPrefixConfig), middleware.CheckForwarding(false), got.handler())
		if err != nil {
			t.Fatal(err)
		}
		serveFrom(routedBy("chi", m), "10.0.0.5:41000")
		if reps := got.forwarding(); len(reps) != 0 {
			t.Fatalf("reported %v with the check off", reps)
		}
	})
}

// TestForwardingTrustedPrefixFollowsReload: the check compares the peer
// with the trusted proxies of the configuration in force: a reload that
// moves them away from the proxy starts reporting, one that declares
// none reports any forwarding header as before, and one with trusted_hops
// stops the check.
func TestForwardingTrustedPrefixFollowsReload(t *testing.T) {
	serveFrom := func(h http.Handler, remoteAddr string) {
		req := httptest.NewRequest("GET", "/", nil)
		req.RemoteAddr = remoteAddr
		req.Header.Set("X-Forwarded-For", "198.51.100.7")
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	newMiddleware := func(t *testing.T, cfg string) (*middleware.Middleware, *reports) {
		store, _ := newStore(t)
		got := new(reports)
		m, err := middleware.FromConfig(store, mustConfig(t, cfg), got.handler())
		if err != nil {
			t.Fatal(err)
		}
		return m, got
	}
	t.Run("prefix moved", func(t *testing.T) {
		m, got := newMiddleware(t, "trusted_proxies: [10.0.0.0/16]\n"+ipConfig)
		h := routedBy("chi", m)
		serveFrom(h, "10.0.0.5:41000")
		if reps := got.forwarding(); len(reps) != 0 {
			t.Fatalf("through a trusted proxy, reported %v", reps)
		}
		if err := m.ApplyConfig(mustConfig(t, wrongPrefixConfig)); err != nil {
			t.Fatal(err)
		}
		serveFrom(h, "10.0.0.5:41000")
		if reps := got.forwarding(); len(reps) != 1 || !strings.Contains(reps[0].Error(), "10.1.0.0/16") {
			t.Fatalf("after the reload, reports %v, want one naming 10.1.0.0/16", reps)
		}
	})
	t.Run("proxies removed", func(t *testing.T) {
		m, got := newMiddleware(t, wrongPrefixConfig)
		h := routedBy("chi", m)
		serveFrom(h, "198.51.100.9:41000") // public: not reported with proxies declared
		if err := m.ApplyConfig(mustConfig(t, ipConfig)); err != nil {
			t.Fatal(err)
		}
		serveFrom(h, "198.51.100.9:41000")
		reps := got.forwarding()
		if len(reps) != 1 || strings.Contains(reps[0].Error(), "not among") {
			t.Fatalf("reports %v, want one of a configuration without proxies", reps)
		}
	})
	t.Run("trusted_hops", func(t *testing.T) {
		m, got := newMiddleware(t, wrongPrefixConfig)
		if err := m.ApplyConfig(mustConfig(t, "trusted_hops: 1\n"+ipConfig)); err != nil {
			t.Fatal(err)
		}
		serveFrom(routedBy("chi", m), "10.0.0.5:41000")
		if reps := got.forwarding(); len(reps) != 0 {
			t.Fatalf("reported %v under trusted_hops", reps)
		}
	})
}

// TestForwardingUntrustedRewrittenNotReported: with trusted proxies
// declared, a request whose RemoteAddr a middleware further out has
// already set to the client (chi's RealIP: no port) is keyed by that
// client, and is not reported; nor is a peer that a forwarding header
// names as the client (its own). Without RealIP the proxy at 127.0.0.1,
// outside the trusted prefix, is reported. Through a real server and a
// real chi router.
func TestForwardingUntrustedRewrittenNotReported(t *testing.T) {
	for _, up := range []bool{true, false} {
		store, _ := newStore(t)
		var got reports
		m, err := middleware.FromConfig(store, mustConfig(t, wrongPrefixConfig), got.handler())
		if err != nil {
			t.Fatal(err)
		}
		r := chi.NewRouter()
		if up {
			//lint:ignore SA1019 chi deprecates RealIP, but servers still install it: this is what they meet
			r.Use(chimw.RealIP)
		}
		r.Use(m.Handler)
		r.Get("/", func(http.ResponseWriter, *http.Request) {})
		srv := httptest.NewServer(r)
		req, err := http.NewRequest("GET", srv.URL+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Forwarded-For", "10.9.0.1")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		srv.Close()
		want := 1
		if up {
			want = 0
		}
		if reps := got.forwarding(); len(reps) != want {
			t.Errorf("RealIP %v: %d reports, want %d: %v", up, len(reps), want, reps)
		}
	}
	// A private peer that the header names as the client is the client.
	store, _ := newStore(t)
	var got reports
	m, err := middleware.FromConfig(store, mustConfig(t, wrongPrefixConfig), got.handler())
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/", nil)
	req.RemoteAddr = "10.9.0.1:4711"
	req.Header.Set("X-Forwarded-For", "10.9.0.1")
	routedBy("ServeMux", m).ServeHTTP(httptest.NewRecorder(), req)
	if reps := got.forwarding(); len(reps) != 0 {
		t.Errorf("a peer named as the client by the header was reported: %v", reps)
	}
}
