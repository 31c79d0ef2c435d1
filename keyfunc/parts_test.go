package keyfunc_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

func TestHeader(t *testing.T) {
	f := keyfunc.Must(keyfunc.Header("x-client")) // no credential: kept as sent
	tests := []struct {
		name    string
		headers []string
		want    string
		wantErr bool
	}{
		{name: "present", headers: []string{"X-Client", "k1"}, want: "k1"},
		{name: "first of several", headers: []string{"X-Client", "k1", "X-Client", "k2"}, want: "k1"},
		{name: "missing", wantErr: true},
		{name: "empty", headers: []string{"X-Client", ""}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f(newReq("192.0.2.1:1", tt.headers...))
			if tt.wantErr {
				wantKey(t, f, newReq("192.0.2.1:1", tt.headers...), "", keyfunc.ErrNoKey)
				if !strings.Contains(err.Error(), "X-Client") {
					t.Fatalf("error %q does not name the header", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Header = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	for _, bad := range []string{"", "X Api", "X-Api:"} {
		if _, err := keyfunc.Header(bad); err == nil || !strings.HasPrefix(err.Error(), "keyfunc: Header") {
			t.Errorf("Header(%q) error = %v; want a Header error", bad, err)
		}
	}
}

func TestCookie(t *testing.T) {
	f := keyfunc.Must(keyfunc.Cookie("cart")) // no credential: kept as sent
	r := newReq("192.0.2.1:1")
	r.AddCookie(&http.Cookie{Name: "cart", Value: "s3"})
	wantKey(t, f, r, "s3", nil)

	wantKey(t, f, newReq("192.0.2.1:1"), "", keyfunc.ErrNoKey)
	other := newReq("192.0.2.1:1")
	other.AddCookie(&http.Cookie{Name: "theme", Value: "dark"})
	wantKey(t, f, other, "", keyfunc.ErrNoKey)
	empty := newReq("192.0.2.1:1", "Cookie", "cart=")
	wantKey(t, f, empty, "", keyfunc.ErrNoKey)

	if _, err := keyfunc.Cookie("a=b"); err == nil || !strings.HasPrefix(err.Error(), "keyfunc: Cookie") {
		t.Errorf("Cookie(a=b) error = %v; want a Cookie error", err)
	}
}

func TestMethod_UnknownMethodsShareOneKey(t *testing.T) {
	f := keyfunc.Method()
	tests := []struct{ method, want string }{
		{http.MethodGet, "GET"},
		{http.MethodHead, "GET"},
		{http.MethodPost, "POST"},
		{http.MethodPatch, "PATCH"},
		{http.MethodDelete, "DELETE"},
		{http.MethodOptions, "OPTIONS"},
		{"", "GET"},
		{"BREW", "OTHER"},
		{"get", "OTHER"},
		{"X" + strings.Repeat("Y", 1000), "OTHER"},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			r := newReq("192.0.2.1:1")
			r.Method = tt.method
			wantKey(t, f, r, tt.want, nil)
		})
	}
}

func TestGlobalAndConst(t *testing.T) {
	wantKey(t, keyfunc.Global(), newReq("192.0.2.1:1"), keyfunc.GlobalKey, nil)
	wantKey(t, keyfunc.Global(), newReq("198.51.100.1:1"), keyfunc.GlobalKey, nil)
	wantKey(t, keyfunc.Must(keyfunc.Const("uploads")), newReq("192.0.2.1:1"), "uploads", nil)
	if _, err := keyfunc.Const(""); err == nil {
		t.Fatal("Const(\"\") error = nil; want an error")
	}
}

func TestUser(t *testing.T) {
	r := newReq("192.0.2.1:1")
	wantKey(t, keyfunc.User(), r, "", keyfunc.ErrNoUser)
	if id, ok := keyfunc.UserFrom(r.Context()); ok || id != "" {
		t.Fatalf("UserFrom(empty ctx) = %q, %v; want \"\", false", id, ok)
	}
	r = r.WithContext(keyfunc.WithUser(r.Context(), "u-42"))
	wantKey(t, keyfunc.User(), r, "u-42", nil)
	if id, ok := keyfunc.UserFrom(r.Context()); !ok || id != "u-42" {
		t.Fatalf("UserFrom = %q, %v; want u-42, true", id, ok)
	}
}
