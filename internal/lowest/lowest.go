// Package lowest orders decisions for the single-valued header profiles,
// which report one policy of many: policy.Result.Lowest picks it among the
// decisions of one middleware, and the middleware among those of nested
// ones, by this one order, so that nesting reports what one middleware
// holding the same policies would.
package lowest

import "github.com/ratekeeper/ratekeeper/algorithms"

// Before reports whether d is reported in preference to b: denied first,
// then the lower remaining, then (of two denied) the longer wait, then the
// longer ResetAfter (the reset an admitted one reports: on ties, prefer
// the longer t). A full tie is not before: the one already chosen stays.
func Before(d, b algorithms.Decision) bool {
	if d.Allowed != b.Allowed {
		return !d.Allowed
	}
	if d.Remaining != b.Remaining {
		return d.Remaining < b.Remaining
	}
	if !d.Allowed {
		if dw, bw := max(d.RetryAfter, d.NextAfter), max(b.RetryAfter, b.NextAfter); dw != bw {
			return dw > bw
		}
	}
	return d.ResetAfter > b.ResetAfter
}
