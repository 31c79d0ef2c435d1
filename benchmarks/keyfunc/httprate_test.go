package keyfunc_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-chi/httprate"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// keyByPath is a function of the KeyFunc shape with no named type.
func keyByPath(r *http.Request) (string, error) { return r.URL.Path, nil }

// TestFunc_InterchangeableWithHttprateKeyFunc shows that a Func and an
// httprate.KeyFunc need no wrapper between them: each is assignable to the
// other, without even a conversion.
func TestFunc_InterchangeableWithHttprateKeyFunc(t *testing.T) {
	var f keyfunc.Func = keyByPath
	var k httprate.KeyFunc = f                // a Func where httprate wants a KeyFunc
	var back keyfunc.Func = httprate.Key("*") // and the other way
	if got, err := back(newReq("192.0.2.1:1")); err != nil || got != "*" {
		t.Fatalf("converted httprate.Key(*) = %q, %v", got, err)
	}
	if a, _ := f(newReq("192.0.2.1:1")); a != "/" {
		t.Fatalf("f = %q; want /", a)
	}
	_ = k

	// A keyfunc.Func drives httprate directly.
	ip := mustIP(t)
	h := httprate.LimitBy(2, time.Hour, ip)(noop)
	codes := func(remote string) int {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, newReq(remote))
		return rec.Code
	}
	got := []int{codes("192.0.2.1:1"), codes("192.0.2.1:2"), codes("192.0.2.1:3"), codes("192.0.2.2:1")}
	want := []int{200, 200, 429, 200}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("statuses = %v; want %v", got, want)
		}
	}
}
