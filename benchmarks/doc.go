// Package benchmarks is the root of a separate module that compares
// ratekeeper with its peers (httprate, x/time/rate, throttled,
// sethvargo/go-limiter, ulule/limiter, tollbooth, redis_rate) and holds the
// HTTP load tests built on vegeta. It is a module of its own so that users
// of ratekeeper do not get the peers in their module graph: the main
// module requires none of them.
//
// Each directory mirrors the package it measures (algorithms, middleware,
// keyfunc, client, algorithms/redisstore), with our code and the peers in
// one test binary so they run side by side in the same run. The module
// uses ratekeeper's exported API only, through a replace directive to the
// parent directory. scripts/bench.sh and scripts/load.sh at the repository
// root run them.
package benchmarks
