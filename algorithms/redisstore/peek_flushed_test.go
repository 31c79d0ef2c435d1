package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/redis/go-redis/v9"
)

// TestPeekNeedsNoWritesWithoutTheLibrary: TestPeekNeedsNoWrites, on
// servers that no longer have the library (a restart, FUNCTION FLUSH):
// the store's Peek would load it first, which a server at its maxmemory
// (OOM) and a read-only replica (READONLY) refuse, and then failed with
// that refusal, though a Peek writes nothing; it runs as the script
// instead, which they answer. A Take there still fails (it would write).
func TestPeekNeedsNoWritesWithoutTheLibrary(t *testing.T) {
	master, replica := replicaPair(t)
	ctx := context.Background()
	admin := redis.NewClient(&redis.Options{Addr: master.Addr})
	defer admin.Close()
	c := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Hour}, Key: "peek"}
	clk := &manualClock{t: corruptT0}
	writer, err := redisstore.New(admin, redisstore.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writer.Take(ctx, c, c); err != nil { // 3 left, and the library loaded
		t.Fatal(err)
	}
	if err := admin.FunctionFlush(ctx).Err(); err != nil { // on the replica too
		t.Fatal(err)
	}
	if err := admin.Do(ctx, "WAIT", 1, 5000).Err(); err != nil {
		t.Fatal(err)
	}
	rc := redis.NewClient(&redis.Options{Addr: replica.Addr})
	defer rc.Close()
	if !hangguard.Poll(10*time.Second, 5*time.Millisecond, func() bool {
		libs, err := rc.FunctionList(ctx, redis.FunctionListQuery{}).Result()
		return err == nil && len(libs) == 0
	}) {
		t.Fatal("the replica kept the library 10s after FUNCTION FLUSH")
	}
	if err := admin.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	defer admin.ConfigSet(ctx, "maxmemory", "0")
	for _, srv := range []*redistest.Server{master, replica} {
		what := "at maxmemory"
		if srv == replica {
			what = "on a replica"
		}
		client := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
		defer client.Close()
		s, err := redisstore.New(client, redisstore.WithClock(clk))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			dst := make([]algorithms.Decision, 1)
			if err := s.Peek(ctx, dst, []algorithms.Check{c}); err != nil || !dst[0].Allowed || dst[0].Remaining != 3 {
				t.Errorf("%s, no library: Peek %d = %+v, %v; want allowed with 3 left", what, i, dst[0], err)
			}
		}
		if ds, err := s.Take(ctx, c); err == nil {
			t.Errorf("%s, no library: Take = %+v, nil error; want the server's refusal", what, ds)
		}
	}
}
