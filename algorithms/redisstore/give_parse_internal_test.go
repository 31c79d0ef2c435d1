package redisstore

import (
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestParseGiveSurprises: as for a Take's reply (TestParseDecisionsSurprises),
// a Refund's or GiveBack's reply of the wrong shape is an error, never a
// panic nor a result read from the wrong places; a reply of the right shape
// is read field by field.
func TestParseGiveSurprises(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 3, Window: time.Second, MaxDelay: time.Second}
	r := &request{checks: []algorithms.Check{{Spec: spec}}, infos: []*specInfo{newSpecInfo(spec)}}
	i := func(v int64) any { return v }
	parsers := map[string]struct {
		parse func(any, *request, []int, []algorithms.Refunded) error
		good  []any
	}{
		// refund: allowed, Remaining, RetryAfter, ResetAfter, NextAfter, given.
		"refund": {parseRefund, []any{i(1), i(2), i(0), i(7), i(5), i(1)}},
		// give-back: a decision (2*Remaining+allowed, Delay or RetryAfter,
		// ResetAfter, NextAfter), then given.
		"give-back": {parseGiveBack, []any{i(2*2 + 1), i(0), i(7), i(5), i(1)}},
	}
	want := algorithms.Refunded{Decision: algorithms.Decision{Allowed: true, Limit: spec.Capacity(), Remaining: 2, ResetAfter: 7, NextAfter: 5}, Given: true}
	for name, p := range parsers {
		dst := make([]algorithms.Refunded, 1)
		if err := p.parse(p.good, r, nil, dst); err != nil || dst[0] != want {
			t.Errorf("%s: parse(%v) = %+v, %v; want %+v", name, p.good, dst[0], err, want)
		}
		for what, reply := range map[string]any{
			"nil":        nil,
			"string":     "OK",
			"short":      p.good[:len(p.good)-1],
			"long":       append(append([]any{}, p.good...), i(0)),
			"nil given":  append(append([]any{}, p.good[:len(p.good)-1]...), nil),
			"text first": append([]any{"1"}, p.good[1:]...),
		} {
			func() {
				defer func() {
					if v := recover(); v != nil {
						t.Errorf("%s: parse(%s) panicked: %v", name, what, v)
					}
				}()
				if err := p.parse(reply, r, nil, make([]algorithms.Refunded, 1)); err == nil || !strings.HasPrefix(err.Error(), "redisstore: ") {
					t.Errorf("%s: parse(%s) = %v, want a redisstore error", name, what, err)
				}
			}()
		}
	}
}
