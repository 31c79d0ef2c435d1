// Package metrictest holds the scenarios that the tests of the metrics
// adapters (otelmetrics, prommetrics) share: each scenario builds the
// middleware, serves the requests and checks what the middleware
// answers, so that each adapter's test keeps only its own reading of its
// metrics.
package metrictest

import (
	"net/http"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// T0 is the instant the scenarios' clocks start at.
var T0 = time.Unix(1_700_000_040, 0)

// Remote keys a request by its RemoteAddr.
func Remote(r *http.Request) (string, error) { return r.RemoteAddr, nil }

// Fixed is a fixed_window policy named name of limit a minute, keyed by
// key.
func Fixed(name string, limit int64, key keyfunc.Func) *policy.Policy {
	return policy.Must(policy.New(name, algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: limit, Window: time.Minute}, key))
}
