package middleware_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// With IETFMostConstraining, RateLimit carries the member of the most
// constraining policy only, while RateLimit-Policy lists them all. The
// two middlewares share the store and the policies: the second request
// leaves the per-second policy 8 of its 10, the lowest remaining of
// three.
func ExampleWithHeaders_mostConstraining() {
	store := exampleStore()
	defer store.Close()
	ip := keyfunc.Must(keyfunc.IP())
	fixed := policy.WithAlgorithm(algorithms.FixedWindow)
	policies := []*policy.Policy{
		policy.Must(policy.PerSecond("per-second", 10, ip, fixed)),
		policy.Must(policy.PerMinute("per-minute", 100, ip, fixed)),
		policy.Must(policy.Per("per-day", 1000, 24*time.Hour, ip, fixed)),
	}
	for _, p := range []middleware.Profile{middleware.IETF, middleware.IETFMostConstraining} {
		h := middleware.MustNew(store, policies, middleware.WithHeaders(p)).Handler(http.NotFoundHandler())
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		fmt.Println(p)
		fmt.Println("  RateLimit-Policy:", w.Header().Get("RateLimit-Policy"))
		fmt.Println("  RateLimit:", w.Header().Get("RateLimit"))
	}
	// Output:
	// ietf
	//   RateLimit-Policy: "per-second";q=10;w=1, "per-minute";q=100;w=60, "per-day";q=1000;w=86400
	//   RateLimit: "per-second";r=9;t=1, "per-minute";r=99;t=60, "per-day";r=999;t=43200
	// ietf-most-constraining
	//   RateLimit-Policy: "per-second";q=10;w=1, "per-minute";q=100;w=60, "per-day";q=1000;w=86400
	//   RateLimit: "per-second";r=8;t=1
}
