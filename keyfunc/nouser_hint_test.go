package keyfunc_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// TestNoUserHintsAtTheMountOrder: a limiter mounted before the
// authentication middleware that sets the user finds no user on any
// request, and the error said only "no user ID in the request context",
// which reads as a client's fault. ErrNoUser (and ErrNoContextValue, for
// another library's middleware) now asks whether the limiter is mounted
// before that middleware, as ErrNoRoute asks whether it is placed after
// routing. The text is the sentinel's own, the same for every request:
// nothing of the request (its headers, cookies, path, or a user stored
// under another key) gets into it.
func TestNoUserHintsAtTheMountOrder(t *testing.T) {
	type otherKey struct{}
	ctxKey, err := keyfunc.ContextValue(otherKey{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		f    keyfunc.Func
		want error
		hint string
	}{
		{"User", keyfunc.User(), keyfunc.ErrNoUser, "is the limiter mounted before the authentication middleware that calls keyfunc.WithUser?"},
		{"ContextValue", ctxKey, keyfunc.ErrNoContextValue, "is the limiter mounted before the middleware that stores it?"},
	} {
		r := httptest.NewRequest("GET", "/secret-path?token=s3cr3t", nil)
		r.Header.Set("Authorization", "Bearer s3cr3t")
		r.Header.Set("Cookie", "session=s3cr3t")
		r = r.WithContext(context.WithValue(r.Context(), struct{ k string }{"u"}, "alice-s3cr3t"))
		_, err := tc.f(r)
		if !errors.Is(err, tc.want) || !errors.Is(err, keyfunc.ErrNoKey) || err != tc.want {
			t.Errorf("%s: error %v, want %v itself", tc.name, err, tc.want)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, tc.hint) {
			t.Errorf("%s: error %q gives no hint at the mount order, want %q in it", tc.name, msg, tc.hint)
		}
		for _, leak := range []string{"s3cr3t", "secret-path", "alice"} {
			if strings.Contains(err.Error(), leak) {
				t.Errorf("%s: error %q holds %q from the request", tc.name, err, leak)
			}
		}
	}
}
