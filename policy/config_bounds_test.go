package policy_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigBoundsInclusive: each bound a configuration's field has takes
// the values on it and refuses the first beyond.
func TestConfigBoundsInclusive(t *testing.T) {
	const one = "  - {name: p, limit: 10, window: 1m}\n"
	many := func(n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteString("  - {name: p" + strconv.Itoa(i) + ", limit: 1, window: 1s}\n")
		}
		return b.String()
	}
	buckets := func(n int) string {
		return "  - {name: p, limit: 10, window: 1h, algorithm: sliding_buckets, buckets: " + strconv.Itoa(n) + "}\n"
	}
	hops := func(n int) string {
		return "ip_source: x-forwarded-for\ntrusted_hops: " + strconv.Itoa(n) + "\n"
	}
	for _, tt := range []struct {
		name, head, policies string
		ok                   bool
	}{
		{"failure_retry_after 1s", "failure_mode: closed\nfailure_retry_after: 1s\n", one, true},
		{"failure_retry_after 999ms", "failure_mode: closed\nfailure_retry_after: 999ms\n", one, false},
		{"failure_retry_after max", "failure_mode: closed\nfailure_retry_after: " + policy.MaxFailureRetryAfter.String() + "\n", one, true},
		{"failure_retry_after max+1ns", "failure_mode: closed\nfailure_retry_after: " + (policy.MaxFailureRetryAfter + 1).String() + "\n", one, false},
		{"ipv6_prefix 1", "ipv6_prefix: 1\n", one, true},
		{"ipv6_prefix 128", "ipv6_prefix: 128\n", one, true},
		{"ipv6_prefix 129", "ipv6_prefix: 129\n", one, false},
		{"ipv4_prefix 1", "ipv4_prefix: 1\n", one, true},
		{"ipv4_prefix 32", "ipv4_prefix: 32\n", one, true},
		{"ipv4_prefix 0", "ipv4_prefix: 0\n", one, false},
		{"trusted_hops 0", "trusted_hops: 0\n", one, true},
		{"trusted_hops max", hops(keyfunc.DefaultMaxHops), one, true},
		{"trusted_hops max+1", hops(keyfunc.DefaultMaxHops + 1), one, false},
		{"trusted_hops -1", hops(-1), one, false},
		{"MaxPolicies policies", "", many(policy.MaxPolicies), true},
		{"MaxPolicies+1 policies", "", many(policy.MaxPolicies + 1), false},
		{"MaxBuckets buckets", "", buckets(algorithms.MaxBuckets), true},
		{"MaxBuckets+1 buckets", "", buckets(algorithms.MaxBuckets + 1), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := policy.ParseConfig([]byte(tt.head+"policies:\n"+tt.policies), "b.yaml")
			if (err == nil) != tt.ok {
				t.Errorf("ParseConfig = %v, want accepted: %v", err, tt.ok)
			}
		})
	}
}
