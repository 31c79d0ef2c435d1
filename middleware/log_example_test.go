package middleware_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// Denials are logged at most LogRate times per second and policy; the
// next record tells how many were left out. The client is logged as a pk,
// here hashed under the secret the middleware's headers use, never by its
// key (its address), and the request by its route pattern, not its path
// (which may carry a token). (The policy is a sliding window counter: the client,
// 13m20s into the hour, waits for the whole next hour.)
func ExampleNewLogObserver() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // a fixed output for the example
			}
			return a
		},
	}))
	clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
	secret := []byte("example secret, 16 bytes or more") // from the server's configuration
	lo, _ := middleware.NewLogObserver(logger, middleware.LogRate(1), middleware.LogClock(clock), middleware.LogPartitionKey(secret))
	store, _ := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.PerHour("login", 1, keyfunc.Must(keyfunc.IP())))},
		middleware.WithObserver(lo), middleware.WithPartitionKey(secret))
	mux := http.NewServeMux()
	mux.Handle("POST /login", m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	h := mux
	for range 50 { // 1 allowed, 49 denied within one second
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/login", nil))
	}
	clock.Advance(time.Second)
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/login", nil))
	// Output:
	// level=INFO msg="ratekeeper: request denied" policy=login pk=:2PJSfuk0BIWc: shadow=false method=POST route="POST /login" retry_after=1h46m40s suppressed=0
	// level=INFO msg="ratekeeper: request denied" policy=login pk=:2PJSfuk0BIWc: shadow=false method=POST route="POST /login" retry_after=1h46m39s suppressed=48
}
