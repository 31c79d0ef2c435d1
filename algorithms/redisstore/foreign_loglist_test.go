package redisstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestForeignLogListBesideATotal: the application's list at a sliding_log's
// list key, beside a number at its total's key (both under a prefix that
// collides with the store's), is a key the store did not write, as the
// list alone is: the Take fails with an error that matches
// algorithms.ErrKeyState (so no circuit breaker counts it as Redis
// failing), and the list is left as it is. It failed with a bare script
// error ("malformed sliding_log event"), counted as a failure of Redis.
func TestForeignLogListBesideATotal(t *testing.T) {
	ctx := context.Background()
	admin := newClient(t)
	prefix := uniquePrefix(t)
	s, err := redisstore.New(newClient(t), redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	c := algorithms.Check{Spec: foreignSpecs[2], Key: "app"}
	keys := redisKeys(prefix, c)
	if err := admin.Set(ctx, keys[0], "2", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.RPush(ctx, keys[1], "first", "second").Err(); err != nil {
		t.Fatal(err)
	}
	if ds, err := s.Take(ctx, c); err == nil {
		t.Errorf("Take = %+v, nil error; want an error", ds)
	} else if !errors.Is(err, algorithms.ErrKeyState) {
		t.Errorf("Take error %q does not match algorithms.ErrKeyState", err)
	}
	if items := admin.LRange(ctx, keys[1], 0, -1).Val(); len(items) != 2 || items[0] != "first" {
		t.Errorf("the application's list is now %q", items)
	}
}
