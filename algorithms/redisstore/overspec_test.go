package redisstore_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestCountPastSpecLimit: a window kind's state counting past its Spec's
// limit (5), as a check judged above it (algorithms.Check.Limit) leaves
// it, is a state like any other: checks at the Spec's limit or judged
// lower admit nothing on it and leave it as it is, and a check judged
// above it admits what its limit leaves room for (fixed_window and
// sliding_buckets, 6 counted: 1 more at 7; sliding_window, 6 in the
// previous window weighed at 5 of them 10 s into a minute: 2; 6 in the
// current one: 1). What doc.go's "Failures" refuses is a fixed_window or
// sliding_window count past algorithms.MaxLimit, the highest limit any
// check is judged at: algorithms.ErrKeyState, the value left as it is.
func TestCountPastSpecLimit(t *testing.T) {
	admin, clients := corruptClients(t)
	k, s := corruptT0.Unix()/60, corruptT0.Unix()
	var six []any
	for range 6 {
		six = append(six, fmt.Sprintf("%d 0 1", s-1))
	}
	fixed := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Minute}
	sliding := algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 5, Window: time.Minute}
	buckets := algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 5, Window: time.Minute, Buckets: 1}
	log := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 5, Window: time.Minute}
	const past = algorithms.MaxLimit + 1
	for _, tc := range []struct {
		spec    algorithms.Spec
		state   corruptCase
		refused bool
		at7     int // admitted judged at 7 (-1: a limit sliding_log may not have)
	}{
		{fixed, corruptCase{fmt.Sprintf("%d 6", k), nil}, false, 1},
		{sliding, corruptCase{fmt.Sprintf("%d 6 0", k), nil}, false, 2},
		{sliding, corruptCase{fmt.Sprintf("%d 0 6", k), nil}, false, 1},
		{buckets, corruptCase{fmt.Sprintf("%d 0 6 0 6", k), nil}, false, 1},
		{log, corruptCase{"6", six}, false, -1},
		{fixed, corruptCase{fmt.Sprintf("%d %d", k, past), nil}, true, 0},
		{sliding, corruptCase{fmt.Sprintf("%d %d 0", k, past), nil}, true, 0},
		{sliding, corruptCase{fmt.Sprintf("%d 0 %d", k, past), nil}, true, 0},
	} {
		for _, name := range []string{"function", "script"} {
			limits := []int64{0, 2, 7, algorithms.MaxLimit}
			if tc.at7 < 0 {
				limits = limits[:2]
			}
			for _, limit := range limits {
				c := algorithms.Check{Spec: tc.spec, Key: "app", Limit: limit}
				admitted, left, list, err := takeCorrupt(t, admin, clients[name], c, tc.state)
				what := fmt.Sprintf("%s %s judged at %d, value %q, list %v", name, tc.spec.Algorithm, limit, tc.state.value, tc.state.list)
				want := 0
				if !tc.refused && limit == 7 {
					want = tc.at7
				}
				switch {
				case tc.refused && (err == nil || !errors.Is(err, algorithms.ErrKeyState)):
					t.Errorf("%s: %d Takes admitted, then error %v; want the first Take to fail with algorithms.ErrKeyState", what, admitted, err)
				case !tc.refused && err != nil:
					t.Errorf("%s: error %v; want the state read (doc.go: only fixed_window and sliding_window counts past algorithms.MaxLimit are refused)", what, err)
				case !tc.refused && limit == algorithms.MaxLimit:
					if admitted != 2*int(tc.spec.Limit) {
						t.Errorf("%s: %d Takes admitted; want all %d", what, admitted, 2*tc.spec.Limit)
					}
					continue
				case admitted != want:
					t.Errorf("%s: %d Takes admitted; want %d", what, admitted, want)
				}
				if want == 0 && (left != tc.state.value || fmt.Sprint(list) != fmt.Sprint(tc.state.list)) {
					t.Errorf("%s: the keys hold %q and %v after the Takes; want them left as they were", what, left, list)
				}
			}
		}
	}
}
