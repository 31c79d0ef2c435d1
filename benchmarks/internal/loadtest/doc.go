// Package loadtest drives ratekeeper's middleware with a real HTTP load
// generator (vegeta, used as a library) over the loopback interface, and
// measures three things:
//
//   - exactness under load: a policy of L requests per W on one key, offered
//     Factor·L/W for a number of windows from many concurrent connections,
//     in memory and on Redis shared by two HTTP servers. Every decision the
//     store makes is recorded with the instant it was made at (see
//     [RunExactness]); for sliding_log no window-long interval may hold more
//     than L admitted requests, and for every kind the admitted count is
//     compared with the reference model of algotest replaying the same
//     instants;
//   - overhead: latency percentiles and maximum throughput of one trivial
//     handler with no limiter, with the in-memory limiter (one policy, with
//     and without the decision in the request context, and four stacked
//     policies), with the Redis store and with httprate, in one run
//     (see [RunOverhead]);
//   - a key flood: many distinct client IPs through an in-memory store
//     bounded by algorithms.WithMaxKeys, driven in process on a manual clock,
//     while a victim key sends exactly at its limit (see [RunFlood]).
//
// Every attack targets only loopback addresses (anything else is refused),
// runs at a bounded rate for a bounded time and stops by itself. Redis parts
// start their own redis-server on a free loopback port (see [StartRedis]);
// they never touch a server they did not start.
//
// The command ./internal/loadtest/cmd/load (in the benchmarks module, which
// scripts/load.sh builds it from) runs everything and writes the tables as
// markdown; the tests of this package run a reduced version.
package loadtest
