package redisstore_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// TestPeekAsReadOnlyKeysUser peeks as a user whose ACL lets it read the
// store's keys but not write them (Redis 7 key permissions, %R~: a status
// page's or a dashboard's user), through the function and, as a user that
// may not use functions either, the script fallback. FCALL and EVALSHA
// declare their keys read-write, so Redis refuses them such a user's keys
// whatever the code does; FCALL_RO, EVALSHA_RO and EVAL_RO declare them
// read-only, and run the Peek, which writes nothing. The Peeks succeed,
// agree with the writing store's own, and, once one found the read-write
// call refused, each later one is one read-only call. A Take of that user
// still fails (Redis refuses its keys), consuming nothing.
func TestPeekAsReadOnlyKeysUser(t *testing.T) {
	srv := sharedServer(t)
	admin := newClient(t)
	ctx := context.Background()
	for _, u := range []struct{ name, rules, want string }{
		{"peekreadkeys", "+@all", "fcall_ro"},
		{"peekreadkeys-nofn", "+@all -function -fcall -fcall_ro", "evalsha_ro"},
	} {
		t.Run(u.name, func(t *testing.T) {
			args := []any{"ACL", "SETUSER", u.name, "reset", "on", "nopass", "%R~*", "&*"}
			for _, r := range strings.Fields(u.rules) {
				args = append(args, r)
			}
			if err := admin.Do(ctx, args...).Err(); err != nil {
				t.Fatal(err)
			}
			prefix := uniquePrefix(t)
			clk := &manualClock{t: time.Date(2026, 11, 30, 6, 0, 0, 123456789, time.UTC)}
			writer, err := redisstore.New(admin, redisstore.WithClock(clk), redisstore.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			held := everyKind("k")
			for range 3 {
				if _, err := writer.Take(ctx, held...); err != nil {
					t.Fatal(err)
				}
				clk.t = clk.t.Add(100 * time.Millisecond)
			}
			roClient := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: u.name, Password: "any"})
			defer roClient.Close()
			hook := &countHook{}
			roClient.AddHook(hook)
			reader, err := redisstore.New(roClient, redisstore.WithClock(clk), redisstore.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			checks := append(held, everyKind("unknown")...)
			before := snapshot(t, admin, prefix)
			for i := range 3 {
				hook.take()
				got := make([]algorithms.Decision, len(checks))
				if err := reader.Peek(ctx, got, checks); err != nil {
					t.Fatalf("Peek %d as a user that may read the keys but not write them: %v", i, err)
				}
				if sent := hook.take(); i > 0 && !slices.Equal(sent, []string{u.want}) {
					t.Errorf("Peek %d sent %v, want one %s", i, sent, u.want)
				}
				want := make([]algorithms.Decision, len(checks))
				if err := writer.Peek(ctx, want, checks); err != nil {
					t.Fatal(err)
				}
				for j := range got {
					if got[j] != want[j] {
						t.Errorf("Peek %d, check %d: as %s %+v, as the writer %+v", i, j, u.name, got[j], want[j])
					}
				}
			}
			if ds, err := reader.Take(ctx, held[0]); err == nil {
				t.Errorf("Take as %s = %+v, want Redis's refusal of its keys", u.name, ds)
			}
			if after := snapshot(t, admin, prefix); !slices.Equal(before, after) {
				t.Fatalf("the reader changed the keys:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// TestClusterPeekAsReadOnlyKeysUser is TestPeekAsReadOnlyKeysUser on the
// Cluster: a Peek of keys on every node (one call per slot) and of one
// key, as a user that may read the keys but not write them (the user
// made on every node: ACLs are not shared in a cluster), agree with the
// writer's.
func TestClusterPeekAsReadOnlyKeysUser(t *testing.T) {
	writerClient := sharedCluster(t)
	ctx := context.Background()
	for _, n := range clusterSrv.Nodes {
		if _, err := n.Do("ACL", "SETUSER", "peekreadkeys", "on", "nopass", "%R~*", "&*", "+@all"); err != nil {
			t.Fatal(err)
		}
	}
	roClient := redis.NewClusterClient(&redis.ClusterOptions{Addrs: clusterSrv.Addrs(), Username: "peekreadkeys", Password: "any"})
	defer roClient.Close()
	prefix := uniquePrefix(t)
	clk := &manualClock{t: time.Date(2026, 11, 30, 6, 0, 0, 123456789, time.UTC)}
	writer, err := redisstore.New(writerClient, redisstore.WithClock(clk), redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	reader, err := redisstore.New(roClient, redisstore.WithClock(clk), redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	spec := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 5, Window: time.Second}
	var checks []algorithms.Check
	for _, k := range keysOnThreeSlots() {
		checks = append(checks, algorithms.Check{Spec: spec, Key: k})
	}
	if _, err := writer.Take(ctx, checks...); err != nil {
		t.Fatal(err)
	}
	for _, cs := range [][]algorithms.Check{checks, checks[:1], checks} {
		got := make([]algorithms.Decision, len(cs))
		if err := reader.Peek(ctx, got, cs); err != nil {
			t.Fatalf("Peek of %d keys as a user that may read the keys but not write them: %v", len(cs), err)
		}
		want := make([]algorithms.Decision, len(cs))
		if err := writer.Peek(ctx, want, cs); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("Peek of %d keys: as the reader %+v, as the writer %+v", len(cs), got, want)
		}
	}
}
