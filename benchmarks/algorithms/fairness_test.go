package algorithms_test

import (
	"testing"
)

// TestHttprateDeciderCountsWhereItReads checks that the httprate decider
// does httprate's work: the requests it counts are the ones the limiter's
// next decision reads (OnLimit counts in the window calculateRate reads).
// A decider that counted in another window than the one Status reads would
// find both windows empty on every call, skip the counter's two map
// lookups, and never deny.
func TestHttprateDeciderCountsWhereItReads(t *testing.T) {
	d := newHttprate().(*httprateDecider)
	const n = 10
	for range n {
		if !d.allow("203.0.113.7") {
			t.Fatal("decision failed")
		}
	}
	_, rate, err := d.rl.Status("203.0.113.7")
	if err != nil {
		t.Fatal(err)
	}
	// Within the first window, or just after it rolls, the weighted rate
	// is between n-1 and n (rounded, as OnLimit rounds it).
	if rate < n-1 || rate > n {
		t.Fatalf("after %d admitted requests httprate's Status reads rate %v; want %d (the decider counts where the limiter does not read)", n, rate, n)
	}
}
