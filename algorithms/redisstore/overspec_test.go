package redisstore_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestCountPastSpecLimit: a window kind's state counting one unit past its
// Spec's limit (5), which the store never writes, whatever limit its
// checks are judged at (algorithms.Check.Limit), is what doc.go's
// "Failures" says it is: a fixed_window or sliding_window count past it
// is not the store's (algorithms.ErrKeyState, the value left as it is),
// while a sliding_log's or sliding_buckets' total past it is read as a
// state, which only denies (nothing is admitted on it, at the Spec's limit
// or judged lower) and is not rewritten.
func TestCountPastSpecLimit(t *testing.T) {
	admin, clients := corruptClients(t)
	k, s := corruptT0.Unix()/60, corruptT0.Unix()
	var six []any
	for range 6 {
		six = append(six, fmt.Sprintf("%d 0 1", s-1))
	}
	for _, tc := range []struct {
		spec    algorithms.Spec
		state   corruptCase
		refused bool
	}{
		{algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Minute}, corruptCase{fmt.Sprintf("%d 6", k), nil}, true},
		{algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 5, Window: time.Minute}, corruptCase{fmt.Sprintf("%d 6 0", k), nil}, true},
		{algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 5, Window: time.Minute}, corruptCase{fmt.Sprintf("%d 0 6", k), nil}, true},
		{algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 5, Window: time.Minute, Buckets: 1}, corruptCase{fmt.Sprintf("%d 0 6 0 6", k), nil}, false},
		{algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 5, Window: time.Minute}, corruptCase{"6", six}, false},
	} {
		for _, name := range []string{"function", "script"} {
			for _, limit := range []int64{0, 2} {
				c := algorithms.Check{Spec: tc.spec, Key: "app", Limit: limit}
				admitted, left, list, err := takeCorrupt(t, admin, clients[name], c, tc.state)
				what := fmt.Sprintf("%s %s judged at %d, value %q, list %v", name, tc.spec.Algorithm, limit, tc.state.value, tc.state.list)
				switch {
				case tc.refused && (err == nil || !errors.Is(err, algorithms.ErrKeyState)):
					t.Errorf("%s: %d Takes admitted, then error %v; want the first Take to fail with algorithms.ErrKeyState", what, admitted, err)
				case !tc.refused && err != nil:
					t.Errorf("%s: error %v; want the state read (doc.go: only fixed_window and sliding_window counts past the Spec's limit are refused)", what, err)
				case admitted != 0:
					t.Errorf("%s: %d Takes admitted; want none", what, admitted)
				}
				if left != tc.state.value || fmt.Sprint(list) != fmt.Sprint(tc.state.list) {
					t.Errorf("%s: the keys hold %q and %v after the Takes; want them left as they were", what, left, list)
				}
			}
		}
	}
}
