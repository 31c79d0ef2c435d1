package policy_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/policy"
)

// judgedKinds are the window kinds at 100 a minute (sliding_buckets in
// six buckets of 10 s), with the wait of a request refused at limit 50
// when 50 were admitted 10 s into a minute (40 at the configured 100 and
// 10 at 50, all at that instant):
//   - fixed_window: the minute's end, 50 s;
//   - sliding_window: the next minute, where the 50 weigh
//     50·(60−e)/60 and one more fits when that is at most 49: e = 1.2 s,
//     51.2 s;
//   - sliding_log: the 50 instants leave the window a nanosecond after
//     they are 60 s old;
//   - sliding_buckets: the bucket of [10 s, 20 s) leaves the window at
//     70 s, 60 s.
var judgedKinds = []struct {
	spec algorithms.Spec
	wait time.Duration
}{
	{algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Minute}, 50 * time.Second},
	{algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 100, Window: time.Minute}, 51200 * time.Millisecond},
	{algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 100, Window: time.Minute}, time.Minute + time.Nanosecond},
	{algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 100, Window: time.Minute, Buckets: 6}, time.Minute},
}

// judgedStart is 10 s into a minute.
var judgedStart = time.Unix(1_700_000_050, 0)

// TestGuardJudgedAtPolicyLimit: a window kind's policy of 100 a minute of
// which a client used 40, lowered to 50 (by WithLimit, or a reload's
// policy at 50 guarded by the 100 it replaced, WithGuard), admits 10
// more in that minute, not 50: its guard, the 100's state, is judged at
// 50 (algorithms.Check.Limit), holding the 40. The 11th is refused with
// Limit 50, Remaining 0, and the guard's wait below 50; back at the
// configured 100, the 100's state holds all 50. On the memory store and
// on Redis.
func TestGuardJudgedAtPolicyLimit(t *testing.T) {
	for _, name := range storetest.Names {
		for _, k := range judgedKinds {
			for _, how := range []string{"WithLimit", "WithGuard"} {
				t.Run(name+"/"+string(k.spec.Algorithm)+"/"+how, func(t *testing.T) {
					clock := algotest.NewClock(judgedStart)
					st := storetest.New(t, name, clock)
					configured := policy.Must(policy.New("p", k.spec, constKey))
					var lowered *policy.Policy
					switch how {
					case "WithLimit":
						lowered = policy.Must(configured.WithLimit(50))
					case "WithGuard":
						fifty := k.spec
						fifty.Limit = 50
						lowered = policy.Must(policy.Must(policy.New("p", fifty, constKey)).WithGuard(k.spec))
					}
					if got := lowered.GuardLimit(k.spec); got != 50 {
						t.Fatalf("GuardLimit(the 100) = %d, want 50", got)
					}
					at100, at50 := loneSet(t, configured), loneSet(t, lowered)
					if n, _ := takeN(t, at100, st, 40); n != 40 {
						t.Fatalf("at 100: %d of 40 admitted", n)
					}
					res := takeResult(t, at50, st, httptest.NewRequest("GET", "/", nil))
					if d := res.Decision(0); !d.Allowed || d.Limit != 50 || d.Remaining != 9 {
						t.Errorf("first at 50 after 40 used: %+v, want allowed, Limit 50, Remaining 9", d)
					}
					n, res := takeN(t, at50, st, 10)
					if n != 9 {
						t.Errorf("at 50 after 41 used: %d of 10 more admitted, want 9 (10 in all)", n)
					}
					want := algorithms.Decision{Limit: 50, RetryAfter: k.wait}
					if d := res.Decision(0); d.Allowed || d.Limit != want.Limit || d.Remaining != 0 || d.RetryAfter != want.RetryAfter || d.NextAfter != k.wait {
						t.Errorf("the 11th at 50: %+v, want denied, Limit 50, Remaining 0, RetryAfter and NextAfter %v", d, k.wait)
					}
					if d := takeResult(t, at100, st, httptest.NewRequest("GET", "/", nil)).Decision(0); !d.Allowed || d.Remaining != 49 {
						t.Errorf("back at 100: %+v, want allowed with Remaining 49 (the 50 counted, then this one)", d)
					}
				})
			}
		}
	}
}

// loneSet returns the Set of p alone.
func loneSet(t *testing.T, p *policy.Policy) *policy.Set {
	t.Helper()
	s, err := policy.NewSet([]*policy.Policy{p})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestGuardBucketAtOwnLimit: a token_bucket policy's guard is checked at
// its own limit (a bucket's level is a function of its rate): of 100 a
// minute, a client that used 40 gets the lowered 50 in full (the 100's
// bucket holds 60), the 51st refused for the 50's next token (1.2 s);
// the 100's bucket then holds 10. On the memory store and on Redis.
func TestGuardBucketAtOwnLimit(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 100, Window: time.Minute}
	for _, name := range storetest.Names {
		t.Run(name, func(t *testing.T) {
			clock := algotest.NewClock(judgedStart)
			st := storetest.New(t, name, clock)
			configured := policy.Must(policy.New("p", spec, constKey))
			lowered := policy.Must(configured.WithLimit(50))
			if got := lowered.GuardLimit(spec); got != 100 {
				t.Errorf("GuardLimit(the 100) = %d, want 100 (its own)", got)
			}
			at100, at50 := loneSet(t, configured), loneSet(t, lowered)
			if n, _ := takeN(t, at100, st, 40); n != 40 {
				t.Fatalf("at 100: %d of 40 admitted", n)
			}
			n, res := takeN(t, at50, st, 51)
			if n != 50 {
				t.Errorf("at 50 after 40 used: %d of 51 admitted, want 50", n)
			}
			if d := res.Decision(0); d.Allowed || d.Limit != 50 || d.Remaining != 0 || d.RetryAfter != 1200*time.Millisecond {
				t.Errorf("the 51st at 50: %+v, want denied, Limit 50, Remaining 0, RetryAfter 1.2s", d)
			}
			if d := takeResult(t, at100, st, httptest.NewRequest("GET", "/", nil)).Decision(0); !d.Allowed || d.Remaining != 9 {
				t.Errorf("back at 100: %+v, want allowed with Remaining 9 (90 taken, then this one)", d)
			}
		})
	}
}

// TestGuardLimit: the limit each guard is judged at: the policy's own for
// its Spec at a higher limit of a window kind (by WithLimit or WithGuard,
// both of two guards), the guard's own for a bucket kind, for a queue,
// and for a guard of another shape (another window, another algorithm,
// other buckets).
func TestGuardLimit(t *testing.T) {
	fw := func(l int64, w time.Duration) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: l, Window: w}
	}
	sb := func(l int64, b int) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: l, Window: time.Minute, Buckets: b}
	}
	twoGuards := policy.Must(policy.Must(policy.Must(policy.New("a", fw(6, time.Minute), constKey)).WithGuard(fw(10, time.Minute))).WithLimit(4))
	for _, tc := range []struct {
		name string
		p    *policy.Policy
		want []int64 // of each of p.Guards()
	}{
		{"fixed window lowered", policy.Must(policy.Must(policy.New("a", fw(10, time.Minute), constKey)).WithLimit(4)), []int64{4}},
		{"two guards", twoGuards, []int64{4, 4}},
		{"sliding buckets given its Spec at 12", policy.Must(policy.Must(policy.New("a", sb(6, 6), constKey)).WithGuard(sb(12, 6))), []int64{6}},
		{"another window", policy.Must(policy.Must(policy.New("a", fw(6, time.Minute), constKey)).WithGuard(fw(10, 2*time.Minute))), []int64{10}},
		{"other buckets", policy.Must(policy.Must(policy.New("a", sb(6, 6), constKey)).WithGuard(sb(12, 3))), []int64{12}},
		{"another algorithm", policy.Must(policy.Must(policy.New("a", fw(6, time.Minute), constKey)).WithGuard(
			algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 10, Window: time.Minute})), []int64{10}},
		{"leaky bucket lowered", policy.Must(policy.Must(policy.New("a", algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: 10, Window: time.Minute}, constKey)).WithLimit(4)), []int64{10}},
		{"leaky queue lowered", policy.Must(policy.Must(policy.New("a",
			algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: time.Minute, MaxDelay: time.Minute}, constKey)).WithLimit(4)), []int64{10}},
	} {
		gs := tc.p.Guards()
		if len(gs) != len(tc.want) {
			t.Errorf("%s: guards %v, want %d", tc.name, gs, len(tc.want))
			continue
		}
		for i, g := range gs {
			if got := tc.p.GuardLimit(g); got != tc.want[i] {
				t.Errorf("%s: GuardLimit(%v) = %d, want %d", tc.name, g, got, tc.want[i])
			}
		}
	}
}

// recordingStore records the checks of each store call.
type recordingStore struct {
	algorithms.Store
	calls [][]algorithms.Check
}

func (s *recordingStore) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	s.calls = append(s.calls, append([]algorithms.Check(nil), checks...))
	return s.Store.Take(ctx, checks...)
}

func (s *recordingStore) Peek(ctx context.Context, dst []algorithms.Decision, checks []algorithms.Check) error {
	s.calls = append(s.calls, append([]algorithms.Check(nil), checks...))
	return s.Store.(algorithms.Peeker).Peek(ctx, dst, checks)
}

func (s *recordingStore) Reset(ctx context.Context, checks ...algorithms.Check) error {
	s.calls = append(s.calls, append([]algorithms.Check(nil), checks...))
	return s.Store.(algorithms.Resetter).Reset(ctx, checks...)
}

// TestGuardChecksCarryLimit: the store calls of a policy lowered from 10
// to 4 and guarded by a reload's 12 too (Take, Peek, Reset; and a Take
// with its own check dropped, DropOwn, whose first guard takes its
// place) check each guard under its Spec with Check.Limit 4; those of a
// token_bucket policy leave Check.Limit 0. The 10, of the policy's
// window kind and shape, is folded into its own check (Take, Peek): one
// check of the 10 at 4 decides what its own and the 10's would; Reset
// forgets its own Spec's state too.
func TestGuardChecksCarryLimit(t *testing.T) {
	fw := func(l int64) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: l, Window: time.Minute}
	}
	tb := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Minute}
	a := policy.Must(policy.Must(policy.Must(policy.New("a", fw(10), constKey)).WithGuard(fw(12))).WithLimit(4))
	b := policy.Must(policy.Must(policy.New("b", tb, constKey)).WithLimit(4))
	set, err := policy.NewSet([]*policy.Policy{a, b})
	if err != nil {
		t.Fatal(err)
	}
	clock := algotest.NewClock(judgedStart)
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	st := &recordingStore{Store: mem}
	ctx := context.Background()
	r := httptest.NewRequest("GET", "/", nil)
	tb4 := tb
	tb4.Limit = 4
	all := []algorithms.Check{
		{Spec: fw(4), Key: "a:k", Cost: 1}, {Spec: tb4, Key: "b:k", Cost: 1},
		{Spec: fw(10), Key: "a:k", Cost: 1, Limit: 4}, {Spec: fw(12), Key: "a:k", Cost: 1, Limit: 4}, {Spec: tb, Key: "b:k", Cost: 1},
	}
	check := func(what string, want []algorithms.Check) {
		t.Helper()
		if len(st.calls) != 1 {
			t.Fatalf("%s: %d store calls, want 1", what, len(st.calls))
		}
		got := st.calls[0]
		if len(got) != len(want) {
			t.Fatalf("%s: checks %+v, want %+v", what, got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: check %d %+v, want %+v", what, i, got[i], want[i])
			}
		}
		st.calls = nil
	}
	res := preparedResult(t, set, r)
	if err := res.Take(ctx, st); err != nil {
		t.Fatal(err)
	}
	// The 10 at 4 in a's place (folded), the policies' checks first.
	folded := []algorithms.Check{all[2], all[1], all[3], all[4]}
	check("Take", folded)
	if d := res.Decision(0); d.Limit != 4 || d.Remaining != 3 {
		t.Errorf("Take: a's decision %+v, want Limit 4, Remaining 3", d)
	}
	if d, ok := nest.DecisionUnder(res, 0, fw(10)); !ok || d.Limit != 4 || d.Remaining != 3 {
		t.Errorf("DecisionUnder(a, the 10) = %+v, %v; want Limit 4, Remaining 3, true", d, ok)
	}
	if err := res.Peek(ctx, st); err != nil {
		t.Fatal(err)
	}
	check("Peek", folded)
	if err := res.Reset(ctx, st, 3); err != nil {
		t.Fatal(err)
	}
	check("Reset", []algorithms.Check{all[0], all[2], all[3], all[1], all[4]})
	res = preparedResult(t, set, r)
	nest.DropOwn(res, 3)
	if err := res.Take(ctx, st); err != nil {
		t.Fatal(err)
	}
	check("Take, own checks dropped", []algorithms.Check{all[2], all[4], all[3]})
	if d := res.Decision(0); d.Limit != 4 || d.Remaining != 3 {
		t.Errorf("Take, own checks dropped: a's decision %+v, want Limit 4 (the 10 judged at 4, reset), Remaining 3", d)
	}
}

// TestGuardJudgedPastPolicyLimit: a client that used 60 of a window
// kind's 100 a minute, 10 s into it, gets none when the limit drops to
// 50 in that minute: refused with Limit 50, Remaining 0, and the wait
// until one unit is free below 50 (RetryAfter and NextAfter): the
// minute's end for fixed_window (50 s); for sliding_window the next
// minute, where the 60 weigh 60·(60−e)/60 and one more fits when that is
// at most 49: e = 11 s, 61 s; the 60 instants leaving the window for
// sliding_log, 60 s and a nanosecond; the bucket of [10 s, 20 s) leaving
// it for sliding_buckets, 60 s. On the memory store and on Redis.
func TestGuardJudgedPastPolicyLimit(t *testing.T) {
	waits := map[algorithms.Kind]time.Duration{
		algorithms.FixedWindow:    50 * time.Second,
		algorithms.SlidingWindow:  61 * time.Second,
		algorithms.SlidingLog:     time.Minute + time.Nanosecond,
		algorithms.SlidingBuckets: time.Minute,
	}
	for _, name := range storetest.Names {
		for _, k := range judgedKinds {
			t.Run(name+"/"+string(k.spec.Algorithm), func(t *testing.T) {
				clock := algotest.NewClock(judgedStart)
				st := storetest.New(t, name, clock)
				configured := policy.Must(policy.New("p", k.spec, constKey))
				at100, at50 := loneSet(t, configured), loneSet(t, policy.Must(configured.WithLimit(50)))
				if n, _ := takeN(t, at100, st, 60); n != 60 {
					t.Fatalf("at 100: %d of 60 admitted", n)
				}
				wait := waits[k.spec.Algorithm]
				res := takeResult(t, at50, st, httptest.NewRequest("GET", "/", nil))
				if d := res.Decision(0); d.Allowed || d.Limit != 50 || d.Remaining != 0 || d.RetryAfter != wait || d.NextAfter != wait {
					t.Errorf("at 50 after 60 used: %+v, want denied, Limit 50, Remaining 0, RetryAfter and NextAfter %v", d, wait)
				}
				if d := takeResult(t, at100, st, httptest.NewRequest("GET", "/", nil)).Decision(0); !d.Allowed || d.Remaining != 39 {
					t.Errorf("back at 100: %+v, want allowed with Remaining 39 (the refused one not counted)", d)
				}
			})
		}
	}
}

// TestMergeGuard: a decision merged as a guard's (a middleware further
// out's, judged at the policy's limit) gives the policy the lower
// Remaining with its wait, the longer waits, denial when it denies, and
// keeps the policy's Limit and the Result's Delay out of it; before Take
// and for an index out of range it does nothing.
func TestMergeGuard(t *testing.T) {
	now := judgedStart
	st := memoryStoreAt(t, &now)
	s := loneSet(t, policy.Must(policy.New("p", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute}, constKey)))
	r := httptest.NewRequest("GET", "/", nil)
	res := preparedResult(t, s, r)
	nest.MergeGuard(res, 0, algorithms.Decision{Limit: 10}) // not taken: nothing
	if err := res.Take(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	own := res.Decision(0) // Remaining 9, NextAfter and ResetAfter 50 s
	nest.MergeGuard(res, 1, algorithms.Decision{Limit: 10})
	if d := res.Decision(0); d != own {
		t.Errorf("MergeGuard(1) of a Result of one policy changed its decision: %+v, want %+v", d, own)
	}
	nest.MergeGuard(res, 0, algorithms.Decision{Allowed: true, Limit: 10, Remaining: 3, NextAfter: 55 * time.Second, ResetAfter: 55 * time.Second, Delay: time.Second})
	want := algorithms.Decision{Allowed: true, Limit: 10, Remaining: 3, NextAfter: 55 * time.Second, ResetAfter: 55 * time.Second}
	if d := res.Decision(0); d != want {
		t.Errorf("merged with Remaining 3: %+v, want %+v", d, want)
	}
	nest.MergeGuard(res, 0, algorithms.Decision{Limit: 10, RetryAfter: 50 * time.Second, NextAfter: 50 * time.Second, ResetAfter: 50 * time.Second})
	want = algorithms.Decision{Limit: 10, RetryAfter: 50 * time.Second, NextAfter: 50 * time.Second, ResetAfter: 55 * time.Second}
	if d := res.Decision(0); d != want || res.Allowed() {
		t.Errorf("merged with a denial: %+v (Allowed() %v), want %+v", d, res.Allowed(), want)
	}
}
