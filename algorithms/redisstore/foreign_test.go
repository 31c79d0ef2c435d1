package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// foreignSpecs has one spec of every kind.
var foreignSpecs = []algorithms.Spec{
	{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Minute},
	{Algorithm: algorithms.SlidingWindow, Limit: 5, Window: time.Minute},
	{Algorithm: algorithms.SlidingLog, Limit: 5, Window: time.Minute},
	{Algorithm: algorithms.SlidingBuckets, Limit: 5, Window: time.Minute, Buckets: 6},
	{Algorithm: algorithms.TokenBucket, Limit: 5, Window: time.Minute},
	{Algorithm: algorithms.LeakyBucket, Limit: 5, Window: time.Minute},
	{Algorithm: algorithms.LeakyQueue, Limit: 5, Window: time.Minute, MaxDelay: time.Second},
}

// TestForeignValueIsAnError: a key the store did not write (the
// application's own key, under a prefix that collides with the store's)
// is an error of the Take, never read as an empty state: not admitted and
// not overwritten. For every kind, a key holding a hash (another type) or
// a string the store cannot parse, alone in a Take (GET) or with another
// check (MGET, which returns nil for a key of another type), as a function
// and as a script.
func TestForeignValueIsAnError(t *testing.T) {
	ctx := context.Background()
	admin := newClient(t)
	clients := map[string]redis.UniversalClient{"function": newClient(t), "script": noFunctionsClient(t)}
	for name, client := range clients {
		for _, spec := range foreignSpecs {
			for _, foreign := range []string{"hash", "string"} {
				for _, n := range []int{1, 2} {
					prefix := uniquePrefix(t)
					s, err := redisstore.New(client, redisstore.WithPrefix(prefix))
					if err != nil {
						t.Fatal(err)
					}
					checks := []algorithms.Check{{Spec: spec, Key: "app"}}
					if n == 2 {
						checks = append(checks, algorithms.Check{Spec: foreignSpecs[0], Key: "other"})
					}
					key := redisKeys(prefix, checks[0])[0]
					if foreign == "hash" {
						err = admin.HSet(ctx, key, "user", "alice").Err()
					} else {
						err = admin.Set(ctx, key, "application data", 0).Err()
					}
					if err != nil {
						t.Fatal(err)
					}
					ds, err := s.Take(ctx, checks...)
					if err == nil {
						t.Errorf("%s %s %s with %d checks: Take = %+v, nil error; want an error", name, spec.Algorithm, foreign, n, ds)
					} else if !errors.Is(err, algorithms.ErrKeyState) {
						t.Errorf("%s %s %s with %d checks: Take error %q does not match algorithms.ErrKeyState", name, spec.Algorithm, foreign, n, err)
					}
					typ, _ := admin.Type(ctx, key).Result()
					if foreign == "hash" && typ != "hash" {
						t.Errorf("%s %s %s with %d checks: the application's hash was replaced (type %q)", name, spec.Algorithm, foreign, n, typ)
					}
					if foreign == "string" {
						if v, _ := admin.Get(ctx, key).Result(); v != "application data" {
							t.Errorf("%s %s %s with %d checks: the application's string was replaced by %q", name, spec.Algorithm, foreign, n, v)
						}
					}
					if n == 2 {
						if k := redisKeys(prefix, checks[1])[0]; admin.Exists(ctx, k).Val() != 0 {
							t.Errorf("%s %s %s with %d checks: the other check consumed though the Take failed", name, spec.Algorithm, foreign, n)
						}
					}
				}
			}
		}
	}
}

// TestForeignLogListIsAnError: sliding_log keeps its events in a second
// key (":l"); an application's list there, with the total's key absent or
// holding a number, is an error of the Take too (algorithms.ErrKeyState), not appended to and given an expiry. A list of
// events as the store writes them is the store's own whose total was
// evicted (both keys expire, and maxmemory may evict either alone): the
// Take rebuilds the total from it instead (TestSlidingLogTotalEvicted; the
// lists that are not the store's: TestSlidingLogListNotTheStores).
func TestForeignLogListIsAnError(t *testing.T) {
	ctx := context.Background()
	admin := newClient(t)
	prefix := uniquePrefix(t)
	s, err := redisstore.New(newClient(t), redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	// The list alone, and beside a number at the total's key: that one
	// failed with a bare script error ("malformed sliding_log event"),
	// which a circuit breaker counted as a failure of Redis.
	c := algorithms.Check{Spec: foreignSpecs[2]}
	for _, total := range []string{"", "2"} {
		c.Key = "app" + total
		keys := redisKeys(prefix, c)
		lkey := keys[1]
		if total != "" {
			if err := admin.Set(ctx, keys[0], total, 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := admin.RPush(ctx, lkey, "first", "second").Err(); err != nil {
			t.Fatal(err)
		}
		if ds, err := s.Take(ctx, c); err == nil {
			t.Errorf("total %q: Take = %+v, nil error; want an error", total, ds)
		} else if !errors.Is(err, algorithms.ErrKeyState) {
			t.Errorf("total %q: Take error %q does not match algorithms.ErrKeyState", total, err)
		}
		if items := admin.LRange(ctx, lkey, 0, -1).Val(); len(items) != 2 || items[0] != "first" {
			t.Errorf("total %q: the application's list is now %q", total, items)
		}
		if ttl := admin.PTTL(ctx, lkey).Val(); ttl != -1 {
			t.Errorf("total %q: the application's list was given an expiry (%s)", total, ttl)
		}
	}

	// The store's own list, its total gone: 3 of 5 units taken a second ago.
	clk := &manualClock{t: time.Unix(1_764_583_200, 0)}
	s, err = redisstore.New(newClient(t), redisstore.WithPrefix(prefix), redisstore.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	c.Key = "own"
	lkey := redisKeys(prefix, c)[1]
	if err := admin.RPush(ctx, lkey, "1764583199 0 3").Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.PExpire(ctx, lkey, time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if ds, err := s.Take(ctx, c); err != nil {
		t.Errorf("Take on the store's own list: %v", err)
	} else if !ds[0].Allowed || ds[0].Remaining != 1 {
		t.Errorf("Take on the store's own list = %+v, want admitted with Remaining 1", ds[0])
	}
}

// TestErrorsNameTheCall: an error Redis replies to a call of the store is
// wrapped as that call's ("redisstore: peek: ..."), not as a Take's: a
// Peek, a Refund and a GiveBack of a key holding a value the store did not
// write (standalone, and a Peek split over Cluster slots), and a Reset as
// a user that may not DEL. The key-state errors still match
// algorithms.ErrKeyState.
func TestErrorsNameTheCall(t *testing.T) {
	ctx := context.Background()
	admin := newClient(t)
	if err := admin.Do(ctx, "ACL", "SETUSER", "nodel", "reset", "on", "nopass", "~*", "&*", "+@all", "-del").Err(); err != nil {
		t.Fatal(err)
	}
	noDel := redis.NewClient(&redis.Options{Addr: sharedServer(t).Addr, Username: "nodel", Password: "any"})
	defer noDel.Close()
	spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 5, Window: time.Minute, MaxDelay: time.Second}
	admitted := []algorithms.Decision{{Allowed: true, Limit: 5}}
	for _, tc := range []struct {
		name    string
		client  redis.UniversalClient
		keys    []string // the first holds a foreign value, unless noDel
		call    func(s *redisstore.Store, checks []algorithms.Check) error
		want    string
		keyPart bool // matches algorithms.ErrKeyState
	}{
		{"take", admin, []string{"app"}, func(s *redisstore.Store, cs []algorithms.Check) error {
			_, err := s.Take(ctx, cs...)
			return err
		}, "redisstore: take: ", true},
		{"peek", admin, []string{"app"}, func(s *redisstore.Store, cs []algorithms.Check) error {
			return s.Peek(ctx, make([]algorithms.Decision, len(cs)), cs)
		}, "redisstore: peek: ", true},
		{"peek_cluster_split", nil, keysOnThreeSlots(), func(s *redisstore.Store, cs []algorithms.Check) error {
			return s.Peek(ctx, make([]algorithms.Decision, len(cs)), cs)
		}, "redisstore: peek: ", true},
		{"refund", admin, []string{"app"}, func(s *redisstore.Store, cs []algorithms.Check) error {
			return s.Refund(ctx, make([]algorithms.Refunded, len(cs)), cs, admitted, 0)
		}, "redisstore: refund: ", true},
		{"give_back", admin, []string{"app"}, func(s *redisstore.Store, cs []algorithms.Check) error {
			return s.GiveBack(ctx, make([]algorithms.Refunded, len(cs)), cs, admitted, 0)
		}, "redisstore: give-back: ", true},
		{"reset", noDel, []string{"app"}, func(s *redisstore.Store, cs []algorithms.Check) error {
			return s.Reset(ctx, cs...)
		}, "redisstore: reset: NOPERM", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, seed := tc.client, redis.UniversalClient(admin)
			if client == nil {
				c := sharedCluster(t)
				client, seed = c, c
			}
			prefix := uniquePrefix(t)
			s, err := redisstore.New(client, redisstore.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			var checks []algorithms.Check
			for _, k := range tc.keys {
				checks = append(checks, algorithms.Check{Spec: spec, Key: k})
			}
			if tc.client != noDel {
				if err := seed.Set(ctx, redisKeys(prefix, checks[0])[0], "application data", 0).Err(); err != nil {
					t.Fatal(err)
				}
			}
			err = tc.call(s, checks)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("%s error = %v, want one beginning %q", tc.name, err, tc.want)
			}
			if errors.Is(err, algorithms.ErrKeyState) != tc.keyPart {
				t.Fatalf("%s error %q: matches algorithms.ErrKeyState %v, want %v", tc.name, err, !tc.keyPart, tc.keyPart)
			}
		})
	}
}
