package middleware_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// A limiter keyed by the peer's address, which a reverse proxy put in
// front of the server: every request comes from the proxy. The check
// notices the proxy's X-Forwarded-For and says so, once: the two clients
// share one count (keyfunc.TrustedProxies would tell them apart).
func ExampleCheckForwarding() {
	at := time.Unix(1_700_000_040, 0) // a frozen clock, for the output
	store, _ := algorithms.NewMemoryStore(algorithms.WithClock(algorithms.ClockFunc(func() time.Time { return at })))
	defer store.Close()
	perIP := policy.Must(policy.PerMinute("per-ip", 100, keyfunc.Must(keyfunc.IP())))
	m := middleware.MustNew(store, []*policy.Policy{perIP},
		middleware.CheckForwarding(true),
		middleware.WithErrorHandler(func(_ *http.Request, err error) {
			if errors.Is(err, middleware.ErrForwardingIgnored) {
				fmt.Println("warning: forwarding header ignored")
			}
		}))
	h := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for _, client := range []string{"198.51.100.7", "203.0.113.9"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = "10.0.0.2:41000" // the proxy
		r.Header.Set("X-Forwarded-For", client)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Println(client, w.Header().Get("RateLimit"))
	}
	// Output:
	// warning: forwarding header ignored
	// 198.51.100.7 "per-ip";r=99;t=120
	// 203.0.113.9 "per-ip";r=98;t=90
}
