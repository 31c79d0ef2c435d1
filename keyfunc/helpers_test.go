package keyfunc_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// newReq returns a GET request from remoteAddr with the given header lines
// (name, value, name, value, ...; a name may repeat).
func newReq(remoteAddr string, kv ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = remoteAddr
	for i := 0; i+1 < len(kv); i += 2 {
		r.Header.Add(kv[i], kv[i+1])
	}
	return r
}

// mustIP builds an IP Func or fails the test.
func mustIP(t testing.TB, opts ...keyfunc.IPOption) keyfunc.Func {
	t.Helper()
	f, err := keyfunc.IP(opts...)
	if err != nil {
		t.Fatalf("IP(...) error: %v", err)
	}
	return f
}

func prefixes(ss ...string) []netip.Prefix {
	ps := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		ps[i] = netip.MustParsePrefix(s)
	}
	return ps
}

// wantKey checks that f(r) returns want, or an error matching wantErr
// (then also ErrNoKey) when wantErr is not nil.
func wantKey(t *testing.T, f keyfunc.Func, r *http.Request, want string, wantErr error) {
	t.Helper()
	got, err := f(r)
	if wantErr != nil {
		if !errors.Is(err, wantErr) || !errors.Is(err, keyfunc.ErrNoKey) {
			t.Fatalf("key = %q, %v; want error matching %v and ErrNoKey", got, err, wantErr)
		}
		if got != "" {
			t.Fatalf("key = %q with error %v; want \"\"", got, err)
		}
		return
	}
	if err != nil || got != want {
		t.Fatalf("key = %q, %v; want %q, nil", got, err, want)
	}
}

// sinkKey keeps a key computed in an allocation test alive.
var sinkKey string

// wantRefused checks that a constructor, described by call, refused its
// arguments: no Func and exactly the error message msg.
func wantRefused(t *testing.T, call string, f keyfunc.Func, err error, msg string) {
	t.Helper()
	if f != nil || err == nil || err.Error() != msg {
		t.Fatalf("%s = %v, %v; want nil, %q", call, f != nil, err, msg)
	}
}
