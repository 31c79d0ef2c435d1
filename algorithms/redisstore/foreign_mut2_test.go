package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// TestForeignKeyAfterALostTotal pins doc.go's "the Take fails before
// anything is written" (and GiveBack's "before anything is written") where
// a check before the foreign key is a sliding_log whose total was lost:
// loading that check rebuilds the total from its list and writes it back
// (with the list's expiry) before the foreign key is met. That is the only
// write: the call fails, the application's key is left as it is, nothing
// is consumed or given back (a Peek decides as before), and the rebuilt
// total is the list's sum, as any later call would write it.
func TestForeignKeyAfterALostTotal(t *testing.T) {
	ctx := context.Background()
	client := newClient(t)
	prefix := uniquePrefix(t)
	clk := &manualClock{t: time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)}
	s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	log := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 5, Window: time.Minute}, Key: "user"}
	app := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Minute}, Key: "app"}
	took, err := s.Take(ctx, log, algorithms.Check{Spec: log.Spec, Key: "user", Cost: 2})
	if err != nil {
		t.Fatal(err)
	}
	before := make([]algorithms.Decision, 1)
	if err := s.Peek(ctx, before, []algorithms.Check{log}); err != nil {
		t.Fatal(err)
	}
	lk, ak := redisKeys(prefix, log), redisKeys(prefix, app)[0]
	if err := client.Set(ctx, ak, "application data", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for _, call := range []struct {
		name string
		run  func() error
	}{
		{"Take", func() error { _, err := s.Take(ctx, log, app); return err }},
		{"GiveBack", func() error {
			return s.GiveBack(ctx, make([]algorithms.Refunded, 2), []algorithms.Check{log, app}, []algorithms.Decision{took[1], took[1]}, 0)
		}},
	} {
		if err := client.Del(ctx, lk[0]).Err(); err != nil { // the total alone, as an eviction would
			t.Fatal(err)
		}
		if err := call.run(); !errors.Is(err, algorithms.ErrKeyState) {
			t.Fatalf("%s with a foreign key after a lost total = %v, want an error matching algorithms.ErrKeyState", call.name, err)
		}
		if v, _ := client.Get(ctx, ak).Result(); v != "application data" {
			t.Errorf("%s: the application's key holds %q, want it left as it was", call.name, v)
		}
		after := make([]algorithms.Decision, 1)
		if err := s.Peek(ctx, after, []algorithms.Check{log}); err != nil {
			t.Fatal(err)
		}
		if after[0] != before[0] {
			t.Errorf("%s failed: the log now peeks %+v, want %+v (nothing consumed or given back)", call.name, after[0], before[0])
		}
		// The total and both expiry instants, read together: the rebuilt
		// total expires when its list does, within a millisecond (an
		// injected clock's keys live an hour at least, so "has an expiry"
		// alone passes a PX of half the list's, or of a thousand times it).
		var get *redis.StringCmd
		var exp [2]*redis.Cmd
		if _, err := client.TxPipelined(ctx, func(p redis.Pipeliner) error {
			get = p.Get(ctx, lk[0])
			exp[0], exp[1] = p.Do(ctx, "PEXPIRETIME", lk[0]), p.Do(ctx, "PEXPIRETIME", lk[1])
			return nil
		}); err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		total, err := get.Result()
		te, _ := exp[0].Int64()
		le, _ := exp[1].Int64()
		if err != nil || total != "3" || te <= 0 || te < le-1 || te > le+1 {
			t.Errorf("%s: the lost total is %q (%v) expiring at %v ms, the list at %v ms; want \"3\" rebuilt from the list with its expiry", call.name, total, err, te, le)
		}
	}
}

// TestSlidingLogListTheStoresAtTheEdges is TestSlidingLogListNotTheStores'
// other side: a list without its total whose items are events as doc.go
// describes the store's, at the edges of each rule (15-digit integers, a
// negative second, n = 10^9 − 1, equal instants, costs summing to just
// below 2^52), is the store's: the Take is decided on the events it holds
// (a limit of 5 per minute: those far out of the window leave it).
func TestSlidingLogListTheStoresAtTheEdges(t *testing.T) {
	ctx := context.Background()
	admin := newClient(t)
	now := int64(1_764_583_200)
	ev := func(s, ns, n int64) string { return fmt.Sprintf("%d %d %d", s, ns, n) }
	const big = 999_999_999_999_999 // 15 digits
	for _, tc := range []struct {
		items     []string
		allowed   bool
		remaining int64
	}{
		{slices.Repeat([]string{ev(now, 0, big)}, 4), false, 0}, // costs summing to 2^52 − 503599627370500
		{[]string{ev(-5, 0, 1), ev(100_000_000_000_000, 0, 2)}, true, 4},
		{[]string{ev(now-1, 999_999_999, 1), ev(now, 0, 1), ev(now, 0, 1)}, true, 1},
	} {
		for name, client := range map[string]redis.UniversalClient{"function": newClient(t), "script": noFunctionsClient(t)} {
			prefix := uniquePrefix(t)
			clk := &manualClock{t: time.Unix(now, 10)}
			s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithClock(clk))
			if err != nil {
				t.Fatal(err)
			}
			c := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 5, Window: time.Minute}, Key: "app"}
			lkey := redisKeys(prefix, c)[1]
			if err := admin.RPush(ctx, lkey, tc.items).Err(); err != nil {
				t.Fatal(err)
			}
			admin.Expire(ctx, lkey, time.Hour)
			ds, err := s.Take(ctx, c)
			if err != nil {
				t.Errorf("%s %q: Take error %v; want it decided (the store's list)", name, tc.items, err)
				continue
			}
			if ds[0].Allowed != tc.allowed || ds[0].Remaining != tc.remaining {
				t.Errorf("%s %q: Take = %+v, want Allowed %v, Remaining %d", name, tc.items, ds[0], tc.allowed, tc.remaining)
			}
		}
	}
}
