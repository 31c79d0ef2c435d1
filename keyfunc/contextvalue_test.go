package keyfunc_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// authKey stands for another library's context key type.
type authKey struct{}

type userID struct{ n int }

func (u userID) String() string {
	if u.n == 0 {
		return ""
	}
	return "u" + string(rune('0'+u.n))
}

// withAuth returns a request whose context holds v under authKey, as an
// authentication middleware of another library stores its user.
func withAuth(v any) *http.Request {
	r := httptest.NewRequest("GET", "/", nil)
	return r.WithContext(context.WithValue(r.Context(), authKey{}, v))
}

func TestContextValue_ReadsAnotherMiddlewaresUser(t *testing.T) {
	kf, err := keyfunc.ContextValue(authKey{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		v    any
		want string
	}{
		{"string", "alice", "alice"},
		{"bytes", []byte("bob"), "bob"},
		{"int", 42, "42"},
		{"int64", int64(-7), "-7"},
		{"uint64", uint64(18446744073709551615), "18446744073709551615"},
		{"stringer", userID{3}, "u3"},
		// Named string and integer types, as authentication middlewares
		// declare for their user IDs, and every integer width.
		{"named string", namedID("alice"), "alice"},
		{"named int64", namedNum(-12), "-12"},
		{"int8", int8(-8), "-8"},
		{"int16", int16(1600), "1600"},
		{"uint8", uint8(255), "255"},
		{"uint16", uint16(65535), "65535"},
		{"uintptr", uintptr(9), "9"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := kf(withAuth(c.v))
			if err != nil || got != c.want {
				t.Fatalf("key = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestContextValue_MissingEmptyOrForeignIsNoKey(t *testing.T) {
	kf, err := keyfunc.ContextValue(authKey{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		v    any
	}{
		{"missing", nil},
		{"empty string", ""},
		{"empty stringer", userID{}},
		{"other type", 3.5},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			if c.v != nil {
				r = withAuth(c.v)
			}
			got, err := kf(r)
			if !errors.Is(err, keyfunc.ErrNoContextValue) || !errors.Is(err, keyfunc.ErrNoKey) || got != "" {
				t.Fatalf("key = %q, %v; want ErrNoContextValue (ErrNoKey family) and no key", got, err)
			}
		})
	}
	// A value under another key is not read.
	r := httptest.NewRequest("GET", "/", nil)
	r = r.WithContext(keyfunc.WithUser(r.Context(), "alice"))
	if got, err := kf(r); err == nil {
		t.Fatalf("read %q from WithUser's key", got)
	}
}

func TestContextValue_BadKeyFailsAtConstruction(t *testing.T) {
	if _, err := keyfunc.ContextValue(nil); err == nil {
		t.Error("nil key accepted")
	}
	if _, err := keyfunc.ContextValue([]string{"x"}); err == nil {
		t.Error("non-comparable key accepted")
	}
}

// namedID and namedNum stand for the named types an authentication
// middleware declares for its user IDs; account for a pointer Stringer.
type (
	namedID  string
	namedNum int64
	account  struct{ id string }
)

func (a *account) String() string { return a.id }

// TestContextValue_NilStringerIsNoKey: an anonymous request for which the
// authentication middleware stored a nil *T (whose String dereferences it)
// is ErrNoContextValue, not a panic: no Func of the package panics on a
// request.
func TestContextValue_NilStringerIsNoKey(t *testing.T) {
	kf, err := keyfunc.ContextValue(authKey{})
	if err != nil {
		t.Fatal(err)
	}
	r := withAuth((*account)(nil))
	got, err := func() (got string, err error) {
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("panicked: %v", v)
			}
		}()
		return kf(r)
	}()
	if !errors.Is(err, keyfunc.ErrNoContextValue) || got != "" {
		t.Fatalf("key = %q, %v; want ErrNoContextValue", got, err)
	}
	r = r.WithContext(context.WithValue(r.Context(), authKey{}, &account{id: "carol"}))
	if got, err := kf(r); err != nil || got != "carol" {
		t.Fatalf("key = %q, %v; want carol", got, err)
	}
}
