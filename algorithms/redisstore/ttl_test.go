package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// keysUnder returns every key under prefix (SCAN: tests may look keys up
// by pattern, the store never does).
func keysUnder(t *testing.T, c redis.UniversalClient, prefix string) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	scan := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, prefix+":*", 100).Iterator()
		for iter.Next(ctx) {
			out = append(out, iter.Val())
		}
		return iter.Err()
	}
	var err error
	switch cc := c.(type) {
	case *redis.ClusterClient:
		mu := make(chan struct{}, 1)
		err = cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			mu <- struct{}{}
			defer func() { <-mu }()
			return scan(ctx, m)
		})
	case *redis.Client:
		err = scan(ctx, cc)
	default:
		t.Fatalf("keysUnder: client %T", c)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEveryKeyExpires: on the server's clock, after every Take of a random
// trace over every kind (stacked checks, repeated keys, denials), every key
// the store holds has an expiry, and the keys of each check the Take
// admitted expire no earlier than its ResetAfter and no more than a few
// milliseconds later: no key outlives the time its state can matter. The
// same runs with WithMinTTL, whose expiry is at least the minimum and at
// most the larger of it and ResetAfter; with WithClock, whose keys live at
// least DefaultClockTTL, which hides an expiry too short or too long for
// the state, so also with WithClock and WithMinTTL(0), whose keys expire
// (in Redis's real time) the ResetAfter the injected instant decided after
// the Take; and on a three-node cluster, where cross-slot Takes
// reserve and undo, and write side keys, which expire no later than the
// state of their keys can matter.
func TestEveryKeyExpires(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cluster  bool
		minTTL   time.Duration
		injected bool
	}{
		{"standalone", false, 0, false},
		{"standalone_min_ttl", false, 5 * time.Minute, false},
		{"injected_clock", false, redisstore.DefaultClockTTL, true},
		{"injected_clock_min_ttl_0", false, 0, true},
		{"cluster", true, 0, false},
		{"cluster_injected_clock", true, redisstore.DefaultClockTTL, true},
		{"cluster_injected_clock_min_ttl_0", true, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var client redis.UniversalClient
			if tc.cluster {
				client = sharedCluster(t)
			} else {
				client = newClient(t)
			}
			prefix := uniquePrefix(t)
			opts := []redisstore.Option{redisstore.WithPrefix(prefix)}
			clk := &manualClock{t: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}
			switch {
			case tc.injected && tc.minTTL == 0:
				opts = append(opts, redisstore.WithClock(clk), redisstore.WithMinTTL(0))
			case tc.injected:
				opts = append(opts, redisstore.WithClock(clk))
			case tc.minTTL > 0:
				opts = append(opts, redisstore.WithMinTTL(tc.minTTL))
			}
			s, err := redisstore.New(client, opts...)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			r := newRand(7)
			var specs []algorithms.Spec
			for _, k := range algorithms.Kinds {
				specs = append(specs, smallSpec(k))
				long := smallSpec(k)
				long.Window = time.Hour
				if k == algorithms.LeakyQueue {
					long.MaxDelay = 30 * time.Minute
				}
				specs = append(specs, long)
			}
			keys := []string{"a", "b"}
			if tc.cluster {
				keys = keysOnThreeSlots()
			}
			// slowest is the longest round trip of a Take so far: a
			// window key rewritten in the window it holds keeps the expiry
			// of its first write there (KEEPTTL), which Redis counted from
			// the moment of that SET, up to that Take's whole round trip
			// after its TIME when the server was descheduled between the
			// two (seen at 5.5 ms on a loaded machine).
			var slowest time.Duration
			for i := range 300 {
				if tc.injected {
					step(r, clk, time.Second)
				}
				checks := make([]algorithms.Check, 1+r.IntN(3))
				for j := range checks {
					sp := specs[r.IntN(len(specs))]
					checks[j] = algorithms.Check{Spec: sp, Key: keys[r.IntN(len(keys))], Cost: 1 + r.Int64N(2)}
				}
				checks = algotest.FitRepeats(checks) // each key within what it ever admits at once
				start := time.Now()
				d, err := s.Take(ctx, checks...)
				if err != nil {
					t.Fatal(err)
				}
				all := true
				for _, x := range d {
					all = all && x.Allowed
				}
				// The keys the Take may have written; the prefix is
				// scanned once, after the trace: a scan at every take
				// walked the whole keyspace of the server the package's
				// tests share.
				for _, c := range checks {
					for _, k := range append(redisKeys(prefix, c), sideKeys(prefix, c)...) {
						pttl, err := client.PTTL(ctx, k).Result()
						if err != nil {
							t.Fatal(err)
						}
						if pttl == -1 {
							t.Fatalf("take %d %+v: key %s has no expiry", i, checks, k)
						}
					}
				}
				slowest = max(slowest, time.Since(start)) // denied too: a cross-slot reservation writes
				if !all {
					continue
				}
				for j, c := range checks {
					// The expiry is set from the check's last occurrence in the Take.
					last := true
					for _, o := range checks[j+1:] {
						last = last && (o.Key != c.Key || o.Spec != c.Spec)
					}
					if !last {
						continue
					}
					ks := redisKeys(prefix, c)
					for _, k := range ks {
						pttl, err := client.PTTL(ctx, k).Result()
						if err != nil {
							t.Fatal(err)
						}
						elapsed := time.Since(start) // from before the Take to after the PTTL
						reset := d[j].ResetAfter
						lo, hi := reset-elapsed-time.Millisecond, reset+3*time.Millisecond+slowest
						if tc.minTTL > 0 {
							lo, hi = max(lo, tc.minTTL-elapsed-time.Millisecond), max(hi, tc.minTTL+time.Millisecond)
						}
						if pttl < lo || pttl > hi {
							t.Fatalf("take %d %+v: key %s expires in %v, want within [%v, %v] (ResetAfter %v, %v elapsed, slowest Take %v)", i, checks, k, pttl, lo, hi, reset, elapsed, slowest)
						}
					}
					// A side key, when there is one, expires no later
					// than the key's state can matter (a plain Take
					// leaves it as an earlier reservation set it).
					for _, sk := range sideKeys(prefix, c) {
						pttl, err := client.PTTL(ctx, sk).Result()
						if err != nil {
							t.Fatal(err)
						}
						hi := d[j].ResetAfter + 3*time.Millisecond + slowest
						if tc.minTTL > 0 {
							hi = max(hi, tc.minTTL+time.Millisecond)
						}
						if tc.injected && tc.minTTL == 0 {
							// An earlier reservation gave it its
							// ResetAfter in Redis's real time, which the
							// injected clock has outrun since: it is
							// bounded by the longest a sliding_log or
							// sliding_buckets state can matter, a
							// window and a bucket.
							w := c.Spec.Window
							if c.Spec.Buckets > 0 {
								w += c.Spec.Window / time.Duration(c.Spec.Buckets)
							}
							hi = max(hi, w+3*time.Millisecond+slowest)
						}
						if pttl != -2 && pttl > hi {
							t.Fatalf("take %d %+v: side key %s expires in %v, want at most %v (ResetAfter %v)", i, checks, sk, pttl, hi, d[j].ResetAfter)
						}
					}
				}
			}
			for _, k := range keysUnder(t, client, prefix) {
				if pttl := client.PTTL(ctx, k).Val(); pttl == -1 {
					t.Fatalf("after the trace: key %s has no expiry", k)
				}
			}
		})
	}
}

// redisKeys returns the Redis keys of check c under prefix, as doc.go
// documents them (the client keys here need no escaping).
func redisKeys(prefix string, c algorithms.Check) []string {
	abbr := map[algorithms.Kind]string{
		algorithms.FixedWindow: "fw", algorithms.SlidingLog: "sl", algorithms.SlidingWindow: "sw", algorithms.SlidingBuckets: "sb",
		algorithms.TokenBucket: "tb", algorithms.LeakyBucket: "lb", algorithms.LeakyQueue: "lq",
	}
	s := c.Spec
	k := fmt.Sprintf("%s:{%s}:%s:%d:%d:%d:%d:%d", prefix, c.Key, abbr[s.Algorithm], s.Limit, int64(s.Window), s.Burst, s.Buckets, int64(s.MaxDelay))
	if s.Algorithm == algorithms.SlidingLog {
		return []string{k, k + ":l"}
	}
	return []string{k}
}

// sideKeys returns the side key of check c under prefix, which a
// cross-slot reservation of a sliding_log or sliding_buckets key writes
// (doc.go, "Keys and expiry"), or none.
func sideKeys(prefix string, c algorithms.Check) []string {
	if k := c.Spec.Algorithm; k != algorithms.SlidingLog && k != algorithms.SlidingBuckets {
		return nil
	}
	return []string{redisKeys(prefix, c)[0] + ":u"}
}

// TestServerTimeByDefault: without WithClock every Take reads the Redis
// server's clock (one TIME inside the script, counted by the server's
// command statistics, which count commands scripts and functions run);
// with WithClock none does, and the injected instant decides: a fixed
// window of an hour reports the ResetAfter of the injected instant, not of
// the server's.
func TestServerTimeByDefault(t *testing.T) {
	srv := redistest.New(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	ctx := context.Background()
	timeCalls := func() int {
		t.Helper()
		info, err := client.Info(ctx, "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(info, "\n") {
			if rest, ok := strings.CutPrefix(line, "cmdstat_time:calls="); ok {
				n, err := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
		}
		return 0
	}
	hour := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Hour}
	everyKindAndHour := append(everyKind("k"), algorithms.Check{Spec: hour, Key: "h"})
	for _, name := range []string{"function", "script"} {
		t.Run(name, func(t *testing.T) {
			c := client
			if name == "script" {
				if err := client.Do(ctx, "ACL", "SETUSER", "nofunctions", "on", "nopass", "~*", "&*", "+@all", "-function", "-fcall", "-fcall_ro").Err(); err != nil {
					t.Fatal(err)
				}
				c = redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "nofunctions", Password: "any"})
				defer c.Close()
			}
			s, err := redisstore.New(c, redisstore.WithPrefix(uniquePrefix(t)))
			if err != nil {
				t.Fatal(err)
			}
			clk := &manualClock{t: time.Date(2026, 11, 30, 7, 15, 0, 0, time.UTC)}
			injected, err := redisstore.New(c, redisstore.WithPrefix(uniquePrefix(t)), redisstore.WithClock(clk))
			if err != nil {
				t.Fatal(err)
			}
			// Load the code first (a load may retry the call).
			if _, err := s.Take(ctx, everyKindAndHour[0]); err != nil {
				t.Fatal(err)
			}
			for n := 1; n <= len(everyKindAndHour); n++ {
				before := timeCalls()
				if _, err := s.Take(ctx, everyKindAndHour[:n]...); err != nil {
					t.Fatal(err)
				}
				if got := timeCalls() - before; got != 1 {
					t.Fatalf("a Take of %d checks on the server's clock ran TIME %d times, want 1", n, got)
				}
				before = timeCalls()
				d, err := injected.Take(ctx, everyKindAndHour[:n]...)
				if err != nil {
					t.Fatal(err)
				}
				if got := timeCalls() - before; got != 0 {
					t.Fatalf("a Take of %d checks with WithClock ran TIME %d times, want 0", n, got)
				}
				if len(d) != n {
					t.Fatalf("%d decisions for %d checks", len(d), n)
				}
			}
			// The injected instant decides: at 07:15 an hour's fixed window
			// ends in 45 minutes, whatever the server's clock says.
			d, err := injected.Take(ctx, algorithms.Check{Spec: hour, Key: "fresh"})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := d[0].ResetAfter, 45*time.Minute; !d[0].Allowed || got != want {
				t.Fatalf("WithClock at 07:15: the hour window's decision = %+v, want admitted with ResetAfter %v", d[0], want)
			}
		})
	}
}
