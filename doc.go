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
//   - keyfunc: who is asking — client IP behind trusted proxies, header,
//     user, route, and composite keys.
//
// A Store decides directly:
//
//	store, _ := algorithms.NewMemoryStore()
//	spec := algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 100, Window: time.Minute}
//	d, err := store.TakeOne(ctx, algorithms.Check{Spec: spec, Key: "203.0.113.7"})
//	if err == nil && !d.Allowed {
//		// wait d.RetryAfter
//	}
package ratekeeper
