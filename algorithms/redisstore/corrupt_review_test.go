package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// corruptT0 is the injected instant of the corrupt-state tests: 10 s into
// a minute, so sub-window 1 of a minute in six.
var corruptT0 = time.Date(2026, 11, 30, 7, 0, 10, 0, time.UTC)

// corruptCase is a value another writer left at a check's key (and, for
// sliding_log, the list beside it).
type corruptCase struct {
	value string
	list  []any
}

// takeCorrupt sets the case's value at c's keys on a fresh prefix, then
// Takes c up to 2·Limit times on a store through client; it returns how
// many were admitted before the first error, the value and list left at
// the keys, and that error.
func takeCorrupt(t *testing.T, admin, client redis.UniversalClient, c algorithms.Check, tc corruptCase) (admitted int, value string, list []string, err error) {
	t.Helper()
	ctx := context.Background()
	prefix := uniquePrefix(t)
	s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithClock(&manualClock{t: corruptT0}), redisstore.WithTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	keys := redisKeys(prefix, c)
	if err := admin.Set(ctx, keys[0], tc.value, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if tc.list != nil {
		if err := admin.RPush(ctx, keys[1], tc.list...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 * c.Spec.Limit {
		var ds []algorithms.Decision
		if ds, err = s.Take(ctx, c); err != nil {
			break
		}
		if ds[0].Allowed {
			admitted++
		}
	}
	value, _ = admin.Get(ctx, keys[0]).Result()
	if tc.list != nil {
		list, _ = admin.LRange(ctx, keys[1], 0, -1).Result()
	}
	return admitted, value, list, err
}

// corruptClients returns, on a server of its own (a value that made the
// script loop would keep it busy for every later test), an admin client
// and the store's clients: one running the library, one the script.
func corruptClients(t *testing.T) (admin redis.UniversalClient, clients map[string]redis.UniversalClient) {
	t.Helper()
	srv := redistest.New(t)
	opts := func(user string) *redis.Options {
		o := &redis.Options{Addr: srv.Addr, MaxRetries: -1, ReadTimeout: 2 * time.Second}
		if user != "" {
			o.Username, o.Password = user, "any"
		}
		return o
	}
	a := redis.NewClient(opts(""))
	t.Cleanup(func() { _ = a.Close() })
	if err := a.Do(context.Background(), "ACL", "SETUSER", "nofunctions", "on", "nopass", "~*", "&*", "+@all", "-function", "-fcall", "-fcall_ro").Err(); err != nil {
		t.Fatal(err)
	}
	clients = map[string]redis.UniversalClient{"function": redis.NewClient(opts("")), "script": redis.NewClient(opts("nofunctions"))}
	for _, c := range clients {
		t.Cleanup(func() { _ = c.Close() })
	}
	return a, clients
}

// TestCorruptBucketsStateIsAnError: a sliding_buckets key holding a value
// the store cannot have written ("w b sum" and "slot count" pairs, 0 <= b
// and every slot < Buckets, each slot once with a count of at least 1, the
// counts summing to sum) is an error matching algorithms.ErrKeyState, the
// value left as it is: not read as a state. Read so, text holding three
// integers was taken for a ring and overwritten, a negative sum admitted
// past the limit, and a sum no slot of the ring holds (or a newest
// sub-window outside the ring) made the script loop for good, Redis
// answering BUSY to every client. A value the store writes is still its
// state.
func TestCorruptBucketsStateIsAnError(t *testing.T) {
	admin, clients := corruptClients(t)
	spec := algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 5, Window: time.Minute, Buckets: 6}
	c := algorithms.Check{Spec: spec, Key: "app"}
	w := corruptT0.Unix() / 60 // the window of corruptT0; its sub-window is 1
	for _, name := range []string{"function", "script"} {
		for _, value := range []string{
			"application data 1 2 3",
			fmt.Sprintf("%d 1 -100", w),      // a negative sum
			fmt.Sprintf("%d 1 -1 1 -1", w),   // a negative count
			fmt.Sprintf("%d 1 3 1 2", w),     // counts short of the sum
			fmt.Sprintf("%d 1 2 1 2 0 1", w), // counts past the sum
			fmt.Sprintf("%d 1 2 7 2", w),     // a slot outside the ring
			fmt.Sprintf("%d 1 2 1 1 1 1", w), // a slot twice
			fmt.Sprintf("%d 1 0 1 0", w),     // a count of 0
			fmt.Sprintf("%d 1 2 1 2 x", w),   // trailing text
			fmt.Sprintf("%d 1 5", w),         // a sum no slot holds
			fmt.Sprintf("%d 99 0", w),        // a newest sub-window outside the ring
		} {
			admitted, left, _, err := takeCorrupt(t, admin, clients[name], c, corruptCase{value: value})
			if err == nil || !errors.Is(err, algorithms.ErrKeyState) {
				t.Errorf("%s, value %q: %d of %d Takes admitted (limit %d), then error %v; want the first Take to fail with algorithms.ErrKeyState", name, value, admitted, 2*spec.Limit, spec.Limit, err)
			} else if admitted != 0 {
				t.Errorf("%s, value %q: %d Takes admitted before the error %v; want none", name, value, admitted, err)
			}
			if left != value {
				t.Errorf("%s, value %q: the key holds %q after the Takes; want it left as it was", name, value, left)
			}
		}
		// The store's own values: slot 0 (sub-window 0) holds 1, slot 1
		// (sub-window 1, the newest) 2; three units left.
		for _, value := range []string{fmt.Sprintf("%d 1 3 0 1 1 2", w), fmt.Sprintf("%d 1 3 1 2 0 1", w)} {
			admitted, _, _, err := takeCorrupt(t, admin, clients[name], c, corruptCase{value: value})
			if err != nil || admitted != 2 {
				t.Errorf("%s, the store's value %q: %d of %d Takes admitted, error %v; want 2 admitted (3 units held of 5) and no error", name, value, admitted, 2*spec.Limit, err)
			}
		}
	}
}

// TestCorruptLogTotalIsAnError: a sliding_log total the store cannot have
// written (not a non-negative integer as it writes them, or smaller than
// the number of events its list holds, each of which counts at least 1) is
// an error matching algorithms.ErrKeyState, the keys left as they are. A
// negative total admitted past the limit, and "1.5" or "0x2" were read as
// numbers.
func TestCorruptLogTotalIsAnError(t *testing.T) {
	admin, clients := corruptClients(t)
	spec := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 5, Window: time.Minute}
	c := algorithms.Check{Spec: spec, Key: "app"}
	event := func(cost int) string { return fmt.Sprintf("%d 0 %d", corruptT0.Unix()-1, cost) }
	for _, name := range []string{"function", "script"} {
		for _, tc := range []corruptCase{
			{"-100", []any{event(1)}},
			{"0", []any{event(5)}},
			{"1", []any{event(1), event(1)}},
			{"1.5", []any{event(1)}},
			{"0x2", []any{event(2)}},
			{" 1", []any{event(1)}},
			{"1e0", []any{event(1)}},
			{"01", []any{event(1)}},
			{"-1", nil},
		} {
			admitted, left, list, err := takeCorrupt(t, admin, clients[name], c, tc)
			if err == nil || !errors.Is(err, algorithms.ErrKeyState) {
				t.Errorf("%s, total %q, list %v: %d of %d Takes admitted (limit %d), then error %v; want the first Take to fail with algorithms.ErrKeyState", name, tc.value, tc.list, admitted, 2*spec.Limit, spec.Limit, err)
			} else if admitted != 0 {
				t.Errorf("%s, total %q, list %v: %d Takes admitted before the error %v; want none", name, tc.value, tc.list, admitted, err)
			}
			if left != tc.value || len(list) != len(tc.list) {
				t.Errorf("%s, total %q, list %v: the keys hold %q and %v after the Takes; want them left as they were", name, tc.value, tc.list, left, list)
			}
		}
		// The store's own: a total of 3 over events of 1 and 2 (two units
		// left), and a total without its list (evicted: the log is empty).
		for _, tc := range []corruptCase{{"3", []any{event(1), event(2)}}, {"3", nil}} {
			want := 2
			if tc.list == nil {
				want = 5
			}
			admitted, _, _, err := takeCorrupt(t, admin, clients[name], c, tc)
			if err != nil || admitted != want {
				t.Errorf("%s, the store's total %q, list %v: %d of %d Takes admitted, error %v; want %d admitted and no error", name, tc.value, tc.list, admitted, 2*spec.Limit, err, want)
			}
		}
	}
}

// TestCorruptNumbersAreErrors: a state of the store's shape whose numbers
// it cannot have written — a count past the limit (here past 2^64), a
// bucket instant's nanoseconds of 10^9 or more, a remainder of L or more,
// a sliding_log event of such nanoseconds or a cost past 2^52, an event
// whose cost its total does not cover — is an error matching
// algorithms.ErrKeyState, the keys left as they are. The script computed
// with them: replies past int64 ("unexpected value -9223372036854775808 in
// script reply", an error no key's, which a breaker counts against Redis),
// a sliding_log rewritten with the garbage, or a total left negative,
// after one Take admitted on it.
func TestCorruptNumbersAreErrors(t *testing.T) {
	admin, clients := corruptClients(t)
	const big = "99999999999999999999" // past 2^64
	k, s := corruptT0.Unix()/60, corruptT0.Unix()
	event := func(sec int64, ns, cost string) string { return fmt.Sprintf("%d %s %s", sec, ns, cost) }
	for _, tc := range []struct {
		spec algorithms.Spec
		corruptCase
	}{
		{algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Minute}, corruptCase{fmt.Sprintf("%d %s", k, big), nil}},
		{algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 5, Window: time.Minute}, corruptCase{fmt.Sprintf("%d %s 0", k, big), nil}},
		{algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 5, Window: time.Minute}, corruptCase{fmt.Sprintf("%d 0 %s", k, big), nil}},
		{algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 5, Window: time.Minute}, corruptCase{fmt.Sprintf("%d 0 %s", s, big), nil}},
		{algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 5, Window: time.Minute}, corruptCase{fmt.Sprintf("%d %s 0", s, big), nil}},
		{algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: 5, Window: time.Minute}, corruptCase{fmt.Sprintf("%d 0 %s", s, big), nil}},
		{algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 5, Window: time.Minute, MaxDelay: time.Minute}, corruptCase{fmt.Sprintf("%d %s 0", s, big), nil}},
		{algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 5, Window: time.Minute}, corruptCase{"1", []any{event(s-1, big, "1")}}},
		{algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 5, Window: time.Minute}, corruptCase{"1", []any{event(s-120, "0", big)}}},
		{algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 5, Window: time.Minute}, corruptCase{"1", []any{event(s-120, "0", "99999999999999")}}},
	} {
		for _, name := range []string{"function", "script"} {
			c := algorithms.Check{Spec: tc.spec, Key: "app"}
			admitted, left, list, err := takeCorrupt(t, admin, clients[name], c, tc.corruptCase)
			if err == nil || !errors.Is(err, algorithms.ErrKeyState) {
				t.Errorf("%s %s, value %q, list %v: %d of %d Takes admitted (limit %d), then error %v; want the first Take to fail with algorithms.ErrKeyState", name, tc.spec.Algorithm, tc.value, tc.list, admitted, 2*tc.spec.Limit, tc.spec.Limit, err)
			} else if admitted != 0 {
				t.Errorf("%s %s, value %q, list %v: %d Takes admitted before the error %v; want none", name, tc.spec.Algorithm, tc.value, tc.list, admitted, err)
			}
			if left != tc.value || fmt.Sprint(list) != fmt.Sprint(tc.list) {
				t.Errorf("%s %s, value %q, list %v: the keys hold %q and %v after the Takes; want them left as they were", name, tc.spec.Algorithm, tc.value, tc.list, left, list)
			}
		}
	}
}

// TestCorruptQueueRefundIsAnError: a Refund of a leaky_queue key holding
// a state of the store's shape with numbers it never writes (nanoseconds
// of 10^9 or more, a remainder of Limit or more) fails as a Take of it
// does (algorithms.ErrKeyState), the value left as it is.
func TestCorruptQueueRefundIsAnError(t *testing.T) {
	admin, clients := corruptClients(t)
	ctx := context.Background()
	const big = "99999999999999999999"
	s := corruptT0.Unix()
	spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 5, Window: time.Minute, MaxDelay: time.Minute}
	c := algorithms.Check{Spec: spec, Key: "app"}
	for _, name := range []string{"function", "script"} {
		for _, value := range []string{fmt.Sprintf("%d 0 %s", s, big), fmt.Sprintf("%d %s 0", s, big), fmt.Sprintf("%d 0 5", s)} {
			prefix := uniquePrefix(t)
			st, err := redisstore.New(clients[name], redisstore.WithPrefix(prefix), redisstore.WithClock(&manualClock{t: corruptT0}))
			if err != nil {
				t.Fatal(err)
			}
			key := redisKeys(prefix, c)[0]
			if err := admin.Set(ctx, key, value, 0).Err(); err != nil {
				t.Fatal(err)
			}
			dst := make([]algorithms.Refunded, 1)
			ds := []algorithms.Decision{{Allowed: true, Limit: spec.Capacity(), Delay: 12 * time.Second}}
			err = st.Refund(ctx, dst, []algorithms.Check{c}, ds, 0)
			if !errors.Is(err, algorithms.ErrKeyState) {
				t.Errorf("%s, value %q: Refund = %+v, %v; want an error matching algorithms.ErrKeyState", name, value, dst, err)
			}
			if left, _ := admin.Get(ctx, key).Result(); left != value {
				t.Errorf("%s, value %q: the key holds %q after the Refund; want it left as it was", name, value, left)
			}
		}
	}
}
