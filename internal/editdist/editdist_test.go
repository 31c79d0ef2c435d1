package editdist

import "testing"

// TestDistance pins the optimal string alignment distance the "did you
// mean" advice judges by: a swap of neighbours is one edit, not two.
func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"limit", "limit", 0},
		{"limt", "limit", 1},
		{"lmiit", "limit", 1},
		{"algoritm", "algorithm", 1},
		{"polices", "policies", 1},
		{"trusted_proxy", "trusted_proxies", 3},
		{"cost", "count", 2},
		{"ca", "abc", 3},
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := Distance(tc.b, tc.a); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.b, tc.a, got, tc.want)
		}
	}
}
