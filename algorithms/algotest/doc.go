// Package algotest is the conformance suite of algorithms.Store: one call,
// [Run], checks a store against the worked examples of the seed articles,
// against a slow exact reference [Model] on randomized traces, and for
// concurrency, all-or-nothing calls, expiry, bounded key sets, invalid
// checks (checks of one key that ask together for more than it can ever
// admit at once among them) and cancelled contexts. The in-memory store and the Redis store
// both run it, unchanged. A store's test calls Run once with a [Harness]
// whose New returns a fresh store reading the clock it is given (see the
// example of Run).
//
// The pieces are exported so that a backend can also be compared with
// another directly: [RandomTrace] and [RandomSkewTrace] make deterministic
// traces (the second with clocks that go back), [TraceFromBytes] makes one
// from a fuzzer's input, [EdgeSpecs], [EdgeStarts] and [EdgeTrace] (or
// [EdgeForwardTrace], [EdgeTraceFromBytes]) make traces at the edges of the
// allowed range whose instants land on the Model's own waits and on window
// boundaries, [Replay] runs a trace against a store driven by a
// manual [Clock], [ReplayModel] runs it on the Model, and [Diff] reports the
// first decision on which two replays differ, with the steps that reproduce
// it. [FitRepeats] keeps a generated call valid. [NoPruneTrace] compares a
// [TraceStore] with the Model on a random trace of Takes, Peeks and
// GiveBacks of sliding_log and sliding_buckets keys named several times in
// a call.
//
// Every time in the suite comes from a [Clock] the store is given: nothing
// sleeps, and a run takes a few seconds, about 90,000 Take calls, also
// against a store that makes a network round trip per call. Set
// [TracesEnv] for a longer soak.
package algotest
