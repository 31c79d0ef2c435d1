package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/redis/go-redis/v9"
)

// slotSource is a cluster client's slot map (ClusterOptions.ClusterSlots)
// over the shared cluster. Its first load gives the slots of node 0
// (0-5460) to dead, an address nothing listens on, when stale is set: the
// map of a client that has not seen a failover (its master gone, the
// replica that took over elsewhere). Every later load gives the cluster's
// own map. loads counts the loads: a second one is a reload.
type slotSource struct {
	real  []redis.ClusterSlot
	dead  string
	stale bool
	loads atomic.Int64
}

func (m *slotSource) slots(context.Context) ([]redis.ClusterSlot, error) {
	if m.loads.Add(1) > 1 || !m.stale {
		return m.real, nil
	}
	out := make([]redis.ClusterSlot, len(m.real))
	for i, sl := range m.real {
		out[i] = sl
		if sl.Start == 0 {
			out[i].Nodes = []redis.ClusterNode{{Addr: m.dead}}
		}
	}
	return out, nil
}

// newSlotSource returns a slotSource of the shared cluster's map, stale or
// not, and a client of it (closed at the end of t) that reloads its map
// only when asked (the periodic reload set to an hour).
func newSlotSource(t *testing.T, stale bool) (*slotSource, *redis.ClusterClient) {
	t.Helper()
	sharedCluster(t) // started
	// redistest's slot ranges (see redistest.Cluster).
	real := []redis.ClusterSlot{{Start: 0, End: 5460}, {Start: 5461, End: 10922}, {Start: 10923, End: 16383}}
	for i := range real {
		real[i].Nodes = []redis.ClusterNode{{Addr: clusterSrv.Nodes[i].Addr}}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	_ = ln.Close()
	m := &slotSource{real: real, dead: dead, stale: stale}
	client := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: clusterSrv.Addrs(), ClusterSlots: m.slots, ClusterStateReloadInterval: time.Hour,
		// A refused dial fails the call at once (no redials, no retries).
		MaxRedirects: -1, DialerRetries: 1,
	})
	t.Cleanup(func() { _ = client.Close() })
	// The first load, before the calls tested: two calls that find no
	// map load it both.
	if _, err := client.MasterForKey(context.Background(), "any"); err != nil || m.loads.Load() != 1 {
		t.Fatalf("first load: %v, %d loads", err, m.loads.Load())
	}
	return m, client
}

// waitReload fails t unless the client of m reloads its slot map (a
// second load) within a bound: a guard against a hang, the reload runs in
// the background at once.
func (m *slotSource) waitReload(t *testing.T, what string) {
	t.Helper()
	if !hangguard.Poll(2*time.Second, time.Millisecond, func() bool { return m.loads.Load() > 1 }) {
		t.Fatalf("%s: the client never reloaded its slot map (%d load)", what, m.loads.Load())
	}
}

// replyErr is an error Redis replied (redis.Error): Redis answered.
type replyErr string

func (e replyErr) Error() string { return string(e) }
func (replyErr) RedisError()     {}

// injected is a failure of the call of mode whose first key is key's.
type injected struct {
	key, mode string
	err       error
}

// oom is a node's reply to a write at its maxmemory.
const oom = replyErr("OOM command not allowed when used memory > 'maxmemory'.")

// TestClusterSplitFailureWithoutReplyReloadsSlots: a call that gets no
// reply from a node has the cluster client reload its slot map (the node
// may be a master that is gone, whose replica took over elsewhere: see
// Failures in the package doc), and so does a cross-slot Take one of whose
// parts got no reply while another part's error is a reply (a key of a
// value the store did not write, a node refusing writes): the Take
// returns one part's error, the first slot's; the parts that got no reply
// must reload the map all the same, whichever phase they failed in (the
// peek, the reservation, the undo of a reservation). Before the fix the
// store read the returned error only: a reply, so no reload, and every
// call of the lost node's slots went on to its dead address until one
// failed there alone (or go-redis's periodic reload, a minute by default).
func TestClusterSplitFailureWithoutReplyReloadsSlots(t *testing.T) {
	cs := newSlotPair(t, "answers", "lost")
	shared, x, y, xc, yc, keyOf := cs.shared, cs.x, cs.y, cs.xc, cs.yc, cs.keyOf

	t.Run("peek/foreign_value_first", func(t *testing.T) {
		// The first slot's peek answers that x holds a value the store
		// did not write; y's slot is at a dead address.
		m, client := newSlotSource(t, true)
		prefix := uniquePrefix(t)
		if err := shared.Set(context.Background(), keyOf(prefix, x), "not the store's", 0).Err(); err != nil {
			t.Fatal(err)
		}
		s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithClock(algotest.NewClock(algotest.Base)))
		if err != nil {
			t.Fatal(err)
		}
		d, err := s.Take(context.Background(), xc, yc)
		if err == nil || !errors.Is(err, algorithms.ErrKeyState) {
			t.Fatalf("Take(x, y) = %+v, %v; want x's error (ErrKeyState)", d, err)
		}
		m.waitReload(t, "after y's peek got no reply")
		// go-redis drops a loopback host from a map of no origin: the
		// port tells the node.
		node0 := strconv.Itoa(clusterSrv.Nodes[0].Port)
		if !hangguard.Poll(2*time.Second, time.Millisecond, func() bool {
			ym, err := client.MasterForKey(context.Background(), keyOf(prefix, y))
			if err != nil {
				return false
			}
			_, port, _ := net.SplitHostPort(ym.Options().Addr)
			return port == node0
		}) {
			ym, err := client.MasterForKey(context.Background(), keyOf(prefix, y))
			t.Fatalf("after the reload, y's slot goes to %v (%v), want port %s", ym.Options().Addr, err, node0)
		}
		if d, err := s.Take(context.Background(), yc); err != nil || !d[0].Allowed {
			t.Fatalf("Take(y) after the reload = %+v, %v; want admitted", d, err)
		}
	})
	t.Run("Peek/foreign_value_first", func(t *testing.T) {
		// A Peek of the same checks: its calls are a Take's first phase.
		m, client := newSlotSource(t, true)
		prefix := uniquePrefix(t)
		if err := shared.Set(context.Background(), keyOf(prefix, x), "not the store's", 0).Err(); err != nil {
			t.Fatal(err)
		}
		s, err := redisstore.New(client, redisstore.WithPrefix(prefix))
		if err != nil {
			t.Fatal(err)
		}
		pk := make([]algorithms.Decision, 2)
		if err := s.Peek(context.Background(), pk, []algorithms.Check{xc, yc}); err == nil || !errors.Is(err, algorithms.ErrKeyState) {
			t.Fatalf("Peek(x, y) = %+v, %v; want x's error (ErrKeyState)", pk, err)
		}
		m.waitReload(t, "after y's peek got no reply")
	})
	t.Run("Reset", func(t *testing.T) {
		// One DEL per slot in one pipeline: y's gets no reply.
		m, client := newSlotSource(t, true)
		s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Reset(context.Background(), xc, yc); err == nil {
			t.Fatal("Reset(x, y) with y's node at a dead address succeeded")
		}
		m.waitReload(t, "after y's DEL got no reply")
	})
	t.Run("peek/no_reply_first", func(t *testing.T) {
		// The returned error is y's, no reply: this reloaded before.
		m, client := newSlotSource(t, true)
		prefix := uniquePrefix(t)
		if err := shared.Set(context.Background(), keyOf(prefix, x), "not the store's", 0).Err(); err != nil {
			t.Fatal(err)
		}
		s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithClock(algotest.NewClock(algotest.Base)))
		if err != nil {
			t.Fatal(err)
		}
		if d, err := s.Take(context.Background(), yc, xc); err == nil || errors.Is(err, algorithms.ErrKeyState) {
			t.Fatalf("Take(y, x) = %+v, %v; want y's error", d, err)
		}
		m.waitReload(t, "after y's peek got no reply")
	})
	for _, tc := range []struct {
		name string
		// the injected failures: the call of mode whose first key is
		// key's fails with err without being sent
		fail []injected
		// x's units consumed by the failed Take
		consumed int64
	}{
		{"reserve", []injected{{x, "1", oom}, {y, "1", io.EOF}}, 0},
		// x's reservation admitted; y's refused (a reply); the undo of
		// x's gets no reply (its reservation stays: see "Cluster").
		{"undo", []injected{{y, "1", oom}, {x, "2", io.EOF}}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, client := newSlotSource(t, false)
			prefix := uniquePrefix(t)
			s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithClock(algotest.NewClock(algotest.Base)))
			if err != nil {
				t.Fatal(err)
			}
			var hooks []*interceptHook
			for _, f := range tc.fail {
				h := &interceptHook{key: keyOf(prefix, f.key), mode: f.mode, err: f.err}
				client.AddHook(h)
				hooks = append(hooks, h)
			}
			d, err := s.Take(context.Background(), xc, yc)
			for _, h := range hooks {
				if !h.hit.Load() {
					t.Fatalf("the call of mode %s of %s never ran (Take = %+v, %v)", h.mode, h.key, d, err)
				}
			}
			if !errors.Is(err, oom) {
				t.Fatalf("Take(x, y) = %+v, %v; want the refused write's error (the first slot's)", d, err)
			}
			m.waitReload(t, "after a part got no reply")
			pk := make([]algorithms.Decision, 1)
			if err := s.Peek(context.Background(), pk, []algorithms.Check{xc}); err != nil {
				t.Fatal(err)
			}
			if got, want := pk[0].Remaining, 10-tc.consumed; got != want {
				t.Fatalf("x has %d remaining after the failed Take, want %d", got, want)
			}
		})
	}
}

// TestClusterGiveBackWithoutReplyReloadsSlots: as a Take does, a
// give-back or a refund that gets no reply from a node has the cluster
// client reload its slot map, whether its keys share a slot or not (one
// call per key, every key tried, the first error returned: a reply of
// another key's node may be that error). Before the fix neither reloaded:
// a process that only gave back after a failover sent every give-back of
// the lost node's slots to its dead address.
func TestClusterGiveBackWithoutReplyReloadsSlots(t *testing.T) {
	shared := sharedCluster(t)
	x, _ := tagOnNode(t, shared, "answers", 1)
	y, _ := tagOnNode(t, shared, "lost", 0)
	warmUp(t, shared, algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}, Key: x})
	fw := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Hour}
	queue := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: time.Hour, MaxDelay: time.Hour}
	for _, tc := range []struct {
		name   string
		spec   algorithms.Spec
		keys   []string
		refund bool
	}{
		{"give-back/one_slot", fw, []string{y}, false},
		{"give-back/x_first", fw, []string{x, y}, false},
		{"refund/one_slot", queue, []string{y}, true},
		{"refund/x_first", queue, []string{y, x}, true}, // a refund goes last first
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, client := newSlotSource(t, true)
			prefix := uniquePrefix(t)
			s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithClock(algotest.NewClock(algotest.Base)))
			if err != nil {
				t.Fatal(err)
			}
			if len(tc.keys) > 1 {
				// x's call, the first, answers that x holds a value the
				// store did not write: the error returned.
				xKey := fmt.Sprintf("%s:{%s}:fw:10:3600000000000:0:0:0", prefix, x)
				if tc.refund {
					xKey = fmt.Sprintf("%s:{%s}:lq:10:3600000000000:0:0:3600000000000", prefix, x)
				}
				if err := shared.Set(context.Background(), xKey, "not the store's", 0).Err(); err != nil {
					t.Fatal(err)
				}
			}
			var checks []algorithms.Check
			var ds []algorithms.Decision
			for _, k := range tc.keys {
				checks = append(checks, algorithms.Check{Spec: tc.spec, Key: k})
				// What an admitted Take decided (the queue: a place an
				// hour away).
				ds = append(ds, algorithms.Decision{Allowed: true, Limit: 10, Remaining: 9, ResetAfter: time.Hour, Delay: 54 * time.Minute})
			}
			out := make([]algorithms.Refunded, len(checks))
			if tc.refund {
				err = s.Refund(context.Background(), out, checks, ds, 0)
			} else {
				err = s.GiveBack(context.Background(), out, checks, ds, 0)
			}
			if err == nil {
				t.Fatalf("%s of %v with y's node at a dead address = %+v, nil; want an error", tc.name, tc.keys, out)
			}
			if len(tc.keys) > 1 && !errors.Is(err, algorithms.ErrKeyState) {
				t.Fatalf("%s of %v = %v, want x's error (ErrKeyState)", tc.name, tc.keys, err)
			}
			m.waitReload(t, tc.name+" got no reply")
		})
	}
}
