package redisstore

import (
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestParseRefundNegative: a refund reply with a negative Remaining or
// duration is no Decision (each is never negative) and is an error, as
// in a Take's reply (decodeDecision); it was read as is, and a corrupt
// queue state made Refund report RetryAfter -2562047h with no error.
func TestParseRefundNegative(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 3, Window: time.Second, MaxDelay: time.Second}
	r := &request{checks: []algorithms.Check{{Spec: spec}}, infos: []*specInfo{newSpecInfo(spec)}}
	good := []any{int64(0), int64(2), int64(3), int64(7), int64(5), int64(0)}
	if err := parseRefund(good, r, nil, make([]algorithms.Refunded, 1)); err != nil {
		t.Fatalf("parseRefund(%v) = %v", good, err)
	}
	for f, name := range []string{1: "Remaining", 2: "RetryAfter", 3: "ResetAfter", 4: "NextAfter"} {
		if name == "" {
			continue
		}
		reply := append([]any{}, good...)
		reply[f] = int64(-1)
		dst := make([]algorithms.Refunded, 1)
		if err := parseRefund(reply, r, nil, dst); err == nil || !strings.HasPrefix(err.Error(), "redisstore: ") {
			t.Errorf("parseRefund with %s -1 = %+v, %v; want a redisstore error", name, dst[0], err)
		}
	}
}
