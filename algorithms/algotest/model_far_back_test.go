package algotest

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestModelBucketYearsBack: a bucket at 10^9 per millisecond asked a year
// before its state is more than empty by about 3·10^22 units; the Model
// reports Remaining 0 and the wait for one unit as NextAfter (C − used
// does not fit in an int64, and floorRat must not be handed it).
func TestModelBucketYearsBack(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, kind := range []algorithms.Kind{algorithms.TokenBucket, algorithms.LeakyBucket} {
		c := algorithms.Check{Spec: algorithms.Spec{Algorithm: kind, Limit: algorithms.MaxLimit, Window: algorithms.MinWindow}, Key: "k"}
		m := NewModel()
		if _, err := m.TakeAt(now, c); err != nil {
			t.Fatal(err)
		}
		ds, err := m.TakeAt(now.Add(-365*24*time.Hour), c)
		if err != nil {
			t.Fatal(err)
		}
		if d := ds[0]; d.Allowed || d.Remaining != 0 || d.NextAfter != d.RetryAfter || d.RetryAfter <= 365*24*time.Hour-time.Millisecond {
			t.Errorf("%s a year back: %+v; want denied, Remaining 0, NextAfter = RetryAfter (about a year)", kind, d)
		}
	}
}
