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

// A limit lowered while clients are being served (by hand, or by package
// middleware/adaptive's Controller) does not hand them a fresh quota: the
// client below used 3 of its 10 per minute, and at the new limit of 5 it
// gets the 2 that limit leaves it in that minute, counting the 3 (the
// configured limit's counters, judged at 5), where a policy made afresh
// at 5 would have admitted 5 more (and the next minute it gets 5). Its
// headers report the new limit and the lower of the two allowances.
func ExampleMiddleware_SetLimit() {
	store := exampleStore()
	defer store.Close()
	ip := keyfunc.Must(keyfunc.IP())
	m := middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.New("per-ip", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute}, ip)),
	})
	h := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	send := func() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		fmt.Println(w.Code, w.Header().Get("RateLimit-Policy"), w.Header().Get("RateLimit"))
	}
	for range 2 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	}
	send() // the 3rd
	if err := m.SetLimit("per-ip", 5); err != nil {
		panic(err)
	}
	for range 3 {
		send()
	}
	// Output:
	// 200 "per-ip";q=10;w=60 "per-ip";r=7;t=60
	// 200 "per-ip";q=5;w=60 "per-ip";r=1;t=60
	// 200 "per-ip";q=5;w=60 "per-ip";r=0;t=60
	// 429 "per-ip";q=5;w=60 "per-ip";r=0;t=60
}
