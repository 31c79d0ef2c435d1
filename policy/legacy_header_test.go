package policy_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestLegacyPolicyHeaderDistinctQuotas: drafts -06 and -07 say that two
// quota policies of RateLimit-Policy MUST NOT share the same quota value
// (a client finds the policy RateLimit-Limit or limit= names by it). Of
// policies sharing one, the list keeps the one with the longest window,
// the stricter statement (q units in 3600 s admit no more than q in any
// 60 s of them), the first in the Set's order among equal windows; the
// others keep their places. Before, two policies of 100 gave
// `100;w=60, 100;w=3600`. The -11 list names each policy, and keeps every
// one.
func TestLegacyPolicyHeaderDistinctQuotas(t *testing.T) {
	perMin := policy.Must(policy.PerMinute("per-minute", 100, remoteKey))
	perSec := policy.Must(policy.PerSecond("per-second", 10, remoteKey))
	perHour := policy.Must(policy.PerHour("per-hour", 100, remoteKey))
	perUser := policy.Must(policy.PerMinute("per-user", 100, remoteKey))
	bucket := policy.Must(policy.Per("bucket", 1, 6*time.Second, remoteKey, policy.WithAlgorithm(algorithms.TokenBucket), policy.WithBurst(10)))
	s, err := policy.NewSet([]*policy.Policy{perMin, perSec, perHour, perUser, bucket})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		mask      uint64
		ietf, old string
	}{
		{0b00111, `"per-minute";q=100;w=60, "per-second";q=10;w=1, "per-hour";q=100;w=3600`, `10;w=1, 100;w=3600`},
		{0b00101, `"per-minute";q=100;w=60, "per-hour";q=100;w=3600`, `100;w=3600`},
		{0b01001, `"per-minute";q=100;w=60, "per-user";q=100;w=60`, `100;w=60`},
		{0b01011, `"per-minute";q=100;w=60, "per-second";q=10;w=1, "per-user";q=100;w=60`, `100;w=60, 10;w=1`},
		{0b10010, `"per-second";q=10;w=1, "bucket";q=10;w=6`, `10;w=6`},
		{0b11111, `"per-minute";q=100;w=60, "per-second";q=10;w=1, "per-hour";q=100;w=3600, "per-user";q=100;w=60, "bucket";q=10;w=6`, `100;w=3600, 10;w=6`},
		{0b00011, `"per-minute";q=100;w=60, "per-second";q=10;w=1`, `100;w=60, 10;w=1`},
	} {
		if got := s.PolicyHeader(tt.mask); got != tt.ietf {
			t.Errorf("PolicyHeader(%05b) = %s, want %s", tt.mask, got, tt.ietf)
		}
		if got := s.LegacyPolicyHeader(tt.mask); got != tt.old {
			t.Errorf("LegacyPolicyHeader(%05b) = %s, want %s", tt.mask, got, tt.old)
		}
	}
}
