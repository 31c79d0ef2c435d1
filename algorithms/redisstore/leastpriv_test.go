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

// TestLeastPrivilegeUser runs every call of the store (a stacked Take of
// each kind, a Peek, a GiveBack, a Refund, a Reset) as a user given what
// the package documentation says it needs: the keys under the prefix, the
// commands of @read, @write and @scripting, and TIME, on a fresh server,
// whose library that user loads; and, with an injected clock, without
// TIME. Without TIME, on the server's clock, a Take fails.
func TestLeastPrivilegeUser(t *testing.T) {
	srv := redistest.New(t)
	ctx := context.Background()
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer admin.Close()
	for _, tc := range []struct {
		name  string
		time  bool // the user may run TIME
		clock bool // the store has an injected clock
		ok    bool
	}{
		{"server_clock", true, false, true},
		{"injected_clock_no_time", false, true, true},
		{"server_clock_no_time", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := uniquePrefix(t)
			args := []any{"ACL", "SETUSER", "least-" + tc.name, "reset", "on", "nopass", "~" + prefix + ":*", "+@read", "+@write", "+@scripting"}
			if tc.time {
				args = append(args, "+time")
			}
			if err := admin.Do(ctx, args...).Err(); err != nil {
				t.Fatal(err)
			}
			if err := admin.FunctionFlush(ctx).Err(); err != nil { // the user loads it
				t.Fatal(err)
			}
			client := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "least-" + tc.name, Password: "any"})
			defer client.Close()
			opts := []redisstore.Option{redisstore.WithPrefix(prefix)}
			if tc.clock {
				opts = append(opts, redisstore.WithClock(&manualClock{t: time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)}))
			}
			s, err := redisstore.New(client, opts...)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range everyKind("k") {
				checks := []algorithms.Check{c, {Spec: c.Spec, Key: "ns:k"}}
				ds, err := s.Take(ctx, checks...)
				if !tc.ok {
					if err == nil {
						t.Fatalf("%s: Take on the server's clock as a user that may not run TIME = %+v, want an error", c.Spec.Algorithm, ds)
					}
					return
				}
				if err != nil {
					t.Fatalf("%s: Take: %v", c.Spec.Algorithm, err)
				}
				if err := s.Peek(ctx, make([]algorithms.Decision, 2), checks); err != nil {
					t.Fatalf("%s: Peek: %v", c.Spec.Algorithm, err)
				}
				if c.Spec.Algorithm == algorithms.LeakyQueue {
					if err := s.Refund(ctx, make([]algorithms.Refunded, 2), checks, ds, 0); err != nil {
						t.Fatalf("%s: Refund: %v", c.Spec.Algorithm, err)
					}
				} else if err := s.GiveBack(ctx, make([]algorithms.Refunded, 2), checks, ds, 0); err != nil {
					t.Fatalf("%s: GiveBack: %v", c.Spec.Algorithm, err)
				}
				if err := s.Reset(ctx, checks...); err != nil {
					t.Fatalf("%s: Reset: %v", c.Spec.Algorithm, err)
				}
			}
			if n, err := admin.FunctionList(ctx, redis.FunctionListQuery{}).Result(); err != nil || len(n) != 1 {
				t.Errorf("libraries after the calls = %v, %v; want the store's, loaded by the user", n, err)
			}
		})
	}
}
