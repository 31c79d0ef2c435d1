package redisstore

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestCeilMillis: the minimum TTL goes to the script in whole
// milliseconds rounded up, so that no key lives less than WithMinTTL's
// duration: a part of a millisecond counts as a whole one, up to
// math.MaxInt64.
func TestCeilMillis(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want int64
	}{
		{0, 0},
		{1, 1},
		{time.Millisecond - 1, 1},
		{time.Millisecond, 1},
		{time.Millisecond + 1, 2},
		{time.Hour + time.Nanosecond, 3_600_001},
		{math.MaxInt64, math.MaxInt64/int64(time.Millisecond) + 1},
	} {
		if got := ceilMillis(c.d); got != c.want {
			t.Errorf("ceilMillis(%d) = %d, want %d", int64(c.d), got, c.want)
		}
	}
}

// TestParseDecisionsShortForSeveral: a Take's reply too short for its
// checks is an error, never a panic, for several checks too (the reply
// needs replyWidth values per check: one check's worth for two, or one
// value short of two, is refused).
func TestParseDecisionsShortForSeveral(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 3, Window: time.Second}
	si := newSpecInfo(spec)
	r := &request{checks: []algorithms.Check{{Spec: spec}, {Spec: spec}}, infos: []*specInfo{si, si}}
	one := []any{int64(2*2 + 1), int64(0), int64(5), int64(5)}
	for name, reply := range map[string][]any{
		"one check's":     one,
		"one value short": append(append([]any{}, one...), one[:replyWidth-1]...),
	} {
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Errorf("parseDecisions(%s reply for two checks) panicked: %v", name, v)
				}
			}()
			dst := make([]algorithms.Decision, 2)
			if err := parseDecisions(reply, r, nil, dst); err == nil || !strings.HasPrefix(err.Error(), "redisstore: ") {
				t.Errorf("parseDecisions(%s reply for two checks) = %v, want a redisstore error", name, err)
			}
		}()
	}
}
