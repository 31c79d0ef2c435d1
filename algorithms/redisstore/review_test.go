package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"
	"unsafe"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// TestReviewDenyCacheDoesNotKeepKeys: a check's key may point into a
// buffer its caller writes again after the Take (policy.Result's keys do,
// and a middleware without context recycles its Results), so the deny
// cache must not keep the caller's string. Here client-a is denied and
// cached, then its key's bytes are overwritten with client-b's: client-b,
// never seen, must be admitted (by Redis), and client-a still denied.
func TestReviewDenyCacheDoesNotKeepKeys(t *testing.T) {
	client, hook := countedClient(t)
	s, _ := denyCacheStore(t, client)
	ctx := context.Background()
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Minute}
	buf := []byte("p:client-a")
	aliased := unsafe.String(&buf[0], len(buf)) // as policy.Result's keys are
	for i, want := range []bool{true, false} {
		d, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: aliased})
		if err != nil || d[0].Allowed != want {
			t.Fatalf("client-a Take %d = %+v, %v; want allowed %v", i+1, d, err, want)
		}
	}
	copy(buf, "p:client-b") // the caller's next request
	if d, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: "p:client-b"}); err != nil || !d[0].Allowed {
		t.Fatalf("client-b's first Take = %+v, %v; want admitted (another client's denial was answered)", d, err)
	}
	hook.reset()
	if d, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: "p:client-a"}); err != nil || d[0].Allowed {
		t.Fatalf("client-a's third Take = %+v, %v; want denied", d, err)
	}
	if cmds, _ := hook.snapshot(); len(cmds) != 0 {
		t.Fatalf("client-a's cached denial sent %v to Redis: the cache lost its entry when the caller reused the key's bytes", cmds)
	}
	// Many clients in turn reuse the buffer, as pooled Results do: none was
	// ever denied, so none may be denied by the cache.
	for i := range 3000 {
		k := fmt.Sprintf("p:c%08d", i) // as long as p:client-a
		copy(buf, k)
		d, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: k})
		if err != nil || !d[0].Allowed {
			t.Fatalf("%s's first Take = %+v, %v; want admitted (client-a's cached denial answered it)", k, d, err)
		}
	}
}

// TestReviewClusterFunctionFlushed: after FUNCTION FLUSH on every master,
// one Take whose checks span the nodes (the split, all-or-nothing path)
// loads the library again on every master, and decides as before; a Take
// on one slot then costs one command.
func TestReviewClusterFunctionFlushed(t *testing.T) {
	client := sharedCluster(t)
	hook := &countHook{}
	client.AddHook(hook)
	ctx := context.Background()
	s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	day := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 5, Window: 24 * time.Hour}
	var checks []algorithms.Check
	for _, k := range keysOnThreeSlots() {
		checks = append(checks, algorithms.Check{Spec: day, Key: k})
	}
	for i := range 3 {
		if err := client.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			return m.FunctionFlush(ctx).Err()
		}); err != nil {
			t.Fatal(err)
		}
		d, err := s.Take(ctx, checks...)
		if err != nil {
			t.Fatalf("Take %d after FUNCTION FLUSH on every master: %v", i+1, err)
		}
		for j := range d {
			if !d[j].Allowed || d[j].Remaining != int64(4-2*i) { // each iteration takes 2
				t.Fatalf("Take %d: check %d = %+v, want admitted with Remaining %d", i+1, j, d[j], 4-2*i)
			}
		}
		if err := client.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			libs, err := m.FunctionList(ctx, redis.FunctionListQuery{LibraryNamePattern: "ratekeeper_*"}).Result()
			if err == nil && len(libs) != 1 {
				err = fmt.Errorf("%s has %d ratekeeper libraries, want 1", m.Options().Addr, len(libs))
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		for _, c := range checks {
			hook.reset()
			if _, err := s.Take(ctx, c); err != nil {
				t.Fatal(err)
			}
			if cmds, _ := hook.snapshot(); len(cmds) != 1 || cmds[0] != "fcall" {
				t.Fatalf("a one-slot Take after the reload sent %v, want one fcall", cmds)
			}
		}
	}
}

// TestReviewPrefixesKeepStoresApart: two stores whose prefixes are "P"
// and "P:a" keep their keys apart, as they did before the namespace left
// the hash tag: P's key "a:b" (policy a, client b) and P:a's key "b" are
// different limits. A limit of 1 spent on the first must leave the second
// admitting.
func TestReviewPrefixesKeepStoresApart(t *testing.T) {
	client := newClient(t)
	p := uniquePrefix(t)
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}
	ctx := context.Background()
	for _, keys := range [][2]string{{"a:b", "b"}, {"a:b:c", "b:c"}, {"a:", ""}} {
		outer, err := redisstore.New(client, redisstore.WithPrefix(p))
		if err != nil {
			t.Fatal(err)
		}
		inner, err := redisstore.New(client, redisstore.WithPrefix(p+":a"))
		if err != nil {
			t.Fatal(err)
		}
		d, err := outer.Take(ctx, algorithms.Check{Spec: spec, Key: keys[0]})
		if err != nil || !d[0].Allowed {
			t.Fatalf("prefix %q, key %q: first Take = %+v, %v; want allowed", p, keys[0], d, err)
		}
		d, err = inner.Take(ctx, algorithms.Check{Spec: spec, Key: keys[1]})
		if err != nil || !d[0].Allowed {
			t.Errorf("prefix %q, key %q: first Take = %+v, %v; want allowed (its own limit, not prefix %q's key %q)", p+":a", keys[1], d, err, p, keys[0])
		}
		p = uniquePrefix(t)
	}
}
