package middleware_test

import (
	"github.com/ratekeeper/ratekeeper/internal/logbuf"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// lockedBuffer is a log buffer written by other goroutines while the
// test reads it.
type lockedBuffer = logbuf.Buffer

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

// TestSetupWarningsOnTheLastLogger: with two loggers (WithLogger twice)
// and no error handler, a setup warning is logged once, on the logger
// given last, as WithLogger says, not on both and not on the first.
func TestSetupWarningsOnTheLastLogger(t *testing.T) {
	var first, last lockedBuffer
	store, _ := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{fixed("per-ip", 100, time.Minute, peerIP)},
		middleware.WithLogger(slog.New(slog.NewJSONHandler(&first, nil))),
		middleware.WithLogger(slog.New(slog.NewJSONHandler(&last, nil))))
	r := chi.NewRouter()
	r.Use(m.Handler)
	r.Get("/", ok.ServeHTTP)
	for range 2 {
		forwarded(r, "X-Forwarded-For", "198.51.100.7")
	}
	count := func(b *lockedBuffer) int {
		return strings.Count(b.String(), `"msg":"ratekeeper: setup warning"`)
	}
	if f, l := count(&first), count(&last); f != 0 || l != 1 {
		t.Errorf("setup warnings: %d on the first logger, %d on the last; want 0 and 1\nfirst:\n%s\nlast:\n%s", f, l, first.String(), last.String())
	}
}
