package keyfunc_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// TestNoClientIPReasons: each reason ErrNoClientIP's doc lists yields an
// error matching it and ErrNoKey, and the key "".
func TestNoClientIPReasons(t *testing.T) {
	proxies := keyfunc.TrustedProxies(netip.MustParsePrefix("10.0.0.0/8"))
	none := func(context.Context) netip.Addr { return netip.Addr{} }
	for _, tt := range []struct {
		name       string
		opts       []keyfunc.IPOption
		remoteAddr string
		xff        []string
		reason     string // in the error's text
	}{
		{"RemoteAddr not an address", nil, "@", nil, "RemoteAddr is not an IP address"},
		{"trusted header missing", []keyfunc.IPOption{proxies}, "10.0.0.1:1", nil, "sent no forwarding header"},
		{"trusted header malformed", []keyfunc.IPOption{proxies}, "10.0.0.1:1", []string{"192.0.2.1, bogus"}, "malformed entry"},
		{"longer than MaxHops", []keyfunc.IPOption{proxies, keyfunc.MaxHops(3)}, "10.0.0.1:1", []string{"192.0.2.1, 10.0.0.4, 10.0.0.3, 10.0.0.2"}, "more trusted hops than MaxHops"},
		{"every hop trusted", []keyfunc.IPOption{proxies}, "10.0.0.1:1", []string{"10.0.0.3, 10.0.0.2"}, "every forwarding hop is a trusted proxy"},
		{"fewer entries than TrustedHops", []keyfunc.IPOption{keyfunc.TrustedHops(3)}, "10.0.0.1:1", []string{"192.0.2.1, 10.0.0.2"}, "fewer forwarding entries than TrustedHops"},
		{"FromContext found none", []keyfunc.IPOption{keyfunc.FromContext(none)}, "192.0.2.1:1", nil, "none in the request context"},
	} {
		f, err := keyfunc.IP(tt.opts...)
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tt.remoteAddr
		if tt.xff != nil {
			r.Header.Set("X-Forwarded-For", strings.Join(tt.xff, ", "))
		}
		k, err := f(r)
		if k != "" || !errors.Is(err, keyfunc.ErrNoClientIP) || !errors.Is(err, keyfunc.ErrNoKey) || !strings.Contains(err.Error(), tt.reason) {
			t.Errorf("%s: key %q, error %v; want \"\" and ErrNoClientIP saying %q", tt.name, k, err, tt.reason)
		}
	}
}
