// Package peercheck holds the checks, shared by the benchmark packages,
// that a peer runs as its documentation sets it up.
package peercheck

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/throttled/throttled/v2"
)

// ThrottledBound checks that st, a throttled store, keeps a key through
// maxKeys-1 newer ones and forgets it at the maxKeys-th (the least
// recently used): a bounded memstore, as throttled's README makes it
// (memstore.NewCtx(0) never evicts).
func ThrottledBound(t testing.TB, st throttled.GCRAStoreCtx, maxKeys int) {
	t.Helper()
	ctx := context.Background()
	put := func(k string) {
		if ok, err := st.SetIfNotExistsWithTTL(ctx, k, 1, time.Hour); err != nil || !ok {
			t.Fatalf("SetIfNotExistsWithTTL(%q) = %v, %v; want a new key", k, ok, err)
		}
	}
	held := func(k string) bool {
		v, _, err := st.GetWithTime(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		return v != -1
	}
	put("first")
	for i := range maxKeys - 1 {
		put("k" + strconv.Itoa(i))
	}
	if !held("first") {
		t.Fatalf("throttled's store forgot a key among %d, at or under its bound of %d", maxKeys, maxKeys)
	}
	// GetWithTime made "first" the most recent: "k0" is the oldest now.
	put("one more")
	if held("k0") {
		t.Fatalf("throttled's store holds %d keys without evicting any: its store is unbounded, not bounded at %d as its README sets it up", maxKeys+1, maxKeys)
	}
}
