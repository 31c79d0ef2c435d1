package keyfunc_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

func TestNamespace_BoundsOfNs(t *testing.T) {
	for _, ns := range []string{"!", "~", strings.Repeat("n", keyfunc.MaxNamespaceLen)} {
		if _, err := keyfunc.Namespace(ns, constF("v")); err != nil {
			t.Errorf("Namespace(%q) error: %v; want it accepted", ns, err)
		}
	}
}

// token stands for a named byte-slice type another library keys users by.
type token []byte

func TestContextValue_NamedByteSlice(t *testing.T) {
	f := keyfunc.Must(keyfunc.ContextValue(authKey{}))
	wantKey(t, f, withAuth(token("t1")), "t1", nil)
	got, err := f(withAuth([]int{1}))
	if err == nil {
		t.Fatalf("key of an []int = %q, nil; want an error", got)
	}
}

// TestRoute_FromChiRouteContextWithoutPattern: a router that records the
// matched patterns in chi's route context but leaves r.Pattern empty (chi
// before it set r.Pattern) still gives the route.
func TestRoute_FromChiRouteContextWithoutPattern(t *testing.T) {
	rctx := chi.NewRouteContext()
	rctx.RoutePatterns = []string{"/users/{id}"}
	r := newReq("192.0.2.1:1")
	r = r.WithContext(context.WithValue(r.Context(), chi.RouteCtxKey, rctx))
	if r.Pattern != "" {
		t.Fatalf("r.Pattern = %q; want it empty", r.Pattern)
	}
	wantKey(t, keyfunc.Route(), r, "/users/{id}", nil)
}

// TestSecret_ErrorsAndEmptyValues: both hashes pass f's error through and
// treat "" as missing, never hashing it into a key.
func TestSecret_ErrorsAndEmptyValues(t *testing.T) {
	boom := errors.New("keyfunc_test: session store down")
	failing := func(*http.Request) (string, error) { return "", boom }
	hmacOf := func(f keyfunc.Func) keyfunc.Func {
		return keyfunc.Must(keyfunc.SecretHMAC([]byte("0123456789abcdef"), f))
	}
	for _, tc := range []struct {
		name string
		f    keyfunc.Func
		want error
	}{
		{"Secret, error", keyfunc.Secret(failing), boom},
		{"Secret, empty", keyfunc.Secret(constF("")), keyfunc.ErrNoKey},
		{"SecretHMAC, error", hmacOf(failing), boom},
		{"SecretHMAC, empty", hmacOf(constF("")), keyfunc.ErrNoKey},
	} {
		if got, err := tc.f(newReq("192.0.2.1:1")); !errors.Is(err, tc.want) || got != "" {
			t.Errorf("%s: key = %q, %v; want \"\", %v", tc.name, got, err, tc.want)
		}
	}
}

// TestNamespace_VisibleASCIIValueIsKeptRaw: '!' and '~', the ends of
// visible ASCII, are kept as they are; the bytes just outside are hashed.
func TestNamespace_VisibleASCIIValueIsKeptRaw(t *testing.T) {
	f := func(v string) keyfunc.Func { return keyfunc.Must(keyfunc.Namespace("ns", constF(v))) }
	wantKey(t, f("!~"), newReq("192.0.2.1:1"), "ns:!~", nil)
	for _, v := range []string{" ", "\x7f"} {
		if got, err := f(v)(newReq("192.0.2.1:1")); err != nil || !strings.HasPrefix(got, "ns#") {
			t.Errorf("Namespace key of %q = %q, %v; want it hashed", v, got, err)
		}
	}
}
