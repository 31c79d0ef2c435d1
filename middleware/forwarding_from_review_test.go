package middleware_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestCheckForwardingFromWrongPrefix: the walkthrough's setup in code,
// keyfunc.IP(keyfunc.TrustedProxies(10.1.0.0/16),
// keyfunc.FromXForwardedFor()) behind a proxy outside that prefix: four
// clients got [200 200 429 429] and no warning, and CheckForwarding(true)
// could not help (it takes the keys to trust no proxy, and so reports the
// requests of a correct setup too). CheckForwardingFrom gives the check
// the proxies the keys trust: the wrong prefix is reported once, naming
// the header, the peer and the prefix; the right one is not. Through a
// real server, behind chi and behind a ServeMux.
func TestCheckForwardingFromWrongPrefix(t *testing.T) {
	for _, tc := range []struct {
		name    string
		proxies []netip.Prefix
		codes   string
		reports int
	}{
		{"wrong prefix", []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}, "[200 200 429 429]", 1},
		{"right prefix", []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("127.0.0.0/8")}, "[200 200 200 200]", 0},
	} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(tc.name+" "+mux, func(t *testing.T) {
				store, _ := newStore(t)
				ip := keyfunc.Must(keyfunc.IP(keyfunc.TrustedProxies(tc.proxies...), keyfunc.FromXForwardedFor()))
				perIP := policy.Must(policy.PerMinute("per-ip", 2, ip))
				var got reports
				m, err := middleware.New(store, []*policy.Policy{perIP},
					middleware.CheckForwardingFrom("X-Forwarded-For", tc.proxies...), got.handler())
				if err != nil {
					t.Fatal(err)
				}
				srv := httptest.NewServer(routedBy(mux, m))
				defer srv.Close()
				codes := fourClients(t, srv)
				if got := fmt.Sprint(codes); got != tc.codes {
					t.Errorf("statuses %s, want %s", got, tc.codes)
				}
				reps := got.forwarding()
				if len(reps) != tc.reports {
					t.Fatalf("%d forwarding reports, want %d: %v", len(reps), tc.reports, reps)
				}
				if tc.reports == 0 {
					return
				}
				msg := reps[0].Error()
				for _, want := range []string{"X-Forwarded-For", "from 127.0.0.1 ", "not among the trusted proxies", "10.1.0.0/16", "keyfunc.TrustedProxies"} {
					if !strings.Contains(msg, want) {
						t.Errorf("report %q does not say %q", msg, want)
					}
				}
				if strings.Contains(msg, "no trusted prox") {
					t.Errorf("report %q says there are no trusted proxies", msg)
				}
			})
		}
	}
}

// TestCheckForwardingFromOptions: CheckForwardingFrom refuses what names
// no proxy or no header, and, like CheckForwarding, the last of the two
// given decides whether the check is on; proxies it names are kept over
// those of a configuration, built from or applied.
func TestCheckForwardingFromOptions(t *testing.T) {
	p10 := netip.MustParsePrefix("10.1.0.0/16")
	for _, tc := range []struct {
		name    string
		opt     middleware.Option
		wantErr string
	}{
		{"no prefix", middleware.CheckForwardingFrom("X-Forwarded-For"), "no prefix"},
		{"invalid prefix", middleware.CheckForwardingFrom("X-Forwarded-For", p10, netip.Prefix{}), "prefix 1 is invalid"},
		{"no header", middleware.CheckForwardingFrom("", p10), "header"},
		{"bad header", middleware.CheckForwardingFrom("X Forwarded", p10), `"X Forwarded"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, _ := newStore(t)
			_, err := middleware.New(store, []*policy.Policy{fixed("p", 10, 1e9, remote)}, tc.opt)
			if err == nil || !strings.Contains(err.Error(), "CheckForwardingFrom") || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("New: %v, want an error of CheckForwardingFrom saying %s", err, tc.wantErr)
			}
		})
	}

	serveFrom := func(h http.Handler, remoteAddr string) {
		req := httptest.NewRequest("GET", "/", nil)
		req.RemoteAddr = remoteAddr
		req.Header.Set("X-Forwarded-For", "198.51.100.7")
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	t.Run("CheckForwarding(false) last", func(t *testing.T) {
		store, _ := newStore(t)
		var got reports
		m := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, 1e9, remote)},
			middleware.CheckForwardingFrom("X-Forwarded-For", p10), middleware.CheckForwarding(false), got.handler())
		serveFrom(routedBy("chi", m), "10.0.0.5:41000")
		if reps := got.forwarding(); len(reps) != 0 {
			t.Errorf("reported %v with the check turned off", reps)
		}
	})
	t.Run("CheckForwarding(true) keeps the proxies", func(t *testing.T) {
		store, _ := newStore(t)
		var got reports
		m := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, 1e9, remote)},
			middleware.CheckForwardingFrom("X-Forwarded-For", p10), middleware.CheckForwarding(true), got.handler())
		h := routedBy("chi", m)
		serveFrom(h, "10.1.0.9:41000")
		if reps := got.forwarding(); len(reps) != 0 {
			t.Fatalf("a request through a named proxy was reported: %v", reps)
		}
		serveFrom(h, "10.0.0.5:41000")
		if reps := got.forwarding(); len(reps) != 1 {
			t.Fatalf("%d reports, want 1: %v", len(reps), reps)
		}
	})
	t.Run("over a configuration", func(t *testing.T) {
		// The file trusts 10.1.0.0/16 and reads X-Real-IP; the code
		// names 10.0.0.0/16 and X-Forwarded-For to the check.
		const cfg = "trusted_proxies: [10.1.0.0/16]\nip_source: header:X-Real-IP\n" + ipConfig
		for _, order := range []string{"before", "after"} {
			t.Run(order, func(t *testing.T) {
				store, _ := newStore(t)
				var got reports
				copts, err := middleware.ConfigOptions(mustConfig(t, cfg), nil)
				if err != nil {
					t.Fatal(err)
				}
				from := middleware.CheckForwardingFrom("X-Forwarded-For", netip.MustParsePrefix("10.0.0.0/16"))
				opts := append([]middleware.Option{from}, copts...)
				if order == "after" {
					opts = append(copts, from)
				}
				m := middleware.MustNew(store, mustConfig(t, cfg).Policies, append(opts, got.handler())...)
				h := routedBy("chi", m)
				serveFrom(h, "10.0.0.5:41000")
				if err := m.ApplyConfig(mustConfig(t, cfg)); err != nil {
					t.Fatal(err)
				}
				serveFrom(h, "10.0.0.5:41000")
				if reps := got.forwarding(); len(reps) != 0 {
					t.Fatalf("a request through a proxy named to the check was reported: %v", reps)
				}
				// Through a proxy the file trusts and the check was not
				// told of: the keys read its X-Real-IP, so no client
				// shares its limit, and nothing is reported (it was,
				// needlessly, before the check asked the keys).
				req := httptest.NewRequest("GET", "/", nil)
				req.RemoteAddr = "10.1.0.9:41000"
				req.Header.Set("X-Real-IP", "198.51.100.7")
				h.ServeHTTP(httptest.NewRecorder(), req)
				if reps := got.forwarding(); len(reps) != 0 {
					t.Fatalf("a request through a proxy the keys trust was reported: %v", reps)
				}
				// Through one neither trusts: the report compares it
				// with the prefixes named to the check.
				req = httptest.NewRequest("GET", "/", nil)
				req.RemoteAddr = "10.2.0.9:41000"
				req.Header.Set("X-Real-IP", "198.51.100.7")
				h.ServeHTTP(httptest.NewRecorder(), req)
				reps := got.forwarding()
				if len(reps) != 1 || !strings.Contains(reps[0].Error(), "carries X-Real-Ip,") || !strings.Contains(reps[0].Error(), "10.0.0.0/16") {
					t.Fatalf("reports %v, want one naming X-Real-Ip and 10.0.0.0/16", reps)
				}
			})
		}
	})
}

// TestCheckForwardingOnInCodeSaysWhatItKnows: CheckForwarding(true) on a
// middleware built in code takes its ip keys to trust no proxy; its
// report says that is what the check was told, and how to name the
// proxies when the keys do trust some, rather than stating that none
// are declared.
func TestCheckForwardingOnInCodeSaysWhatItKnows(t *testing.T) {
	store, _ := newStore(t)
	var got reports
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, 1e9, remote)}, middleware.CheckForwarding(true), got.handler())
	forwarded(routedBy("ServeMux", m), "X-Forwarded-For", "198.51.100.7")
	reps := got.forwarding()
	if len(reps) != 1 {
		t.Fatalf("%d reports, want 1: %v", len(reps), reps)
	}
	msg := reps[0].Error()
	for _, want := range []string{"192.0.2.1", "X-Forwarded-For", "CheckForwardingFrom", "keyfunc.TrustedProxies"} {
		if !strings.Contains(msg, want) {
			t.Errorf("report %q does not say %q", msg, want)
		}
	}
}

// Keys that trust the proxies of 10.1.0.0/16, and a load balancer at
// 10.0.0.5, outside them: its X-Forwarded-For is ignored, and every
// client shares its count. Given the same prefixes, the check says so,
// once.
func ExampleCheckForwardingFrom() {
	at := time.Unix(1_700_000_040, 0) // a frozen clock, for the output
	store, _ := algorithms.NewMemoryStore(algorithms.WithClock(algorithms.ClockFunc(func() time.Time { return at })))
	defer store.Close()
	proxies := []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}
	ip := keyfunc.Must(keyfunc.IP(keyfunc.TrustedProxies(proxies...), keyfunc.FromXForwardedFor()))
	perIP := policy.Must(policy.PerMinute("per-ip", 100, ip))
	m := middleware.MustNew(store, []*policy.Policy{perIP},
		middleware.CheckForwardingFrom("X-Forwarded-For", proxies...),
		middleware.WithErrorHandler(func(_ *http.Request, err error) {
			if errors.Is(err, middleware.ErrForwardingIgnored) {
				fmt.Println("warning: 10.0.0.5 is not among the trusted proxies")
			}
		}))
	h := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for _, client := range []string{"198.51.100.7", "203.0.113.9"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = "10.0.0.5:41000" // the load balancer
		r.Header.Set("X-Forwarded-For", client)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Println(client, w.Header().Get("RateLimit"))
	}
	// Output:
	// warning: 10.0.0.5 is not among the trusted proxies
	// 198.51.100.7 "per-ip";r=99;t=120
	// 203.0.113.9 "per-ip";r=98;t=90
}

// TestCheckForwardingFromEveryProblem: New reports every problem of a
// configuration at once, and so does each option of it that takes
// several values (keyfunc.TrustedProxies names each invalid prefix);
// CheckForwardingFrom named its first problem only (an invalid header
// hid the invalid prefixes, and a second invalid prefix the first's
// index told nothing of). It names each now, one per line.
func TestCheckForwardingFromEveryProblem(t *testing.T) {
	store, _ := newStore(t)
	p10 := netip.MustParsePrefix("10.0.0.0/8")
	_, err := middleware.New(store, []*policy.Policy{fixed("p", 1, time.Minute, peerIP)},
		middleware.CheckForwardingFrom("X Forwarded", netip.Prefix{}, p10, netip.Prefix{}))
	want := []string{
		`middleware: CheckForwardingFrom: header "X Forwarded" is not a valid header name`,
		"middleware: CheckForwardingFrom: prefix 0 is invalid",
		"middleware: CheckForwardingFrom: prefix 2 is invalid",
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("New = %v, want:\n%s", err, strings.Join(want, "\n"))
	}
	_, err = middleware.New(store, []*policy.Policy{fixed("p", 1, time.Minute, peerIP)},
		middleware.CheckForwardingFrom(""))
	want = []string{
		"middleware: CheckForwardingFrom: no prefix given (for keys that trust no proxy, the check is on by default)",
		`middleware: CheckForwardingFrom: header "" is not a valid header name`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("New = %v, want:\n%s", err, strings.Join(want, "\n"))
	}
}
