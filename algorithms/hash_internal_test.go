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

// TestStoresHashUnderTheirOwnSeeds: the store keeps only a key's 64-bit
// hash, so two keys of equal hash share state. The hash is keyed by a seed
// drawn for each store, so that a client cannot search offline for a key
// colliding with another client's (to lock it out or share its quota) nor
// for many keys of one shard or slot (standards.md 7.3, seeded hashing):
// two stores hash the same keys differently. A seed fixed at build time
// fails this.
func TestStoresHashUnderTheirOwnSeeds(t *testing.T) {
	a, errA := NewMemoryStore()
	b, errB := NewMemoryStore()
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	defer a.Close()
	defer b.Close()
	same := 0
	keys := []string{"per-ip:192.0.2.1", "per-ip:192.0.2.2", "login:9:192.0.2.1", "per-user:alice", "", "x"}
	for _, k := range keys {
		if a.hash(k) == b.hash(k) {
			same++
		}
	}
	if same == len(keys) {
		t.Errorf("two stores hash all of %q alike: the seed is not drawn per store", keys)
	}
}
