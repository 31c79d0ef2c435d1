package middleware_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// A ReverseProxy behind the middleware, to a backend that sends
// X-RateLimit-* fields of its own and refuses /busy with a 429. As is,
// the proxy adds the backend's values to the middleware's, two values per
// field; with DropBackendRateLimitFields as its ModifyResponse the client
// reads the middleware's alone, and the backend's 429 keeps its
// Retry-After.
func ExampleDropBackendRateLimitFields() {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Limit", "1000")
		w.Header().Set("X-RateLimit-Remaining", "0")
		if r.URL.Path == "/busy" {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer backend.Close()
	target, err := url.Parse(backend.URL)
	if err != nil {
		panic(err)
	}

	store := exampleStore()
	defer store.Close()
	m := middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.PerMinute("per-minute", 100, keyfunc.Global())),
	}, middleware.WithHeaders(middleware.Legacy))

	asIs := httputil.NewSingleHostReverseProxy(target)
	dropping := httputil.NewSingleHostReverseProxy(target)
	dropping.ModifyResponse = middleware.DropBackendRateLimitFields(dropping.ModifyResponse)

	for _, c := range []struct {
		proxy *httputil.ReverseProxy
		path  string
	}{{asIs, "/"}, {dropping, "/"}, {dropping, "/busy"}} {
		w := httptest.NewRecorder()
		m.Handler(c.proxy).ServeHTTP(w, httptest.NewRequest("GET", c.path, nil))
		h := w.Header()
		fmt.Println(w.Code, "limit", h.Values("X-RateLimit-Limit"), "remaining", h.Values("X-RateLimit-Remaining"),
			"Retry-After", h.Values("Retry-After"))
	}
	// Output:
	// 200 limit [100 1000] remaining [99 0] Retry-After []
	// 200 limit [100] remaining [98] Retry-After []
	// 429 limit [100] remaining [97] Retry-After [7]
}
