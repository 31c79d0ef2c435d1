package middleware_test

import (
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestForwardingCheckHeaderOfSeveralLines: an ip key reading a proxy's
// own header (keyfunc.FromHeader) reads its last line, the one the
// proxy appended, past a line the client sent ("unknown"). Behind the
// proxy it trusts it keys each client apart, yet the forwarding check,
// which took away only the headers whose first line names an address,
// asked it about a copy still holding that header, found the key
// unchanged, and warned that the key was the proxy's address. Every
// line is looked at now: a correct setup is not reported, and a key that
// ignores the header still is.
func TestForwardingCheckHeaderOfSeveralLines(t *testing.T) {
	proxy := netip.MustParsePrefix("10.0.0.0/8")
	reading := keyfunc.Must(keyfunc.IP(keyfunc.TrustedProxies(proxy), keyfunc.FromHeader("X-Client-Ip")))
	for _, tc := range []struct {
		name    string
		key     keyfunc.Func
		reports int
	}{
		{"key reads the header", reading, 0},
		{"key of the peer", peerIP, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, _ := newStore(t)
			var got reports
			m := middleware.MustNew(store, []*policy.Policy{fixed("per-ip", 2, time.Minute, tc.key)}, got.handler())
			h := m.Handler(ok)
			var codes []int
			for _, client := range []string{"198.51.100.1", "198.51.100.2", "198.51.100.3"} {
				req := httptest.NewRequest("GET", "/", nil)
				req.RemoteAddr = "10.0.0.5:41000"
				req.Header.Set("X-Forwarded-For", client)
				req.Header.Add("X-Client-Ip", "unknown") // the client's own line
				req.Header.Add("X-Client-Ip", client)    // the proxy's
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				codes = append(codes, w.Code)
			}
			if tc.reports == 0 && codes[2] != 200 {
				t.Errorf("codes %v: the key does not key the clients apart", codes)
			}
			if reps := got.forwarding(); len(reps) != tc.reports {
				t.Errorf("%d reports, want %d: %v", len(reps), tc.reports, reps)
			}
		})
	}
}
