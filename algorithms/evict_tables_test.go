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
	login := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Hour}
	perIP := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Hour}
	s, _ := newStore(t, algorithms.WithMaxKeys(256)) // one shard of 256 keys
	var victims []algorithms.Check
	for i := range 16 {
		v := algorithms.Check{Spec: login, Key: "user" + strconv.Itoa(i)}
		victims = append(victims, v)
		take(t, s, v, v, v, v, v)
	}
	for i := range 2000 {
		take(t, s, algorithms.Check{Spec: perIP, Key: "flood" + strconv.Itoa(i)})
	}
	evicted := 0
	for _, v := range victims {
		if take(t, s, v)[0].Allowed {
			evicted++
		}
	}
	if evicted > 0 {
		t.Errorf("%d of %d clients at their limit were evicted by a flood of keys of one request each under another spec", evicted, len(victims))
	}
}
