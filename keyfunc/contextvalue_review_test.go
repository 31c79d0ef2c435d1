package keyfunc_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// sessionKeyOf is a context key type whose type is comparable but whose
// field, an interface, can hold a value that is not: comparing two such
// keys then panics ("comparing uncomparable type").
type sessionKeyOf struct{ scope any }

// TestContextValue_KeyWhoseValueIsNotComparableIsRefused: ContextValue
// promises an error for a key that is not comparable, and that no Func of
// the package panics on a request. A key of a comparable type holding a
// slice passed the type check; every request whose context held a value
// under that key then panicked in the lookup (context.WithValue, checking
// the type only, had stored it without complaint).
func TestContextValue_KeyWhoseValueIsNotComparableIsRefused(t *testing.T) {
	key := sessionKeyOf{scope: []string{"user"}}
	r := httptest.NewRequest("GET", "/", nil)
	r = r.WithContext(context.WithValue(r.Context(), key, "alice"))
	f, err := keyfunc.ContextValue(key)
	if err == nil {
		var panicked any
		func() {
			defer func() { panicked = recover() }()
			_, _ = f(r)
		}()
		t.Fatalf("ContextValue(%#v) = Func, nil; want an error (the key is not comparable); the Func's panic on a request carrying the key: %v", key, panicked)
	}
	if want := fmt.Sprintf("keyfunc: ContextValue: key of type %T is not comparable", key); err.Error() != want {
		t.Fatalf("ContextValue error %q; want %q", err, want)
	}
	// A comparable value of the same type is still accepted.
	ok := sessionKeyOf{scope: "user"}
	r = httptest.NewRequest("GET", "/", nil)
	r = r.WithContext(context.WithValue(r.Context(), ok, "bob"))
	wantKey(t, keyfunc.Must(keyfunc.ContextValue(ok)), r, "bob", nil)
}
