package keyfunc_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// Copies of keyfunc's test helpers, which this module cannot import.

const xff = "X-Forwarded-For"

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

// keyRecorder is a middleware that records what f returns for each request.
type keyRecorder struct {
	f    keyfunc.Func
	keys []string
	errs []error
}

func (k *keyRecorder) mw(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := k.f(r)
		k.keys, k.errs = append(k.keys, key), append(k.errs, err)
		next.ServeHTTP(w, r)
	})
}

var noop = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})

// chiRouterWith returns a chi router whose /users/{id} route runs mw inline.
func chiRouterWith(mw func(http.Handler) http.Handler) http.Handler {
	r := chi.NewRouter()
	r.With(mw).Get("/users/{id}", noop)
	return r
}
