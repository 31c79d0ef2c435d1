package keyfunc_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// uidKey, an int64 ID with a String method, and principal, a struct with
// one, stand for what authentication middlewares store for their users;
// opaque is a Stringer whose String may be "" for a non-zero value.
type (
	uidKey    int64
	principal struct{ ID int64 }
	opaque    struct{ n int }
)

func (u uidKey) String() string    { return "user-" + strconv.FormatInt(int64(u), 10) }
func (p principal) String() string { return strconv.FormatInt(p.ID, 10) }
func (opaque) String() string      { return "" }

// TestContextValue_ZeroValueIsNoKey: an authentication middleware that
// stores the zero value of its ID type for anonymous requests (UserID(0),
// int64(0), a zero struct) gave every anonymous request the one key "0"
// (or "user-0"): a single bucket for all anonymous clients, which any of
// them could exhaust for the others, and the declared fallback (per IP)
// never ran. The zero value of any type is no value, as "" and a nil
// pointer already were: ErrNoContextValue, so that FirstOf falls back.
func TestContextValue_ZeroValueIsNoKey(t *testing.T) {
	kf := keyfunc.Must(keyfunc.ContextValue(authKey{}))
	for _, c := range []struct {
		name string
		v    any
	}{
		{"int", 0},
		{"int64", int64(0)},
		{"uint64", uint64(0)},
		{"int8", int8(0)},
		{"uint16", uint16(0)},
		{"uintptr", uintptr(0)},
		{"named int64", namedNum(0)},
		{"named int64 with String", uidKey(0)},
		{"zero struct with String", principal{}},
		{"pointer to a zero struct with String", &principal{}},
		{"named string", namedID("")},
		{"empty bytes", []byte{}},
		{"nil bytes", []byte(nil)},
		// Not zero, but String says nothing: no key either.
		{"non-zero Stringer writing nothing", opaque{n: 5}},
		{"pointer to a Stringer writing nothing", &account{}},
	} {
		got, err := kf(withAuth(c.v))
		if !errors.Is(err, keyfunc.ErrNoContextValue) || !errors.Is(err, keyfunc.ErrNoKey) || got != "" {
			t.Errorf("%s (%#v): key = %q, %v; want ErrNoContextValue and no key", c.name, c.v, got, err)
		}
	}
	// Values that are not zero keep their keys (an integer whose String
	// shows other text than its decimal, the digest of that decimal: see
	// contextvalue_redact_test.go).
	for _, c := range []struct {
		v    any
		want string
	}{
		{uidKey(7), digestOf(t, "7")},
		{uidKey(-1), digestOf(t, "-1")},
		{principal{ID: 7}, "7"},
		{&principal{ID: 7}, "7"},
		{int64(-1), "-1"},
		{uint8(1), "1"},
		{namedNum(1), "1"},
		{[]byte{0}, "\x00"},
	} {
		if got, err := kf(withAuth(c.v)); err != nil || got != c.want {
			t.Errorf("%#v: key = %q, %v; want %q", c.v, got, err, c.want)
		}
	}
}

// TestContextValue_AnonymousZeroFallsBackPerClient: the harm itself.
// Behind FirstOf(ContextValue, IP), two anonymous clients whose context
// holds UserID(0) shared one bucket; they now get their own, the same as
// requests with nothing in the context.
func TestContextValue_AnonymousZeroFallsBackPerClient(t *testing.T) {
	key := keyfunc.Must(keyfunc.FirstOf(keyfunc.Must(keyfunc.ContextValue(authKey{})), mustIP(t)))
	anon := func(addr string) string {
		r := newReq(addr)
		r = r.WithContext(context.WithValue(r.Context(), authKey{}, uidKey(0)))
		k, err := key(r)
		if err != nil {
			t.Fatalf("key of anonymous %s: %v", addr, err)
		}
		return k
	}
	a, b := anon("192.0.2.1:1000"), anon("192.0.2.2:1000")
	if a == b {
		t.Fatalf("anonymous clients 192.0.2.1 and 192.0.2.2 share the key %q; want one per client", a)
	}
	if a != "1:192.0.2.1" || b != "1:192.0.2.2" {
		t.Fatalf("anonymous keys %q, %q; want the IP fallback \"1:192.0.2.1\", \"1:192.0.2.2\"", a, b)
	}
}
