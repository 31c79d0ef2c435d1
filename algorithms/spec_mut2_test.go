package algorithms_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestSpecWindowBelowMinimum: a positive window under MinWindow, down to
// 1 ns, is refused for being under the minimum, not for not being positive.
func TestSpecWindowBelowMinimum(t *testing.T) {
	for _, w := range []time.Duration{time.Nanosecond, algorithms.MinWindow - 1} {
		err := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: w}.Validate()
		if want := "algorithms: invalid spec: Window must be at least " + algorithms.MinWindow.String() + ", got " + w.String(); err == nil || err.Error() != want {
			t.Errorf("Window %v: %v, want %q", w, err, want)
		}
	}
}
