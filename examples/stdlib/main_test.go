package main

import (
	"net/http"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/examples/internal/apptest"
)

// direct builds the mux for clients that reach it directly (no proxy).
func direct(s algorithms.Store) (http.Handler, error) { return newHandler(s, nil) }

func TestHandler(t *testing.T) { apptest.Run(t, direct) }

// TestBehindProxy: deployed behind a proxy without keyfunc.TrustedProxies,
// the example says once in its log that every client shares the proxy's
// limit; it said nothing.
func TestBehindProxy(t *testing.T) { apptest.CheckBehindProxy(t, direct) }

// TestTrustedProxies: with the proxies given (-trusted-proxies), clients
// behind them are limited apart by their X-Forwarded-For, a direct client
// cannot choose its key, and nothing is reported as ignored.
func TestTrustedProxies(t *testing.T) {
	apptest.CheckTrustedProxies(t, func(s algorithms.Store) (http.Handler, error) { return newHandler(s, apptest.Proxies) })
}

// TestLimits: the README's curl of GET / gets its 429 on the eleventh
// request, as the README shows it, and POST /register is limited.
func TestLimits(t *testing.T) { apptest.CheckLimits(t, direct) }
