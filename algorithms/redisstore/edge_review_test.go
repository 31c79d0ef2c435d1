package redisstore_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// TestEdgeTracesAgainstModel replays algotest.EdgeTrace for every spec of
// algotest.EdgeSpecs (limits up to MaxLimit, windows of 1 ms to 24 h that
// divide neither a second nor a day, 3600 sub-windows of 278 ns, the
// largest Burst and MaxDelay the bounds allow), with instants exactly at
// and one nanosecond before the model's RetryAfter, ResetAfter, NextAfter
// and Delay, on window boundaries and going back, from starts in 1677,
// 1969, at the epoch and in 2262, and requires every field of every
// decision to match the model. The specs take turns on the function
// library, the script fallback and the three-node cluster (where the
// three-check calls span slots: peek and reserve).
func TestEdgeTracesAgainstModel(t *testing.T) {
	clients := []struct {
		name string
		c    redis.UniversalClient
	}{{"functions", newBoundClient(t)}, {"script", noFunctionsBoundClient(t)}, {"cluster", sharedBoundCluster(t)}}
	specs := algotest.EdgeSpecs()
	steps := 24
	if testing.Short() {
		steps = 8
	}
	for i, spec := range specs {
		cl := clients[i%len(clients)]
		other := specs[(i*7+3)%len(specs)]
		starts := algotest.EdgeStarts(spec.Window)
		tr := algotest.EdgeTrace(uint64(i), spec, other, starts[(i/3)%len(starts)], steps)
		clock := algotest.NewClock(tr.Start)
		s, err := redisstore.New(cl.c, redisstore.WithClock(clock), redisstore.WithPrefix(uniquePrefix(t)))
		if err != nil {
			t.Fatal(err)
		}
		diff, err := algotest.CompareModel(t.Context(), s, clock, tr)
		if err != nil {
			t.Fatalf("%s: spec %d %v: %v", cl.name, i, spec, err)
		}
		if diff != "" {
			t.Fatalf("%s: spec %d %v (EdgeTrace(%d, ..., %d)):\n%s", cl.name, i, spec, i, steps, diff)
		}
	}
}

// FuzzRedisMatchesMemory decodes the input into a trace, an edge trace
// (algotest.EdgeTraceFromBytes) when the first byte is odd and a general
// one (algotest.TraceFromBytes) otherwise, replays it on a MemoryStore and
// on Redis (the function library when the second byte is even, else the
// script fallback) on the same clock, and requires every field of every
// decision to be the same. Needs redis-server (skipped without it, as the
// other Redis tests).
//
//	go test -run '^$' -fuzz FuzzRedisMatchesMemory -fuzztime 60s ./algorithms/redisstore/
func FuzzRedisMatchesMemory(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0, 5, 1, 200, 3, 4, 4, 0, 7, 9, 9, 14, 2, 6, 3, 11, 0, 5, 8, 17, 16, 1, 10, 0})
	f.Add([]byte{3, 1, 3, 250, 2, 17, 6, 5, 3, 1, 0, 9, 2, 7, 3, 6, 5, 4, 0, 5, 2, 8, 1, 1, 0, 3, 6, 9, 4, 10, 2})
	f.Add([]byte{0, 0, 3, 1, 4, 3, 2, 2, 5, 4, 0, 6, 9, 9, 7, 6, 5, 0, 0, 0, 1, 133, 1, 2, 255, 7, 0, 5, 5, 5, 128, 2, 3})
	f.Add([]byte{2, 1, 2, 6, 12, 200, 9, 3, 5, 5, 1, 1, 135, 4, 6, 0, 255, 7, 5, 3, 2, 2, 2, 1, 0})
	functions, script := newClient(f), noFunctionsClient(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			data = append(data, 0, 0)
		}
		var tr algotest.Trace
		if data[0]%2 == 1 {
			tr = algotest.EdgeTraceFromBytes(data[2:])
		} else {
			tr = algotest.TraceFromBytes(data[2:])
		}
		tr = agreedPrefix(tr)
		var client redis.UniversalClient = functions
		if data[1]%2 == 1 {
			client = script
		}
		clock := algotest.NewClock(tr.Start)
		mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		want, err := algotest.Replay(t.Context(), mem, clock, tr)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := redisstore.New(client, redisstore.WithClock(clock), redisstore.WithPrefix(uniquePrefix(t)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := algotest.Replay(t.Context(), rs, clock, tr)
		if err != nil {
			t.Fatal(err)
		}
		if diff := algotest.Diff(tr, got, want); diff != "" {
			t.Fatalf("Redis (got) disagrees with MemoryStore (want):\n%s", diff)
		}
	})
}

// farBehind bounds how far behind the latest instant of a trace an
// instant of FuzzRedisMatchesMemory's traces may go. Further back the two
// stores part by design (see the package doc, "Clocks that go back"): a
// state more than 2·10^6 s (23 days) ahead of the instant, for the bucket
// kinds and sliding_log, or 2^51 ns (26 days), for the window kinds, is
// treated as expired on Redis and kept by the memory store. A bucket's
// state is at most a day (MaxWindow: Burst·Window/Limit) ahead of its
// latest instant, so 21 days keeps every state within both bounds.
const farBehind = 21 * 24 * time.Hour

// agreedPrefix returns tr up to its first step more than farBehind behind
// the latest instant of the steps before it: where the stores agree.
// (EdgeTraceFromBytes strays up to 60 days either side of its start, and
// a step that would leave that span is taken the other way: a trace
// can come back 120 days.)
func agreedPrefix(tr algotest.Trace) algotest.Trace {
	var latest time.Duration
	for i, st := range tr.Steps {
		if i > 0 && st.At < latest-farBehind {
			tr.Steps = tr.Steps[:i]
			break
		}
		if i == 0 || st.At > latest {
			latest = st.At
		}
	}
	return tr
}

// TestManyChecksAgainstModel: Takes of 1 to 12 checks (more than the memory
// store's batch of 8 and the fast path's tables of 4), on four edge specs
// and three keys, so specs and keys repeat within a call, decided alike by
// the memory store, the function library, the script fallback and the
// cluster (calls spanning slots), and by the model, on every field.
func TestManyChecksAgainstModel(t *testing.T) {
	clients := []redis.UniversalClient{newBoundClient(t), noFunctionsBoundClient(t), sharedBoundCluster(t)}
	specs := algotest.EdgeSpecs()
	for seed := range seedCount(40, 8) {
		r := rand.New(rand.NewPCG(uint64(seed), 5))
		var sp []algorithms.Spec
		for range 4 {
			sp = append(sp, specs[r.IntN(len(specs))])
		}
		keys := []string{"a", "b", "c"}
		tr := algotest.Trace{Start: time.Unix(0, 1_800_000_000_123_456_789)}
		var at time.Duration
		for range 40 {
			at += time.Duration(r.Int64N(int64(sp[0].Window) / 2))
			cs := make([]algorithms.Check, 1+r.IntN(12))
			for j := range cs {
				s := sp[r.IntN(len(sp))]
				cs[j] = algorithms.Check{Spec: s, Key: keys[r.IntN(len(keys))], Cost: 1 + r.Int64N(min(3, s.Capacity()))}
			}
			cs = algotest.FitRepeats(cs) // each key within what it ever admits at once
			tr.Steps = append(tr.Steps, algotest.Step{At: at, Checks: cs})
		}
		clock := algotest.NewClock(tr.Start)
		mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		stores := []algorithms.Store{mem}
		for _, c := range clients {
			rs, err := redisstore.New(c, redisstore.WithClock(clock), redisstore.WithPrefix(uniquePrefix(t)))
			if err != nil {
				t.Fatal(err)
			}
			stores = append(stores, rs)
		}
		for i, st := range stores {
			diff, err := algotest.CompareModel(t.Context(), st, clock, tr)
			if err != nil {
				t.Fatalf("seed %d, store %d (memory, functions, script, cluster): %v", seed, i, err)
			}
			if diff != "" {
				t.Fatalf("seed %d, store %d (memory, functions, script, cluster):\n%s", seed, i, diff)
			}
		}
	}
}

// TestRefundEdgesMatchMemory: for every leaky_queue spec of
// algotest.EdgeSpecs (MaxDelay 0, 1 ns, around one spacing, 24 h, the
// largest the queue bound allows; limits up to MaxLimit), from one of the
// edge starts, Takes of cost 1, any or the whole capacity and Refunds of
// admitted Takes (the caller's wait exact or 1 ns off), with the clock
// moving by up to a spacing or MaxDelay and going back: Redis and the
// memory store decide every Take alike, and report every Refund alike.
func TestRefundEdgesMatchMemory(t *testing.T) {
	client := newBoundClient(t)
	ctx := t.Context()
	for qi, q := range algotest.EdgeSpecs() {
		if q.Algorithm != algorithms.LeakyQueue {
			continue
		}
		starts := algotest.EdgeStarts(q.Window)
		si := qi % len(starts)
		r := rand.New(rand.NewPCG(uint64(qi), uint64(si)))
		clk := &manualClock{t: starts[si]}
		mem, rs := pairedStores(t, client, clk)
		type taken struct {
			at time.Time
			c  []algorithms.Check
			ds []algorithms.Decision
		}
		var adm []taken
		var history []string
		sp := int64(q.Window) / q.Limit
		for i := range 40 {
			switch r.IntN(6) {
			case 0:
				clk.t = clk.t.Add(time.Duration(r.Int64N(sp + 2)))
			case 1:
				clk.t = clk.t.Add(time.Duration(r.Int64N(int64(q.MaxDelay) + 2)))
			case 2:
				clk.t = clk.t.Add(-time.Duration(r.Int64N(sp + 2)))
			}
			if len(adm) > 0 && r.IntN(3) == 0 {
				j := r.IntN(len(adm))
				tk := adm[j]
				adm = append(adm[:j], adm[j+1:]...)
				waited := max(clk.t.Sub(tk.at)+time.Duration(r.IntN(3)-1), 0)
				var wrep, grep [1]algorithms.Refunded
				werr := mem.Refund(ctx, wrep[:], tk.c, tk.ds, waited)
				gerr := rs.Refund(ctx, grep[:], tk.c, tk.ds, waited)
				history = append(history, fmt.Sprintf("step %d at %d: refund of the Take at %d, waited %d: %+v", i, clk.t.UnixNano(), tk.at.UnixNano(), waited, tk.ds[0]))
				if (werr == nil) != (gerr == nil) {
					t.Fatalf("%v:\n%s\nrefund errors differ: memory %v, redis %v", q, join(history), werr, gerr)
				}
				if werr == nil && wrep != grep {
					t.Fatalf("%v:\n%s\nrefund reports differ: memory %+v, redis %+v", q, join(history), wrep[0], grep[0])
				}
				continue
			}
			cost := int64(1)
			switch r.IntN(4) {
			case 0:
				cost = q.Capacity()
			case 1:
				cost = 1 + r.Int64N(q.Capacity())
			}
			c := []algorithms.Check{{Spec: q, Key: "k", Cost: cost}}
			want, werr := takeAlike(t, mem, rs, clk, &history, i, c)
			if werr == nil && want[0].Allowed {
				adm = append(adm, taken{clk.t, c, want})
			}
		}
	}
}
