package redisstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// answering returns a hook that answers the call of script mode whose
// first key is key with val (which may be nil) and err, without sending it.
func answering(key, mode string, val any, err error) *funcHook {
	return &funcHook{key: key, mode: mode, do: func(_ context.Context, cmd redis.Cmder, _ redis.ProcessHook) error {
		// A *redis.Cmd, or the store's command sent at most once, which
		// embeds one.
		c, ok := cmd.(interface {
			SetVal(any)
			SetErr(error)
		})
		if !ok {
			panic(fmt.Sprintf("answering: %T has no SetVal", cmd))
		}
		c.SetVal(val)
		c.SetErr(err)
		return err
	}}
}

// TestReplySurprisesAreErrors: a reply of any phase of a Take or Peek that
// is not the script's (a nil reply, Redis's nil, a short array, values of
// the wrong type or sign) is an error of the call, never a panic nor a
// decision; on a Cluster, for a single-slot Take and Peek, a cross-slot
// Take's peek, reservation and undo. A reservation's surprise still has
// the other slot's admitted reservation undone (x's units back); an
// undo's surprise names the slot whose reservation may have been left in
// place.
func TestReplySurprisesAreErrors(t *testing.T) {
	cs := newSlotPair(t, "answers", "surprises")
	x, y, xc, yc, keyOf := cs.x, cs.y, cs.xc, cs.yc, cs.keyOf
	replies := []struct {
		name string
		val  any
		err  error
	}{
		{"nil", nil, nil},
		{"redis_nil", nil, redis.Nil},
		{"nil_array", []any(nil), nil},
		{"short", []any{int64(3), int64(0), int64(0)}, nil},
		{"string", []any{"3", int64(0), int64(0), int64(0)}, nil},
		{"negative", []any{int64(3), int64(-1), int64(0), int64(0)}, nil},
		{"nested_nil", []any{nil, int64(0), int64(0), int64(0)}, nil},
		{"not_array", int64(3), nil},
	}
	for _, tc := range []struct {
		name string
		key  string // x or y: the call answered
		mode string
		run  func(s *redisstore.Store) error
		// x's units the failed call leaves consumed (x undone: 0)
		xConsumed int64
	}{
		{"take/one_slot", y, "c", func(s *redisstore.Store) error { _, err := s.Take(context.Background(), yc); return err }, 0},
		{"peek/one_slot", y, "6", func(s *redisstore.Store) error {
			return s.Peek(context.Background(), make([]algorithms.Decision, 1), []algorithms.Check{yc})
		}, 0},
		{"take/peek", y, "3", func(s *redisstore.Store) error { _, err := s.Take(context.Background(), xc, yc); return err }, 0},
		{"take/reservation", y, "1", func(s *redisstore.Store) error { _, err := s.Take(context.Background(), xc, yc); return err }, 0},
	} {
		for _, rp := range replies {
			t.Run(tc.name+"/"+rp.name, func(t *testing.T) {
				client, s, prefix := clusterStoreOn(t, clusterSrv.Addrs())
				h := answering(keyOf(prefix, tc.key), tc.mode, rp.val, rp.err)
				client.AddHook(h)
				err := tc.run(s)
				if !h.hit.Load() {
					t.Fatalf("the call of mode %s never ran (err %v)", tc.mode, err)
				}
				if err == nil {
					t.Fatalf("%s answered %#v, %v: no error", tc.name, rp.val, rp.err)
				}
				pk := make([]algorithms.Decision, 1)
				if err := s.Peek(context.Background(), pk, []algorithms.Check{xc}); err != nil {
					t.Fatal(err)
				}
				if got, want := pk[0].Remaining, 10-tc.xConsumed; got != want {
					t.Errorf("x has %d remaining after the failed call, want %d", got, want)
				}
			})
		}
	}
	// The undo of x, after y's reservation failed (refused: not run),
	// answers a surprise: the error names x's slot, its reservation may
	// have been left in place.
	for _, rp := range replies {
		t.Run("take/undo/"+rp.name, func(t *testing.T) {
			client, s, prefix := clusterStoreOn(t, clusterSrv.Addrs())
			reserve := &interceptHook{key: keyOf(prefix, y), mode: "1", err: oom}
			undo := answering(keyOf(prefix, x), "2", rp.val, rp.err)
			client.AddHook(reserve)
			client.AddHook(undo)
			_, err := s.Take(context.Background(), xc, yc)
			if !reserve.hit.Load() || !undo.hit.Load() {
				t.Fatalf("reservation of y: %v, undo of x: %v (err %v)", reserve.hit.Load(), undo.hit.Load(), err)
			}
			if err == nil {
				t.Fatalf("undo answered %#v, %v: no error", rp.val, rp.err)
			}
			sl, serr := client.ClusterKeySlot(context.Background(), keyOf(prefix, x)).Result()
			if serr != nil {
				t.Fatal(serr)
			}
			if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("slot %d", sl)) || !strings.Contains(msg, "may have been left in place") {
				t.Errorf("Take = %v; want it to name x's slot %d, left in place", err, sl)
			}
		})
	}
}
