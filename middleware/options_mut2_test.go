package middleware_test

import (
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestOptionBoundsAtTheEdge: each option's documented bound, on both sides
// of its edge: a breaker of one failure needs a cooldown, and one of a
// nanosecond is one; a partition-key secret of 15 bytes is refused, one of
// 16 taken; a problem type may hold every letter and digit (the ends of
// the ranges included), and is checked from its first character.
func TestOptionBoundsAtTheEdge(t *testing.T) {
	store, _ := newStore(t)
	p := fixed("p", 1, time.Second, remote)
	for _, tc := range []struct {
		name string
		opt  middleware.Option
		want string // "" when the option is taken
	}{
		{"one failure, no cooldown", middleware.WithBreaker(1, 0), "middleware: WithBreaker: cooldown must be positive"},
		{"a nanosecond's cooldown", middleware.WithBreaker(5, time.Nanosecond), ""},
		{"15-byte secret", middleware.WithPartitionKey(make([]byte, 15)), "middleware: WithPartitionKey: secret must be at least 16 bytes"},
		{"16-byte secret", middleware.WithPartitionKey(make([]byte, 16)), ""},
		{"letters and digits", middleware.WithProblemType("https://example.com/azAZ09"), ""},
		{"leading space", middleware.WithProblemType(" about:blank"), "middleware: WithProblemType: URI is empty or holds characters a URI must percent-encode"},
	} {
		_, err := middleware.New(store, []*policy.Policy{p}, tc.opt)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: New error = %v, want none", tc.name, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("%s: New error = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestSkipPrefixesMapped: an IPv4-mapped prefix of at least 96 bits is the
// IPv4 prefix it maps (::ffff:10.0.0.0/104 is 10.0.0.0/8, all of it and no
// more; ::ffff:0.0.0.0/96 is every IPv4 peer), mapped peers included; a
// shorter one, or an IPv6 prefix that maps nothing, is kept as it is.
func TestSkipPrefixesMapped(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		in     []string
		out    []string
	}{
		{"::ffff:10.0.0.0/104", []string{"10.0.0.1:1", "10.200.0.1:1", "[::ffff:10.1.2.3]:1"}, []string{"11.0.0.1:1", "9.255.255.255:1"}},
		{"::ffff:0.0.0.0/96", []string{"192.0.2.1:1", "[::ffff:198.51.100.7]:1"}, []string{"[2001:db8::1]:1"}},
		{"::ffff:0.0.0.0/95", []string{"[::fffe:102:304]:1"}, []string{"192.0.2.1:1"}},
		{"2001:db8::/112", []string{"[2001:db8::1]:1"}, []string{"[2001:db9::1]:1", "[2001:db8::1:0]:1"}},
	} {
		skip := middleware.SkipPrefixes(netip.MustParsePrefix(tc.prefix))
		for want, addrs := range map[bool][]string{true: tc.in, false: tc.out} {
			for _, addr := range addrs {
				r := httptest.NewRequest("GET", "/", nil)
				r.RemoteAddr = addr
				if got := skip(r); got != want {
					t.Errorf("SkipPrefixes(%s) for %s = %v, want %v", tc.prefix, addr, got, want)
				}
			}
		}
	}
}
