package replay

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
	"github.com/ratekeeper/ratekeeper/middleware"
)

// TestForwardedForLog replays Apache's proxy setup, whose log starts with
// the X-Forwarded-For header ("%{X-Forwarded-For}i %l %u %t ..."), under
// the ways a configuration names the client: the client is the one the
// middleware behind that proxy would have found. Two clients each send two
// requests, one of them also naming a spoofed address at the left of the
// list; a limit of 2 per minute per IP rejects nothing when the client is
// found, and rejects the second client's requests when every request is
// keyed on one address.
func TestForwardedForLog(t *testing.T) {
	const log = `203.0.113.7, 10.0.0.2 - - [10/Mar/2024:12:00:00 +0000] "GET / HTTP/1.1" 200 5
198.51.100.1, 203.0.113.7, 10.0.0.2 - - [10/Mar/2024:12:00:01 +0000] "GET / HTTP/1.1" 200 5
203.0.113.8, 10.0.0.2 - - [10/Mar/2024:12:00:02 +0000] "GET / HTTP/1.1" 200 5
198.51.100.2, 203.0.113.8, 10.0.0.2 - - [10/Mar/2024:12:00:03 +0000] "GET / HTTP/1.1" 200 5
`
	const policy = "policies:\n  - {name: ip, limit: 2, window: 1m}\n"
	for _, tc := range []struct {
		name, config string
		rejected     int64
		top          string
	}{
		// The proxy 10.0.0.2 is trusted: the client is the
		// first address from the right that is not theirs.
		{"trusted proxies", "trusted_proxies: [10.0.0.0/8]\nip_source: x-forwarded-for\n" + policy, 0, ""},
		// Two proxies in front (the load balancer, then 10.0.0.2): the
		// client is the second entry from the right.
		{"trusted hops", "trusted_hops: 2\n" + policy, 0, ""},
		// One hop trusted: the client is the proxy, for every request.
		{"one hop of two", "trusted_hops: 1\n" + policy, 2, "10.0.0.2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := logparse.NewReader(strings.NewReader(log), "xff.log", logparse.Options{})
			if err != nil {
				t.Fatal(err)
			}
			entries := readEntries(t, r)
			if n := len(entries); n != 4 {
				t.Fatalf("%d entries, want 4 (malformed %v)", n, r.Samples())
			}
			rep := replayEntries(t, tc.config, Options{}, entries)
			p := rep.Policies[0]
			if p.NoKey != 0 || p.Rejected != tc.rejected {
				t.Errorf("no key %d (%s), rejected %d; want 0 and %d", p.NoKey, p.NoKeyReason, p.Rejected, tc.rejected)
			}
			if tc.top != "" && (len(p.Top) == 0 || p.Top[0].Key != tc.top) {
				t.Errorf("most rejected keys %+v, want %s first", p.Top, tc.top)
			}
		})
	}
}

// TestForwardedForLogAgreesWithMiddleware replays an Apache log whose
// first field is the X-Forwarded-For header ("%{X-Forwarded-For}i %l %u
// %t ..."), holding one address on most lines (one proxy in front, which
// appends its peer), and sends the same requests through the middleware
// built from the same configuration: each with that header and, as peer,
// the header's last address (the replay's reading of such a line). The
// replay must reject and miss keys exactly where the middleware answers
// 429 and 400. Under trusted_hops: 1 the one-address lines had no key
// (the entry had no X-Forwarded-For header), where the middleware keys
// them by that address; under trusted proxies and with none, both ways
// agreed before too. Through a real chi router.
func TestForwardedForLogAgreesWithMiddleware(t *testing.T) {
	fields := []string{"203.0.113.7", "203.0.113.7", "198.51.100.1, 203.0.113.7", "203.0.113.8", "10.0.0.5", "2001:db8::9", "2001:db8::9, 10.0.0.2"}
	var log strings.Builder
	for i, f := range fields {
		fmt.Fprintf(&log, "%s - - [10/Mar/2024:12:00:%02d +0000] \"GET / HTTP/1.1\" 200 5\n", f, i)
	}
	const policies = "policies:\n  - {name: ip, limit: 2, window: 1m}\n"
	for _, tc := range []struct{ name, config string }{
		{"trusted hops", "trusted_hops: 1\n" + policies},
		{"two trusted hops", "trusted_hops: 2\n" + policies},
		{"trusted proxies", "trusted_proxies: [10.0.0.0/8]\nip_source: x-forwarded-for\n" + policies},
		{"no proxies", policies},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := logparse.NewReader(strings.NewReader(log.String()), "xff.log", logparse.Options{})
			if err != nil {
				t.Fatal(err)
			}
			entries := readEntries(t, r)
			if len(entries) != len(fields) {
				t.Fatalf("%d entries, want %d (malformed %v)", len(entries), len(fields), r.Samples())
			}
			p := replayEntries(t, tc.config, Options{}, entries).Policies[0]

			clock := algotest.NewClock(entries[0].Time)
			store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			m, err := middleware.FromConfig(store, parse(t, tc.config), middleware.WithClock(clock))
			if err != nil {
				t.Fatal(err)
			}
			router := chi.NewRouter()
			router.Use(m.Handler)
			router.Get("/", func(http.ResponseWriter, *http.Request) {})
			var rejected, noKey int64
			for i, f := range fields {
				clock.Set(entries[i].Time)
				req := httptest.NewRequest("GET", "/", nil)
				req.Header.Set("X-Forwarded-For", f)
				last := strings.TrimSpace(f[strings.LastIndexByte(f, ',')+1:])
				req.RemoteAddr = netip.AddrPortFrom(netip.MustParseAddr(last), 40000).String()
				w := httptest.NewRecorder()
				router.ServeHTTP(w, req)
				switch w.Code {
				case http.StatusTooManyRequests:
					rejected++
				case http.StatusBadRequest:
					noKey++
				}
			}
			if p.Rejected != rejected || p.NoKey != noKey {
				t.Errorf("replay: rejected %d, no key %d (%s); middleware: 429 %d, 400 %d", p.Rejected, p.NoKey, p.NoKeyReason, rejected, noKey)
			}
		})
	}
}
