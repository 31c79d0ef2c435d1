package algorithms

import (
	"hash/maphash"
	"strings"
	"testing"
)

// TestHashIsMaphashString keeps the store's key hash the keyed hash its
// collision bound is stated for: maphash.String under the store's seed
// (mapped from 0 to 1), for keys of every length up to past maphash's
// buffer, the empty key included.
func TestHashIsMaphashString(t *testing.T) {
	s, err := NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("203.0.113.7/per-ip:", 40)
	for n := 0; n <= len(long); n++ {
		key := long[:n]
		want := maphash.String(s.seed, key)
		if want == 0 {
			want = 1
		}
		if got := s.hash(key); got != want {
			t.Fatalf("hash(%q) = %#x, want maphash.String's %#x", key, got, want)
		}
	}
}
