package main

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/examples/internal/apptest"
)

func TestHandler(t *testing.T) { apptest.Run(t, newHandler) }

// TestBehindProxy: deployed behind a proxy without keyfunc.TrustedProxies,
// the example says once in its log that every client shares the proxy's
// limit; it said nothing.
func TestBehindProxy(t *testing.T) { apptest.CheckBehindProxy(t, newHandler) }
