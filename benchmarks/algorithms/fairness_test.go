package algorithms_test

import (
	"context"
	"hash/maphash"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/benchmarks/internal/peercheck"
)

// TestHttprateDeciderCountsWhereItReads checks that the httprate decider
// does httprate's work: the requests it counts are the ones the limiter's
// next decision reads (OnLimit counts in the window calculateRate reads).
// A decider that counted in another window than the one Status reads would
// find both windows empty on every call, skip the counter's two map
// lookups, and never deny.
func TestHttprateDeciderCountsWhereItReads(t *testing.T) {
	d := newHttprate().(*httprateDecider)
	const n = 10
	for range n {
		if !d.allow("203.0.113.7") {
			t.Fatal("decision failed")
		}
	}
	_, rate, err := d.rl.Status("203.0.113.7")
	if err != nil {
		t.Fatal(err)
	}
	// Within the first window, or just after it rolls, the weighted rate
	// is between n-1 and n (rounded, as OnLimit rounds it).
	if rate < n-1 || rate > n {
		t.Fatalf("after %d admitted requests httprate's Status reads rate %v; want %d (the decider counts where the limiter does not read)", n, rate, n)
	}
}

// keyKeeper keeps every key it is asked about, as a peer whose table holds
// the caller's key string does (x/time/rate's map, throttled, go-limiter,
// ulule), in a slice sized in advance (16 bytes of string header a key).
type keyKeeper struct{ ks []string }

func (k *keyKeeper) allow(key string) bool { k.ks = append(k.ks, key); return true }

// keyHasher keeps a hash of every key (8 bytes a key, in a slice sized in
// advance), as httprate's counter and the MemoryStore do.
type keyHasher struct{ hs []uint64 }

func (k *keyHasher) allow(key string) bool {
	k.hs = append(k.hs, maphash.String(hashSeed, key))
	return true
}

var hashSeed = maphash.MakeSeed()

// TestHeapPerKeyCountsRetainedKeys checks that BenchmarkMemoryPerKey's
// method counts the key strings a limiter keeps: in a server each key is
// made for its request, so a limiter that keeps it keeps its bytes alive,
// and one that keeps a hash of it does not.
func TestHeapPerKeyCountsRetainedKeys(t *testing.T) {
	ks := keys(100_000)
	perKey, _ := heapPerKey(ks, func() decider { return &keyKeeper{ks: make([]string, 0, len(ks))} }, func() {}, func() {})
	// 16 bytes of header plus the key's own bytes (at least 12, in a size
	// class of at least 16).
	if perKey < 16+12 {
		t.Fatalf("heap per key of a limiter keeping each key = %.1f B; want at least %d: the key's bytes are not counted", perKey, 16+12)
	}
	// And the keys a limiter does not keep are not charged to it.
	perKey, _ = heapPerKey(ks, func() decider { return &keyHasher{hs: make([]uint64, 0, len(ks))} }, func() {}, func() {})
	if perKey > 12 {
		t.Fatalf("heap per key of a limiter keeping a hash of each key = %.1f B; want about 8: keys it dropped are counted", perKey)
	}
}

// TestFixedHotKeyAdmitsEveryDecision checks the premise of the hot-key
// benchmarks with a fixed now: every decision is an admitted request's
// work (the bookkeeping of a count), for every kind, so that no kind is
// measured on a denial's cheaper, read-only path.
func TestFixedHotKeyAdmitsEveryDecision(t *testing.T) {
	for _, k := range algorithms.Kinds {
		d := newStoreDecider(t, k, true).(*storeDecider)
		c := d.check
		c.Key = "203.0.113.7"
		for i := range 300_000 {
			dec, err := d.s.TakeOne(context.Background(), c)
			if err != nil {
				t.Fatalf("%s: decision %d: %v", k, i+1, err)
			}
			if !dec.Allowed {
				t.Fatalf("%s: decision %d denied (Remaining %d, RetryAfter %v): the benchmark measures a denial", k, i+1, dec.Remaining, dec.RetryAfter)
			}
			// sliding_log is measured at its limit: a full log, one instant
			// pruned for each one logged.
			if k == algorithms.SlidingLog && i >= 100 && dec.Remaining != 0 {
				t.Fatalf("%s: decision %d left Remaining %d; want 0 (a full log)", k, i+1, dec.Remaining)
			}
		}
	}
}

// TestBenchSpecsOutlastARun checks that every kind's benchmark Spec admits
// more requests at one instant than a benchmark run makes (a second at
// 10 ns a decision: 10^8), so that a run on one key measures admitted
// requests to its end and not, after the first part of it, denials.
// sliding_log is the exception, held at its limit of 100 by a stepping
// clock instead (TestFixedHotKeyAdmitsEveryDecision).
func TestBenchSpecsOutlastARun(t *testing.T) {
	const run = 100_000_000
	for _, k := range algorithms.Kinds {
		if k == algorithms.SlidingLog {
			continue
		}
		s := benchSpec(k)
		if err := s.Validate(); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if c := s.Capacity(); c < run {
			t.Errorf("%s (%s): capacity %d at one instant; a run of %d decisions on one key is denied after the first %d", k, s, c, run, c)
		}
	}
}

// TestSlidingHotKeyWeighsAPreviousWindow checks that sliding_window's
// hot-key benchmarks measure a hot key's steady state, a previous window
// with a count the estimate weighs, and not a key in its first window,
// which the store decides on a shorter path: with a fixed now, the second
// decision after the seed's leaves the limit less the units taken and
// most of the seed's (weighed at 59/60); through
// the clock, the window is short enough that a run spends at most a
// thirtieth of its 300 ms without a previous window.
func TestSlidingHotKeyWeighsAPreviousWindow(t *testing.T) {
	d := newStoreDecider(t, algorithms.SlidingWindow, true).(*storeDecider)
	c := d.check
	c.Key = "203.0.113.7"
	var dec algorithms.Decision
	for range slidingSeed + 2 {
		var err error
		if dec, err = d.s.TakeOne(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	if want := c.Spec.Limit - 2 - 99; slidingSeed != 100 || !dec.Allowed || dec.Remaining != want {
		t.Fatalf("second decision after the seed: Allowed %v, Remaining %d; want admitted with %d left: the 2 taken, and the previous window's 100 (slidingSeed %d) weighed at 59/60, 98.3, rounded up", dec.Allowed, dec.Remaining, want, slidingSeed)
	}
	if w := storeSpec(algorithms.SlidingWindow, false).Window; w > 10*time.Millisecond {
		t.Fatalf("sliding_window's window through the clock is %v; want at most 10ms (a run of 300 ms in its first window for at most a thirtieth)", w)
	}
	if err := storeSpec(algorithms.SlidingWindow, false).Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestThrottledStoreIsBounded checks that throttled runs as its
// documentation sets it up, with a bounded memstore (memstore.NewCtx(0),
// which these benchmarks used, never evicts; a bound evicts the least
// recently used key), and that the bound holds every key of
// BenchmarkKeysParallel, so that throttled is not charged evictions there.
func TestThrottledStoreIsBounded(t *testing.T) {
	peercheck.ThrottledBound(t, throttledStore(t, throttledMaxKeys), throttledMaxKeys)
	if throttledMaxKeys < parallelKeys {
		t.Errorf("throttled's bound of %d keys is below BenchmarkKeysParallel's %d: it would evict keys there", throttledMaxKeys, parallelKeys)
	}
}

// TestOurStoreIsBounded checks that our store in the decision benchmarks
// is bounded as throttled's is (TestThrottledStoreIsBounded): past
// benchMaxKeys keys it holds no more.
func TestOurStoreIsBounded(t *testing.T) {
	// On a frozen clock: no key goes idle, to be swept, during the test.
	d := newStoreDecider(t, algorithms.FixedWindow, true).(*storeDecider)
	n := benchMaxKeys + benchMaxKeys/10
	for _, k := range keys(n) {
		if !d.allow(k) {
			t.Fatal("decision failed")
		}
	}
	if held := d.s.Len(); held > benchMaxKeys {
		t.Fatalf("our store holds %d keys after %d, more than its bound of %d: unbounded", held, n, benchMaxKeys)
	}
}
