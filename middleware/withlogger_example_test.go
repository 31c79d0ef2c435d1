package middleware_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// downStore is a store whose backend does not answer (a Redis that is down).
type downStore struct{}

func (downStore) Take(context.Context, ...algorithms.Check) ([]algorithms.Decision, error) {
	return nil, errors.New("redis: connection refused")
}

// Nested middlewares (a global limit around a login one) that log to one
// place: give each a logger saying which it is, and every record of that
// middleware carries it, among them the changes of its failure State,
// which name no policy (a store failure's record names the policies too).
// Here the store is down and both fail open.
func ExampleWithLogger() {
	base := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // a fixed output for the example
			}
			return a
		},
	}))
	ip := keyfunc.Must(keyfunc.IP())
	global := middleware.MustNew(downStore{}, []*policy.Policy{
		policy.Must(policy.PerSecond("per-second", 10, ip)),
		policy.Must(policy.PerMinute("per-minute", 100, ip)),
	}, middleware.WithLogger(base.With("limiter", "global")))
	login := middleware.MustNew(downStore{}, []*policy.Policy{policy.Must(policy.Login(ip))},
		middleware.WithLogger(base.With("limiter", "login")))

	mux := http.NewServeMux()
	mux.Handle("POST /login", login.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	w := httptest.NewRecorder()
	global.Handler(mux).ServeHTTP(w, httptest.NewRequest("POST", "/login", nil))
	fmt.Println(w.Code)
	// Output:
	// level=WARN msg="ratekeeper: failure state changed" limiter=global from=healthy to=open
	// level=ERROR msg="ratekeeper: store failed" limiter=global outcome=failed_open fallback=false error="policy: store: redis: connection refused" suppressed=0 policies="[per-second per-minute]"
	// level=WARN msg="ratekeeper: failure state changed" limiter=login from=healthy to=open
	// level=ERROR msg="ratekeeper: store failed" limiter=login outcome=failed_open fallback=false error="policy: store: redis: connection refused" suppressed=0 policies=[login]
	// 200
}
