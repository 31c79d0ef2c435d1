package main

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// TestSampleRoutes: what the package documentation and the sample's
// comments say of the routes: POST /login counts under login per address
// and account, anonymous logins per address alone; GET /search counts a
// Basic auth user (taken on trust) under search-daily and does not count
// anonymous requests under it; GET /fail answers 500.
func TestSampleRoutes(t *testing.T) {
	s := sampleServer(t)
	srv := httptest.NewServer(s)
	defer srv.Close()
	do := func(method, path string, set func(*http.Request)) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		if set != nil {
			set(req)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	as := func(user string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("X-Login-User", user) }
	}
	cfg, err := policy.Load("ratekeeper.yaml") // for the limit, as the file says (the server reads a copy)
	if err != nil {
		t.Fatal(err)
	}
	var limit int64
	for _, p := range cfg.Policies {
		if p.Name() == "login" {
			limit = p.Spec().Limit
		}
	}
	if limit == 0 {
		t.Fatal("the sample has no login policy")
	}
	// ann uses up the login policy; bob, from the same address, still logs in.
	for i := range limit {
		if resp := do("POST", "/login", as("ann")); resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("RateLimit-Policy"), `"login";q=5;w=60`) {
			t.Fatalf("ann's login %d: %d %q", i+1, resp.StatusCode, resp.Header.Get("RateLimit-Policy"))
		}
	}
	if resp := do("POST", "/login", as("ann")); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("ann's login %d: %d, want 429", limit+1, resp.StatusCode)
	}
	if resp := do("POST", "/login", as("bob")); resp.StatusCode != 200 {
		t.Errorf("bob's first login from ann's address: %d, want 200", resp.StatusCode)
	}
	// Anonymous logins: the address alone, its own count.
	for i := range limit {
		if resp := do("POST", "/login", nil); resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("RateLimit-Policy"), `"login";`) {
			t.Fatalf("anonymous login %d: %d %q, want 200 under login", i+1, resp.StatusCode, resp.Header.Get("RateLimit-Policy"))
		}
	}
	if resp := do("POST", "/login", nil); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("anonymous login %d: %d, want 429", limit+1, resp.StatusCode)
	}
	// /search: a signed-in user under search-daily, an anonymous request not.
	resp := do("GET", "/search", func(r *http.Request) { r.SetBasicAuth("alice", "any password") })
	if got := resp.Header.Get("RateLimit-Policy"); resp.StatusCode != 200 || !strings.Contains(got, `"search-daily";q=2000;w=86400`) {
		t.Errorf("GET /search as alice: %d %q, want 200 under search-daily", resp.StatusCode, got)
	}
	resp = do("GET", "/search", nil)
	if got := resp.Header.Get("RateLimit-Policy"); resp.StatusCode != 200 || strings.Contains(got, "search-daily") || got == "" {
		t.Errorf("anonymous GET /search: %d %q, want 200 under the other policies only", resp.StatusCode, got)
	}
	if resp := do("GET", "/fail", nil); resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("GET /fail: %d, want 500", resp.StatusCode)
	}
}

// TestSampleIgnoresUntrustedForwarding: the sample's comment on
// trusted_proxies: only requests from those addresses have their
// X-Forwarded-For read; anyone else (here 127.0.0.1, the test's client) is
// keyed by the address it connects from, whatever it sends. Requests
// claiming two different clients share one count.
func TestSampleIgnoresUntrustedForwarding(t *testing.T) {
	s := sampleServer(t)
	srv := httptest.NewServer(s)
	defer srv.Close()
	var got []string
	for _, xff := range []string{"203.0.113.1", "203.0.113.2", ""} {
		req, _ := http.NewRequest("GET", srv.URL+"/", nil)
		if xff != "" {
			req.Header.Set("X-Forwarded-For", xff)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got = append(got, resp.Header.Get("RateLimit"))
	}
	// Three requests of one client on a clock that stands still: the
	// per-minute policy's remaining goes 299, 298, 297.
	for i, want := range []string{`"per-minute";r=299;`, `"per-minute";r=298;`, `"per-minute";r=297;`} {
		if !strings.Contains(got[i], want) {
			t.Errorf("request %d: RateLimit %q, want %s (one client, whatever X-Forwarded-For says)", i+1, got[i], want)
		}
	}
}

// TestSampleClientKeys: the sample's comments on who a client is.
// trusted_proxies (10.0.0.0/8 and 198.51.100.254): a request from one of
// them is keyed by the X-Forwarded-For client, from anyone else by its own
// address; ipv6_prefix 64: the addresses of one /64 are one client;
// ipv4_prefix 32: each IPv4 address is one.
func TestSampleClientKeys(t *testing.T) {
	s := sampleServer(t)
	// remaining returns per-minute's remaining after a GET / from remote
	// with X-Forwarded-For xff ("" for none), on a clock that stands still.
	remaining := func(remote, xff string) string {
		t.Helper()
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote
		if xff != "" {
			r.Header.Set("X-Forwarded-For", xff)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		h := w.Header().Get("RateLimit")
		_, after, ok := strings.Cut(h, `"per-minute";r=`)
		if w.Code != 200 || !ok {
			t.Fatalf("GET / from %s (X-Forwarded-For %q): %d %q", remote, xff, w.Code, h)
		}
		r0, _, _ := strings.Cut(after, ";")
		return r0
	}
	for _, step := range []struct {
		remote, xff, want string
		why               string
	}{
		{"10.1.2.3:4000", "203.0.113.9", "299", "through a trusted proxy: the forwarded client's first request"},
		{"198.51.100.254:4000", "203.0.113.9", "298", "through the other trusted proxy: the same client"},
		{"10.9.9.9:4000", "203.0.113.10", "299", "another forwarded client"},
		{"192.0.2.50:4000", "203.0.113.9", "299", "an untrusted peer's header ignored: the peer is the client"},
		{"198.51.100.253:4000", "203.0.113.9", "299", "the address beside the trusted one is not trusted"},
		{"[2001:db8:1:2::1]:4000", "", "299", "an IPv6 client"},
		{"[2001:db8:1:2:ffff::7]:4000", "", "298", "the same /64"},
		{"[2001:db8:1:3::1]:4000", "", "299", "the next /64"},
		{"192.0.2.1:4000", "", "299", "an IPv4 client"},
		{"192.0.2.2:4000", "", "299", "its neighbour: /32, another client"},
	} {
		if got := remaining(step.remote, step.xff); got != step.want {
			t.Errorf("%s (from %s, X-Forwarded-For %q): per-minute r=%s, want r=%s", step.why, step.remote, step.xff, got, step.want)
		}
	}
}

// sampleServer returns the example's server on a copy of the sample file,
// on a memory store whose clock stands still, its file never reloaded;
// it is closed when the test ends.
func sampleServer(t *testing.T) *server {
	t.Helper()
	_, path := sampleFile(t)
	return quietServer(t, path, algotest.NewClock(time.Unix(1_700_000_040, 0)))
}

// quietServer returns the example's server on the file at path, on a
// memory store reading clock, logging nothing, its file never reloaded
// (a debounce of an hour); the server and the store are closed when the
// test ends.
func quietServer(t *testing.T, path string, clock algorithms.Clock) *server {
	t.Helper()
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	s, err := newServer(path, serverOptions{store: store, reg: prometheus.NewRegistry(), clock: clock,
		log: slog.New(slog.DiscardHandler), reload: []reload.Option{reload.WithDebounce(time.Hour)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
