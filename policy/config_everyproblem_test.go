package policy_test

import "testing"

// TestConfigEveryProblemOfAPolicy: README and Load promise that every
// problem of a file is reported, each at its field. A policy's problems
// that do not depend on one another are reported together: a bad name
// beside a bad limit and window, or beside a value that does not parse, a
// bad key part or method; a duplicate name beside a bad limit; each of
// burst, buckets and max_delay set for an algorithm without them; a limit
// and a window both out of range, and a burst, buckets or max_delay out
// of its own bounds beside them; an unknown algorithm beside a bad limit
// and window. Values judged against the algorithm (burst here) are not
// judged when the algorithm is unknown (refused, not a string, or a
// misspelt field name), nor against a limit or window that was refused (no
// spurious refill or division problem).
func TestConfigEveryProblemOfAPolicy(t *testing.T) {
	const name = `policy: f.yaml:2:12: policies[0].name: "a b" contains ' '; use A-Z, a-z, 0-9, '-', '_' and '.'`
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"name, limit and window", "policies:\n  - {name: a b, limit: 0, window: 0s}\n", []string{
			name,
			"policy: f.yaml:2:24: policies[0].limit: must be positive, got 0",
			"policy: f.yaml:2:35: policies[0].window: must be positive, got 0s"}},
		{"name and a window without a unit", "policies:\n  - {name: a b, limit: 1, window: 60}\n", []string{
			name,
			"policy: f.yaml:2:35: policies[0].window: 60 has no unit; write it as 1s, 500ms, 1m or 24h"}},
		{"name, key part and method", "policies:\n  - {name: a b, limit: 1, window: 1s, key: [ip, bogus], methods: [post]}\n", []string{
			name,
			`policy: f.yaml:2:49: policies[0].key: unknown key part "bogus"; want one of cookie:NAME, global, header:NAME, ip, method, route, user`,
			`policy: f.yaml:2:67: policies[0].methods: "post": methods are case-sensitive and clients send "POST"`}},
		{"duplicate name and limit", "policies:\n  - {name: a, limit: 1, window: 1s}\n  - {name: a, limit: 0, window: 1s}\n", []string{
			`policy: f.yaml:3:12: policies[1].name: "a" is already the name of policies[0] (line 2)`,
			"policy: f.yaml:3:22: policies[1].limit: must be positive, got 0"}},
		{"burst, buckets and max_delay of other algorithms", "policies:\n  - {name: a, limit: 1, window: 1s, algorithm: sliding_log, burst: 3, buckets: 2, max_delay: 1s}\n", []string{
			"policy: f.yaml:2:68: policies[0].burst: applies only to token_bucket and leaky_bucket, not sliding_log",
			"policy: f.yaml:2:80: policies[0].buckets: applies only to sliding_buckets, not sliding_log",
			"policy: f.yaml:2:94: policies[0].max_delay: applies only to leaky_queue, not sliding_log"}},
		{"limit, window and burst out of range", "policies:\n  - {name: x, algorithm: token_bucket, limit: 2000000000, window: 48h, burst: -1}\n", []string{
			"policy: f.yaml:2:47: policies[0].limit: must be at most 1000000000, got 2000000000",
			"policy: f.yaml:2:67: policies[0].window: must be at most 24h0m0s, got 48h0m0s",
			"policy: f.yaml:2:79: policies[0].burst: must be at least 1 (or 0 for the limit), got -1"}},
		{"limit, max_delay and buckets of a queue", "policies:\n  - {name: q, algorithm: leaky_queue, limit: 0, window: 1s, max_delay: -1s, buckets: 3}\n", []string{
			"policy: f.yaml:2:46: policies[0].limit: must be positive, got 0",
			"policy: f.yaml:2:72: policies[0].max_delay: must not be negative, got -1s",
			"policy: f.yaml:2:86: policies[0].buckets: applies only to sliding_buckets, not leaky_queue"}},
		{"unknown algorithm, limit and window", "policies:\n  - {name: x, algorithm: nope, limit: 0, window: 0s, burst: 3}\n", []string{
			"policy: f.yaml:2:26: policies[0].algorithm: unknown kind \"nope\"; want one of fixed_window, sliding_log, sliding_window, sliding_buckets, token_bucket, leaky_bucket, leaky_queue",
			"policy: f.yaml:2:39: policies[0].limit: must be positive, got 0",
			"policy: f.yaml:2:50: policies[0].window: must be positive, got 0s"}},
		{"limit and missing buckets", "policies:\n  - {name: b, algorithm: sliding_buckets, limit: 0, window: 1m}\n", []string{
			"policy: f.yaml:2:6: policies[0].buckets: must be at least 1 for sliding_buckets, got 0",
			"policy: f.yaml:2:50: policies[0].limit: must be positive, got 0"}},
		{"bad window, buckets that divide no stand-in wrongly", "policies:\n  - {name: b, algorithm: sliding_buckets, limit: 10, window: 0s, buckets: 7}\n", []string{
			"policy: f.yaml:2:62: policies[0].window: must be positive, got 0s"}},
		{"bad limit, a burst that refills in time at any valid limit", "policies:\n  - {name: t, algorithm: token_bucket, limit: 0, window: 24h, burst: 100000}\n", []string{
			"policy: f.yaml:2:47: policies[0].limit: must be positive, got 0"}},
		{"algorithm not a string", "policies:\n  - {name: x, algorithm: 5, limit: 1, window: 1s, burst: 3}\n", []string{
			"policy: f.yaml:2:26: policies[0].algorithm: must be a string, not an integer"}},
		{"misspelt algorithm field", "policies:\n  - {name: x, algo: token_bucket, limit: 0, window: 1m, burst: 20}\n", []string{
			"policy: f.yaml:2:15: policies[0].algo: unknown field; want one of name, algorithm, limit, window, burst, buckets, max_delay, key, fallback, on_missing_key, count, methods, routes",
			"policy: f.yaml:2:42: policies[0].limit: must be positive, got 0"}},
		// An empty methods or routes list was reported only by New, once
		// the policy had no other problem, and then the first of the two.
		{"name and empty methods", "policies:\n  - {name: a b, limit: 1, window: 1s, methods: []}\n", []string{
			name,
			"policy: f.yaml:2:48: policies[0].methods: is empty"}},
		{"limit, empty methods and routes", "policies:\n  - {name: e, limit: 0, window: 1s, methods: [], routes: []}\n", []string{
			"policy: f.yaml:2:22: policies[0].limit: must be positive, got 0",
			"policy: f.yaml:2:46: policies[0].methods: is empty",
			"policy: f.yaml:2:58: policies[0].routes: is empty"}},
	} {
		wantErrors(t, tc.name, tc.doc, tc.want)
	}
}
