package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestGiveBackNoteExpiry: the note a token_bucket give-back writes (the
// key plus ":g") expires ceil(C·W/L) after the give-back's instant, rounded
// up to the millisecond plus 1 ms (doc.go, "Keys and expiry"), on the
// server's clock and without WithMinTTL, where nothing floors it: 6 units
// of capacity at 4 per second, 1.5 s. Its PTTL right after the call is
// within that less the real time the call took, and no more.
func TestGiveBackNoteExpiry(t *testing.T) {
	ctx := context.Background()
	client := newClient(t)
	prefix := uniquePrefix(t)
	s, err := redisstore.New(client, redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	c := []algorithms.Check{{Spec: algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 4, Window: time.Second, Burst: 6}, Key: "k", Cost: 2}}
	ds, err := s.Take(ctx, c...)
	if err != nil || !ds[0].Allowed {
		t.Fatalf("Take = %+v, %v", ds, err)
	}
	dst := make([]algorithms.Refunded, 1)
	start := time.Now()
	if err := s.GiveBack(ctx, dst, c, ds, 0); err != nil || !dst[0].Given {
		t.Fatalf("GiveBack = %+v, %v; want units given back", dst[0], err)
	}
	note := redisKeys(prefix, c[0])[0] + ":g"
	pttl, err := client.PTTL(ctx, note).Result()
	if err != nil {
		t.Fatal(err)
	}
	life := 1500 * time.Millisecond
	if lo, hi := life-time.Since(start), life+time.Millisecond; pttl < lo || pttl > hi {
		t.Fatalf("the give-back note %s expires in %v, want within [%v, %v]", note, pttl, lo, hi)
	}
}
