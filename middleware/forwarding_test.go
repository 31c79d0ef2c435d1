package middleware_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/go-chi/chi/v5"
	chimw "github.com/go-chi/chi/v5/middleware"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// reports collects what a middleware tells its error handler.
type reports struct {
	mu   sync.Mutex
	errs []error
}

func (c *reports) handler() middleware.Option {
	return middleware.WithErrorHandler(func(_ *http.Request, err error) {
		c.mu.Lock()
		c.errs = append(c.errs, err)
		c.mu.Unlock()
	})
}

// of returns the reports that are target.
func (c *reports) of(target error) []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []error
	for _, err := range c.errs {
		if errors.Is(err, target) {
			out = append(out, err)
		}
	}
	return out
}

// forwarding returns the reports that are ErrForwardingIgnored.
func (c *reports) forwarding() []error { return c.of(middleware.ErrForwardingIgnored) }

// twice returns the reports that are ErrCountedTwice.
func (c *reports) twice() []error { return c.of(middleware.ErrCountedTwice) }

const ipConfig = `
policies:
  - name: per-ip
    limit: 100
    window: 1m
`

// TestForwardingIgnoredReportedOnce: a server configured without trusted
// proxies and deployed behind one keys every client by the proxy's
// address (one limit shared by all), and nothing said so. A middleware
// built from such a configuration now tells the error handler, once,
// the first time a request carries a forwarding header, naming the header
// and the peer, and serves the requests as before. Through a real server,
// behind chi and behind a ServeMux, with concurrent requests.
func TestForwardingIgnoredReportedOnce(t *testing.T) {
	for _, mux := range []string{"chi", "ServeMux"} {
		t.Run(mux, func(t *testing.T) {
			store, _ := newStore(t)
			var got reports
			m, err := middleware.FromConfig(store, mustConfig(t, ipConfig), got.handler())
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(routedBy(mux, m))
			defer srv.Close()
			get := func(header, value string) *http.Response {
				req, err := http.NewRequest("GET", srv.URL+"/", nil)
				if err != nil {
					t.Fatal(err)
				}
				if header != "" {
					req.Header.Set(header, value)
				}
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp
			}
			if resp := get("", ""); resp.StatusCode != 200 {
				t.Fatalf("plain request: %d", resp.StatusCode)
			}
			if n := len(got.forwarding()); n != 0 {
				t.Fatalf("a request without forwarding headers was reported: %v", got.forwarding())
			}
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					if resp := get("X-Forwarded-For", "198.51.100.7"); resp.StatusCode != 200 {
						t.Errorf("forwarded request: %d", resp.StatusCode)
					}
				})
			}
			wg.Wait()
			// Keyed by the peer as before: 1 + 8 requests from 127.0.0.1.
			resp := get("Forwarded", "for=198.51.100.8")
			if got, want := resp.Header.Get("RateLimit"), `"per-ip";r=90;`; !strings.HasPrefix(got, want) {
				t.Errorf("RateLimit = %q, want the peer's count (%s...)", got, want)
			}
			reps := got.forwarding()
			if len(reps) != 1 {
				t.Fatalf("%d forwarding reports, want 1: %v", len(reps), reps)
			}
			msg := reps[0].Error()
			for _, want := range []string{"X-Forwarded-For", "127.0.0.1", "trusted_proxies", "keyfunc.TrustedProxies"} {
				if !strings.Contains(msg, want) {
					t.Errorf("report %q does not name %q", msg, want)
				}
			}
			if strings.Contains(msg, "198.51.100.7") {
				t.Errorf("report %q gives the header's value", msg)
			}
		})
	}
}

// TestForwardingCheckOnlyWhereItMeansSomething: configurations that
// declare their proxies, or key by no ip, are not checked; a middleware
// without an error handler serves as before; one built with New is
// checked by default (see TestForwardingCheckOnByDefaultInCode), unless
// CheckForwarding(false).
func TestForwardingCheckOnlyWhereItMeansSomething(t *testing.T) {
	configs := map[string]string{
		"trusted_proxies": "trusted_proxies: [10.0.0.0/8]\n" + ipConfig,
		"trusted_hops":    "trusted_hops: 1\n" + ipConfig,
		"no ip key": `
policies:
  - name: per-user
    limit: 100
    window: 1m
    key: [header:X-User]
`,
	}
	for name, text := range configs {
		t.Run(name, func(t *testing.T) {
			store, _ := newStore(t)
			var got reports
			m, err := middleware.FromConfig(store, mustConfig(t, text), got.handler())
			if err != nil {
				t.Fatal(err)
			}
			forwarded(m.Handler(ok), "X-Forwarded-For", "198.51.100.7", "X-User", "ann")
			if reps := got.forwarding(); len(reps) != 0 {
				t.Errorf("reported %v", reps)
			}
		})
	}
	t.Run("an ip key among alternatives", func(t *testing.T) {
		store, _ := newStore(t)
		var got reports
		m, err := middleware.FromConfig(store, mustConfig(t, `
policies:
  - name: per-user
    limit: 100
    window: 1m
    key: [header:X-User]
    fallback: [ip]
`), got.handler())
		if err != nil {
			t.Fatal(err)
		}
		forwarded(m.Handler(ok), "X-Real-IP", "198.51.100.7")
		if reps := got.forwarding(); len(reps) != 1 || !strings.Contains(reps[0].Error(), "X-Real-Ip") {
			t.Errorf("reported %v, want one report naming X-Real-Ip", reps)
		}
	})
	t.Run("without an error handler", func(t *testing.T) {
		store, _ := newStore(t)
		m, err := middleware.FromConfig(store, mustConfig(t, ipConfig), middleware.CheckForwarding(true))
		if err != nil {
			t.Fatal(err)
		}
		if w := forwarded(m.Handler(ok), "X-Forwarded-For", "198.51.100.7"); w.Code != 200 {
			t.Errorf("status %d", w.Code)
		}
	})
	t.Run("New", func(t *testing.T) {
		store, _ := newStore(t)
		p := fixed("plain", 100, 1e9, remote)
		var off, on, byDefault reports
		h := middleware.MustNew(store, []*policy.Policy{p}, middleware.CheckForwarding(false), off.handler()).Handler(ok)
		forwarded(h, "X-Forwarded-For", "198.51.100.7")
		if reps := off.forwarding(); len(reps) != 0 {
			t.Errorf("New with CheckForwarding(false) reported %v", reps)
		}
		for rep, opts := range map[*reports][]middleware.Option{
			&on:        {middleware.CheckForwarding(true), on.handler()},
			&byDefault: {byDefault.handler()},
		} {
			h = middleware.MustNew(store, []*policy.Policy{p}, opts...).Handler(ok)
			forwarded(h, "X-Forwarded-For", "198.51.100.7")
			forwarded(h, "Forwarded", "for=198.51.100.7")
			if reps := rep.forwarding(); len(reps) != 1 {
				t.Errorf("New (%d options): %d reports, want 1: %v", len(opts), len(reps), reps)
			}
		}
	})
	t.Run("CheckForwarding(false) over a configuration", func(t *testing.T) {
		store, _ := newStore(t)
		var got reports
		m, err := middleware.FromConfig(store, mustConfig(t, ipConfig), middleware.CheckForwarding(false), got.handler())
		if err != nil {
			t.Fatal(err)
		}
		forwarded(m.Handler(ok), "X-Forwarded-For", "198.51.100.7")
		// A reload keeps the caller's choice.
		if err := m.ApplyConfig(mustConfig(t, ipConfig)); err != nil {
			t.Fatal(err)
		}
		forwarded(m.Handler(ok), "X-Forwarded-For", "198.51.100.7")
		if reps := got.forwarding(); len(reps) != 0 {
			t.Errorf("reported %v", reps)
		}
	})
}

// TestForwardingCheckFollowsReload: declaring the proxies in a reloaded
// configuration ends the check; removing them starts it again.
func TestForwardingCheckFollowsReload(t *testing.T) {
	store, _ := newStore(t)
	var got reports
	m, err := middleware.FromConfig(store, mustConfig(t, ipConfig), got.handler())
	if err != nil {
		t.Fatal(err)
	}
	h := m.Handler(ok)
	if err := m.ApplyConfig(mustConfig(t, "trusted_proxies: [10.0.0.0/8]\n"+ipConfig)); err != nil {
		t.Fatal(err)
	}
	forwarded(h, "X-Forwarded-For", "198.51.100.7")
	if reps := got.forwarding(); len(reps) != 0 {
		t.Fatalf("with trusted proxies reloaded, reported %v", reps)
	}
	if err := m.ApplyConfig(mustConfig(t, ipConfig)); err != nil {
		t.Fatal(err)
	}
	forwarded(h, "X-Forwarded-For", "198.51.100.7")
	if reps := got.forwarding(); len(reps) != 1 {
		t.Fatalf("with the proxies removed again, %d reports, want 1: %v", len(reps), reps)
	}
}

// forwarded serves one GET / from 192.0.2.1 with the given header pairs.
func forwarded(h http.Handler, kv ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", "/", nil)
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Set(kv[i], kv[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// TestForwardingAppliedUpstreamNotReported: a middleware further out that
// has already taken the client's address from a forwarding header (chi's
// RealIP, gorilla's ProxyHeaders) leaves RemoteAddr as a bare address,
// which the ip key reads: the clients do not share the proxy's limit, so
// the header is no misconfiguration and is not reported. Before, the
// report fired behind chi's RealIP on the first forwarded request. Through
// a real server and a real chi router; without RealIP the report still
// comes.
func TestForwardingAppliedUpstreamNotReported(t *testing.T) {
	//lint:ignore SA1019 chi deprecates RealIP (it trusts any client's header), but servers still install it: this is what they meet
	realIP := chimw.RealIP
	upstreamForwarding(t, realIP, "X-Forwarded-For", "198.51.100.7", "198.51.100.8")
}

// upstreamForwarding serves three requests through a real server and a
// real chi router, with and without upstream in front of a middleware
// that checks forwarding: from client a, from b, from a again, each
// named in header. With upstream, each client has its own count and
// nothing is reported; without, they share the peer's count and the
// header is reported once.
func upstreamForwarding(t *testing.T, upstream func(http.Handler) http.Handler, header, a, b string) {
	t.Helper()
	for _, up := range []bool{true, false} {
		store, _ := newStore(t)
		var got reports
		m, err := middleware.FromConfig(store, mustConfig(t, ipConfig), got.handler())
		if err != nil {
			t.Fatal(err)
		}
		r := chi.NewRouter()
		if up {
			r.Use(upstream)
		}
		r.Use(m.Handler)
		r.Get("/", func(w http.ResponseWriter, _ *http.Request) {})
		srv := httptest.NewServer(r)
		for i, client := range []string{a, b, a} {
			req, err := http.NewRequest("GET", srv.URL+"/", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set(header, client)
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			want := []string{`"per-ip";r=99;`, `"per-ip";r=99;`, `"per-ip";r=98;`}[i]
			if !up {
				want = []string{`"per-ip";r=99;`, `"per-ip";r=98;`, `"per-ip";r=97;`}[i]
			}
			if got := resp.Header.Get("RateLimit"); !strings.HasPrefix(got, want) {
				t.Errorf("upstream %v, request %d: RateLimit = %q, want %s...", up, i, got, want)
			}
		}
		srv.Close()
		want := 1
		if up {
			want = 0
		}
		if reps := got.forwarding(); len(reps) != want {
			t.Errorf("upstream %v: %d forwarding reports, want %d: %v", up, len(reps), want, reps)
		}
	}
}
