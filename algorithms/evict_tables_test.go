package algorithms_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// Clients being limited under one Spec, and a flood of new keys, each of
// one request, under another Spec of the same store, at the WithMaxKeys
// bound: the flood must evict its own keys (each using a small share of its
// capacity), not the limited clients' state, whatever table eviction looks
// at first.
func TestMemoryStoreFloodInOtherSpecKeepsLimitedClients(t *testing.T) {
	if evicted, clients := evictedByFlood(t, 5); evicted > 0 {
		t.Errorf("%d of %d clients at their limit were evicted by a flood of keys of one request each under another spec", evicted, clients)
	}
}

// evictedByFlood puts 16 clients of a fixed_window Spec of limit at their
// limit (one Take of limit checks each), floods the store, bounded to 256
// keys, with 2000 one-request keys under another Spec, and returns how
// many of the clients are admitted again (evicted), and how many there are.
func evictedByFlood(t *testing.T, limit int64) (evicted, clients int) {
	t.Helper()
	login := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: limit, Window: time.Hour}
	perIP := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Hour}
	s, _ := newStore(t, algorithms.WithMaxKeys(256)) // one shard of 256 keys
	var victims []algorithms.Check
	for i := range 16 {
		v := algorithms.Check{Spec: login, Key: "user" + strconv.Itoa(i)}
		victims = append(victims, v)
		all := make([]algorithms.Check, limit)
		for j := range all {
			all[j] = v
		}
		if ds := take(t, s, all...); !ds[len(ds)-1].Allowed || ds[len(ds)-1].Remaining != 0 {
			t.Fatalf("first Take of %s = %+v, want admitted, none left", v.Key, ds)
		}
	}
	for i := range 2000 {
		take(t, s, algorithms.Check{Spec: perIP, Key: "flood" + strconv.Itoa(i)})
	}
	for _, v := range victims {
		if take(t, s, v)[0].Allowed {
			evicted++
		}
	}
	return evicted, len(victims)
}
