// Package ratekeeper is a rate limiter for net/http: it extracts a key from
// each request (client IP, user, route, or a composite), checks every policy
// that applies to the request as one all-or-nothing decision, and either
// passes the request on or answers 429 Too Many Requests with Retry-After and
// RateLimit headers.
//
// The root package holds documentation only. The packages are:
//
//   - algorithms: the contract (Spec, Check, Decision, Store, Clock), the
//     seven algorithms (fixed window, sliding log, sliding window counter,
//     sliding buckets, token bucket, leaky bucket as meter and as queue) as
//     exact state transitions, and the in-memory store.
//   - algorithms/algotest: the conformance suite every Store passes.
//   - algorithms/redisstore: the same algorithms as Lua scripts on Redis
//     (standalone, Sentinel, Cluster), at most one script call per request
//     (on a Cluster, a request whose keys span slots takes one per slot, in
//     phases).
//   - keyfunc: who is asking — client IP behind trusted proxies, header,
//     user, route, and composite keys.
//   - policy: a Policy is a name, a Spec and a key function (plus cost and
//     matching); a Set decides every policy that applies to a request in one
//     all-or-nothing Take; presets for write endpoints; configuration files.
//   - policy/reload: watches a configuration file and applies each valid
//     edit to a running middleware.
//   - middleware: the net/http wrapper — headers, 429 responses, failure
//     modes, shadow mode, the decision in the request context.
//   - middleware/adaptive: limits that follow the service's health (latency
//     and errors) or the number of instances sharing them (Fleet).
//   - middleware/prommetrics: Prometheus metrics of the middleware's
//     decisions and state.
//   - middleware/otelmetrics: the same metrics through OpenTelemetry.
//   - client: an http.RoundTripper that paces outbound calls through a
//     leaky queue and retries politely a 429, 503 or 529, or a 403 that
//     refuses the request for its rate.
//   - cmd/ratekeeper: the demo, config checks, and replay of access logs to
//     choose thresholds.
//   - examples: runnable programs behind net/http's ServeMux (stdlib), chi,
//     Redis (two instances, one limit), a configuration file (config), and
//     the outbound client.
//
// A store decides directly (the package's Example runs this, and
// Example_middleware a ServeMux behind the middleware). TakeOne, the
// single-check call below, is the in-memory store's; every Store, the Redis
// one too, has Take (store.Take(ctx, check) returns one Decision per check),
// and an algorithms.Limiter decides one Spec on any of them:
//
//	store, _ := algorithms.NewMemoryStore()
//	spec := algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 100, Window: time.Minute}
//	d, err := store.TakeOne(ctx, algorithms.Check{Spec: spec, Key: "203.0.113.7"})
//	if err == nil && !d.Allowed {
//		// wait d.RetryAfter
//	}
package ratekeeper
