package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// TestFastPathCommands checks doc.go's "(the fast path) decides a plain
// Take ... with one GET or MGET, one SET per key" by the server's command
// statistics (which count the commands a function runs): a Take of one
// check sends one GET and one SET; a Take of three checks one MGET and
// three SETs, plus a GET for each key MGET found missing (MGET reads a
// key of another type as missing; the GET tells it apart and fails on
// it), and none once the keys exist. Each Take reads TIME once.
func TestFastPathCommands(t *testing.T) {
	srv := redistest.New(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	ctx := context.Background()
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Hour}
	tb := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 100, Window: time.Hour}
	warmUp(t, client, algorithms.Check{Spec: spec, Key: "warm"}) // loads the library
	s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	one := []algorithms.Check{{Spec: spec, Key: "a"}}
	three := []algorithms.Check{{Spec: spec, Key: "b"}, {Spec: tb, Key: "b"}, {Spec: spec, Key: "c"}}
	for _, tc := range []struct {
		name   string
		checks []algorithms.Check
		want   map[string]int64
	}{
		{"one check, new key", one, map[string]int64{"fcall": 1, "time": 1, "get": 1, "set": 1}},
		{"one check, existing key", one, map[string]int64{"fcall": 1, "time": 1, "get": 1, "set": 1}},
		{"three checks, new keys", three, map[string]int64{"fcall": 1, "time": 1, "mget": 1, "get": 3, "set": 3}},
		{"three checks, existing keys", three, map[string]int64{"fcall": 1, "time": 1, "mget": 1, "set": 3}},
	} {
		if err := client.ConfigResetStat(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		ds, err := s.Take(ctx, tc.checks...)
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range ds {
			if !d.Allowed {
				t.Fatalf("%s: check %d denied: %+v", tc.name, i, d)
			}
		}
		calls := commandCalls(t, client)
		delete(calls, "config|resetstat")
		if len(calls) != len(tc.want) {
			t.Errorf("%s: commands %v, want %v", tc.name, calls, tc.want)
			continue
		}
		for c, n := range tc.want {
			if calls[c] != n {
				t.Errorf("%s: commands %v, want %v", tc.name, calls, tc.want)
				break
			}
		}
	}
}
