package algorithms

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestBoundedStoreVictimsAcrossShardsUnderConcurrentFlood: a store bounded
// to 4096 keys (16 shards of 256) holds one limited client per shard under
// each of two Specs (fixed_window and token_bucket, both exhausted); eight
// goroutines then flood it with 40,000 one-request keys spread over every
// shard, under a third Spec and under the victims' own Specs, at one frozen
// instant. Every flood key is admitted (the store refuses no new key), no
// shard ever counts more keys than its share of the bound, and every
// victim is still denied: the flood evicted only its own kind.
func TestBoundedStoreVictimsAcrossShardsUnderConcurrentFlood(t *testing.T) {
	ctx := context.Background()
	s, _ := newReviewStore(t, WithMaxKeys(4096))
	if s.mask != 15 || s.perShrd != 256 {
		t.Fatalf("WithMaxKeys(4096): %d shards of %d keys, want 16 of 256", s.mask+1, s.perShrd)
	}
	fw := Spec{Algorithm: FixedWindow, Limit: 10, Window: time.Hour}
	tb := Spec{Algorithm: TokenBucket, Limit: 10, Window: time.Hour}
	other := Spec{Algorithm: SlidingWindow, Limit: 100, Window: time.Minute}
	var victims []Check
	for i := range uint64(16) {
		for j, spec := range []Spec{fw, tb} {
			v := Check{Spec: spec, Key: keysInShard(s, i, 2)[j], Cost: spec.Limit}
			if d, err := s.TakeOne(ctx, v); err != nil || !d.Allowed || d.Remaining != 0 {
				t.Fatalf("victim %s %s: %+v %v, want admitted with nothing left", spec.Algorithm, v.Key, d, err)
			}
			v.Cost = 1
			victims = append(victims, v)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			specs := []Spec{other, fw, tb}
			for i := range 5000 {
				c := Check{Spec: specs[i%3], Key: "flood-" + strconv.Itoa(g) + "-" + strconv.Itoa(i)}
				d, err := s.TakeOne(ctx, c)
				if err != nil || !d.Allowed {
					errs <- "flood key " + c.Key + " refused: " + strconv.FormatBool(d.Allowed)
					return
				}
				if i%500 == 0 {
					for k := range s.shards {
						sh := &s.shards[k]
						sh.mu.Lock()
						n := sh.keys
						sh.mu.Unlock()
						if n > s.perShrd {
							errs <- "shard " + strconv.Itoa(k) + " holds " + strconv.Itoa(n) + " keys, above its share 256"
							return
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	tablesHeld(t, s)
	if n := s.Len(); n > 4096 {
		t.Errorf("Len() = %d after the flood, above the bound 4096", n)
	}
	for _, v := range victims {
		d, err := s.TakeOne(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed {
			t.Errorf("victim %s %q (shard %d) admitted after the flood: its state was evicted (%+v)", v.Spec.Algorithm, v.Key, s.hash(v.Key)&s.mask, d)
		}
	}
}

// TestBoundedStoreChaosKeepsItsAccounts: eight goroutines mix Takes of one
// to four checks (every kind, costs up to the capacity, keys named twice),
// Peeks, GiveBacks, Refunds, Resets and Sweeps on a bounded store whose
// clock jumps forward by days and back by hours; a ninth moves the clock.
// Afterwards every shard's key count is what its tables hold and within
// its share of the bound (no Take here holds more than four keys), and
// Len agrees.
func TestBoundedStoreChaosKeepsItsAccounts(t *testing.T) {
	ctx := context.Background()
	s, clk := newReviewStore(t, WithMaxKeys(4096))
	specs := []Spec{
		{Algorithm: FixedWindow, Limit: MaxLimit, Window: MaxWindow},
		{Algorithm: FixedWindow, Limit: 3, Window: time.Second},
		{Algorithm: SlidingWindow, Limit: MaxLimit - 1, Window: MaxWindow - 1},
		{Algorithm: SlidingWindow, Limit: 4, Window: time.Minute},
		{Algorithm: SlidingLog, Limit: 6, Window: time.Hour},
		{Algorithm: SlidingBuckets, Limit: 7, Window: 24 * time.Hour, Buckets: 24},
		{Algorithm: SlidingBuckets, Limit: MaxLimit, Window: time.Second, Buckets: 10},
		{Algorithm: TokenBucket, Limit: MaxLimit, Window: MaxWindow, Burst: 5},
		{Algorithm: TokenBucket, Limit: 5, Window: time.Second},
		{Algorithm: LeakyBucket, Limit: 9, Window: time.Minute, Burst: 20},
		{Algorithm: LeakyQueue, Limit: 10, Window: time.Second, MaxDelay: time.Second},
		{Algorithm: LeakyQueue, Limit: MaxLimit, Window: MaxWindow, MaxDelay: time.Hour},
	}
	stop := make(chan struct{})
	var mover sync.WaitGroup
	mover.Add(1)
	go func() {
		defer mover.Done()
		r := rand.New(rand.NewPCG(7, 8))
		for {
			select {
			case <-stop:
				return
			default:
			}
			switch r.IntN(20) {
			case 0:
				clk.Advance(time.Duration(1+r.IntN(5)) * 24 * time.Hour)
			case 1:
				clk.Advance(-time.Duration(r.Int64N(int64(6 * time.Hour))))
			default:
				clk.Advance(time.Duration(r.Int64N(int64(time.Second))))
			}
		}
	}()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 99))
			for range 4000 {
				k := 1 + r.IntN(4)
				checks := make([]Check, k)
				for i := range checks {
					spec := specs[r.IntN(len(specs))]
					checks[i] = Check{Spec: spec, Key: "c" + strconv.Itoa(r.IntN(9000)), Cost: 1 + r.Int64N(min(3, spec.Capacity()))}
				}
				if k > 1 && r.IntN(3) == 0 {
					checks[k-1] = checks[0] // a key named twice
				}
				if ValidateChecks(checks) != nil {
					continue
				}
				switch r.IntN(10) {
				case 0:
					dst := make([]Decision, k)
					if err := s.Peek(ctx, dst, checks); err != nil {
						t.Errorf("Peek: %v", err)
						return
					}
				case 1:
					if err := s.Reset(ctx, checks...); err != nil {
						t.Errorf("Reset: %v", err)
						return
					}
				case 2:
					s.Sweep()
				default:
					ds, err := s.Take(ctx, checks...)
					if err != nil {
						t.Errorf("Take: %v", err)
						return
					}
					dst := make([]Refunded, k)
					switch r.IntN(3) {
					case 0:
						err = s.GiveBack(ctx, dst, checks, ds, 0)
					case 1:
						err = s.Refund(ctx, dst, checks, ds, 0)
					}
					if err != nil {
						t.Errorf("GiveBack/Refund: %v", err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	mover.Wait()
	tablesHeld(t, s)
	total := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		if sh.keys > s.perShrd {
			t.Errorf("shard %d holds %d keys, above its share %d", i, sh.keys, s.perShrd)
		}
		total += sh.keys
		sh.mu.Unlock()
	}
	if n := s.Len(); n != total || n > 4096 {
		t.Errorf("Len() = %d, shards hold %d, bound 4096", n, total)
	}
}
