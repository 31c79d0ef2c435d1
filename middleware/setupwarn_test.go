package middleware_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// lockedBuffer is a bytes.Buffer safe for a slog handler's concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSetupWarningsAreLogged: the once-only warnings about a middleware's
// setup (a forwarding header the ip key ignores, a route that is never
// known, a policy decided twice) went to the error handler alone, so a
// middleware that logs (WithLogger, or a LogObserver among its observers)
// and has no error handler never said them: the forwarding check was not
// even made. They are now logged once each, at Warn.
func TestSetupWarningsAreLogged(t *testing.T) {
	for _, how := range []string{"WithLogger", "WithObserver"} {
		t.Run(how, func(t *testing.T) {
			var logs lockedBuffer
			logger := slog.New(slog.NewJSONHandler(&logs, nil))
			logOpt := middleware.WithLogger(logger)
			if how == "WithObserver" {
				o, err := middleware.NewLogObserver(logger)
				if err != nil {
					t.Fatal(err)
				}
				logOpt = middleware.WithObserver(&nopObserver{}, o)
			}
			store, _ := newStore(t)
			shared := fixed("per-ip", 100, time.Minute, peerIP)
			login := fixed("login", 100, time.Minute, peerIP, policy.WithRoutes("POST /login"))
			outer := middleware.MustNew(store, []*policy.Policy{shared, login}, logOpt, middleware.CheckForwarding(true))
			inner := middleware.MustNew(store, []*policy.Policy{shared}, logOpt)
			r := chi.NewRouter()
			r.Use(outer.Handler) // before routing: login's route is never known
			r.With(inner.Handler).Get("/", ok.ServeHTTP)
			for range 3 {
				forwarded(r, "X-Forwarded-For", "198.51.100.7")
			}
			out := logs.String()
			for _, want := range []string{"forwarding header", "whose route is unknown", "already decided under it further out"} {
				n := 0
				for _, line := range strings.Split(out, "\n") {
					if strings.Contains(line, `"level":"WARN","msg":"ratekeeper: setup warning"`) && strings.Contains(line, want) {
						n++
					}
				}
				if n != 1 {
					t.Errorf("%q logged %d times, want once; logs:\n%s", want, n, out)
				}
			}
		})
	}
}
