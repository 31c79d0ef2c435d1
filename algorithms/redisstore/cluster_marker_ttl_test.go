package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// markerMargin is the margin doc.go ("Failures") states the marker's
// lifetime adds to the bound of its call's last resend.
const markerMargin = time.Second

// TestClusterMarkerLivesAsLongAsItsCall: a cross-slot reservation's marker
// (cluster.go, reserve) lives as long as go-redis may still send the
// reservation again, and no longer, within a minute (doc.go, "Failures").
// Each case makes one cross-slot Take whose reservation of m loses its
// reply after it ran, so that go-redis sends it again, which must find the
// marker: m consumed once. Then both markers' PTTL must lie in the case's
// bounds: under a deadline, the time left to it, plus what the client can
// still send after it (nothing with ContextTimeoutEnabled; with it off, a
// new connection's handshake, four round trips, and the write), plus the
// margin; without one, the client's attempts, each within its pool wait,
// dials, handshake, write and read, and the backoffs between them, plus
// the margin;
// the default options allow minutes, and the marker keeps the minute.
// Before the marker's lifetime followed the call, every marker lived a
// minute, however short the call's deadline.
func TestClusterMarkerLivesAsLongAsItsCall(t *testing.T) {
	shared := sharedCluster(t)
	m, _ := tagOnNode(t, shared, "moved", 0)
	z, _ := tagOnNode(t, shared, "stays", 2)
	noMaint := &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	const ms100 = 100 * time.Millisecond
	for _, tc := range []struct {
		name     string
		opt      redis.ClusterOptions
		deadline time.Duration // 0: none
		// after is what the client can still send after the deadline
		// (with one), or the whole bound of the call (without).
		after time.Duration
	}{
		{"deadline/ContextTimeoutEnabled", redis.ClusterOptions{ContextTimeoutEnabled: true}, 5 * time.Second, 0},
		{"deadline/ContextTimeoutEnabled_off",
			redis.ClusterOptions{ReadTimeout: ms100, WriteTimeout: ms100, MaintNotificationsConfig: noMaint},
			5 * time.Second, 4*2*ms100 + ms100},
		{"none/short_timeouts",
			redis.ClusterOptions{MaxRedirects: 1, ReadTimeout: ms100, WriteTimeout: ms100, DialTimeout: ms100,
				DialerRetries: 1, PoolTimeout: ms100, MaxRetryBackoff: 50 * time.Millisecond, MaintNotificationsConfig: noMaint},
			// 2 attempts × (pool 100 ms + dial 100 ms + handshake 4×200 ms + write and read 200 ms), a backoff of 50 ms between
			0, 2*(ms100+ms100+4*2*ms100+2*ms100) + 50*time.Millisecond},
		{"none/defaults", redis.ClusterOptions{}, 0, time.Minute - markerMargin},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := uniquePrefix(t)
			spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Hour}
			mc, zc := algorithms.Check{Spec: spec, Key: m, Cost: 2}, algorithms.Check{Spec: spec, Key: z}
			opt := tc.opt
			opt.Addrs = clusterSrv.Addrs()
			client := redis.NewClusterClient(&opt)
			defer client.Close()
			hook := &afterRun{key: redisKeys(prefix, mc)[0], mode: "1", lose: true}
			client.OnNewNode(func(nc *redis.Client) { nc.AddHook(hook) })
			// No timeout of the store's (WithTimeout(0)): the deadline is
			// the caller's, or none.
			s, err := redisstore.New(client, redisstore.WithClock(algotest.NewClock(algotest.Base)), redisstore.WithPrefix(prefix), redisstore.WithTimeout(0))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			start := time.Now()
			var dl time.Time
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
				dl, _ = ctx.Deadline()
			}
			hook.armed.Store(true)
			d, err := s.Take(ctx, mc, zc)
			if hook.hits.Load() != 1 {
				t.Fatalf("m's reservation ran %d times under the hook, want 1 (Take = %+v, %v)", hook.hits.Load(), d, err)
			}
			if err != nil || !d[0].Allowed || !d[1].Allowed || d[0].Remaining != 8 {
				t.Fatalf("Take whose reservation of m lost its reply = %+v, %v; want both admitted, m's Remaining 8 (consumed once)", d, err)
			}
			var pttls []time.Duration
			for _, k := range keysUnder(t, shared, prefix) {
				if markerKey.MatchString(k) {
					pttls = append(pttls, shared.PTTL(context.Background(), k).Val())
				}
			}
			after := time.Now()
			if len(pttls) != 2 {
				t.Fatalf("%d reservation markers, want 2 (m's slot and z's)", len(pttls))
			}
			// The lifetime L is reckoned before the call and counted by
			// Redis from the run, which comes later: a PTTL read at r is at
			// most L and at least L less the time from the call to r.
			var lo, hi time.Duration
			if tc.deadline > 0 {
				// L = the time left (at most tc.deadline) + after + margin:
				// the marker expires no earlier than that after the deadline.
				lo = dl.Sub(after) + tc.after + markerMargin - time.Millisecond
				hi = tc.deadline + tc.after + markerMargin
			} else {
				hi = tc.after + markerMargin
				lo = hi - after.Sub(start) - time.Millisecond
			}
			for _, p := range pttls {
				if p < lo || p > hi {
					t.Errorf("a reservation marker expires in %v, want within [%v, %v]", p, lo, hi)
				}
			}
			pk := make([]algorithms.Decision, 1)
			if err := s.Peek(context.Background(), pk, []algorithms.Check{{Spec: spec, Key: m}}); err != nil {
				t.Fatal(err)
			}
			if pk[0].Remaining != 8 {
				t.Errorf("m has %d remaining, want 8 (consumed once)", pk[0].Remaining)
			}
		})
	}
}
