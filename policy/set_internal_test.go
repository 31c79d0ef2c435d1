package policy

import (
	"net/http"
	"strconv"
	"testing"
)

// TestHeaderCacheBounded: the cache of header values holds at most
// maxCachedSubsets subsets; the values of the subsets asked for after it
// is full are built each time, and stay right.
func TestHeaderCacheBounded(t *testing.T) {
	key := func(r *http.Request) (string, error) { return r.RemoteAddr, nil }
	var ps []*Policy
	for i := range 11 { // 2048 subsets
		ps = append(ps, Must(PerMinute("p"+strconv.Itoa(i), int64(i+1), key)))
	}
	s, err := NewSet(ps)
	if err != nil {
		t.Fatal(err)
	}
	for mask := uint64(1); mask < 1<<len(ps)-1; mask++ {
		if got, want := s.PolicyHeader(mask), s.build(mask).ietf; got != want {
			t.Fatalf("PolicyHeader(%b) = %s, want %s", mask, got, want)
		}
	}
	if got := len(*s.cache.Load()); got != maxCachedSubsets {
		t.Errorf("%d subsets cached after asking for %d, want %d", got, 1<<len(ps)-2, maxCachedSubsets)
	}
}
