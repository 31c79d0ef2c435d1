package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestCompareLabelOneBucket: the comparison table named a sliding_buckets
// trial of one bucket "(1 buckets)".
func TestCompareLabelOneBucket(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 10, Window: time.Minute, Buckets: 1}
	p := &PolicyReport{Name: "a", Spec: spec, Requests: 4, Compare: []Trial{{Label: "sliding_buckets", Spec: spec, Rejected: 1}}}
	var b strings.Builder
	p.writeText(&b)
	if out := b.String(); !strings.Contains(out, "sliding_buckets (1 bucket)") || strings.Contains(out, "1 buckets") {
		t.Errorf("report:\n%s\nwant the trial labelled \"sliding_buckets (1 bucket)\"", out)
	}
}
