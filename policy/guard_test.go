package policy_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

var constKey = keyfunc.Func(func(*http.Request) (string, error) { return "k", nil })

// TestWithLimitGuard: a copy at a lower limit is guarded by the Spec it
// was made from; a copy of that copy by the same (the limit as
// configured); a copy at a limit not lower than the configured one, and
// the policy itself, by none.
func TestWithLimitGuard(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Second, Burst: 25}
	p := policy.Must(policy.New("tb", spec, constKey))
	if g, ok := p.Guard(); ok {
		t.Errorf("a configured policy's Guard() = %+v, true; want none", g)
	}
	q := policy.Must(p.WithLimit(4))
	if g, ok := q.Guard(); !ok || g != spec {
		t.Errorf("WithLimit(4).Guard() = %+v, %v; want %+v, true", g, ok, spec)
	}
	r := policy.Must(q.WithLimit(2))
	if g, ok := r.Guard(); !ok || g != spec {
		t.Errorf("WithLimit(4).WithLimit(2).Guard() = %+v, %v; want the configured %+v, true", g, ok, spec)
	}
	for _, l := range []int64{10, 12} {
		if g, ok := policy.Must(q.WithLimit(l)).Guard(); ok {
			t.Errorf("WithLimit(4).WithLimit(%d).Guard() = %+v, true; want none (not below the configured 10)", l, g)
		}
	}
	if g, ok := policy.Must(p.WithLimit(20)).Guard(); ok {
		t.Errorf("WithLimit(20).Guard() = %+v, true; want none (raised)", g)
	}
	if u := q.Unguarded(); u == q || u.Spec() != q.Spec() || u.Name() != q.Name() {
		t.Errorf("WithLimit(4).Unguarded() = %p %+v, want a copy of %p with its Spec", u, u.Spec(), q)
	} else if g, ok := u.Guard(); ok {
		t.Errorf("WithLimit(4).Unguarded().Guard() = %+v, true; want none", g)
	}
	if _, ok := q.Guard(); !ok {
		t.Error("Unguarded changed the policy it was called on")
	}
	if p.Unguarded() != p {
		t.Error("Unguarded() of a policy without a guard is not the policy itself")
	}
}

// guardedSet returns a Set of the fixed_window policy "fw" of limit 10
// per minute lowered to limit, and the configured one.
func guardedSet(t *testing.T, kind algorithms.Kind, limit int64) (configured, lowered *policy.Set) {
	t.Helper()
	spec := algorithms.Spec{Algorithm: kind, Limit: 10, Window: time.Minute}
	if kind == algorithms.LeakyQueue {
		spec.MaxDelay = time.Minute
	}
	p := policy.Must(policy.New("fw", spec, constKey))
	c, err := policy.NewSet([]*policy.Policy{p})
	if err != nil {
		t.Fatal(err)
	}
	l, err := policy.NewSet([]*policy.Policy{policy.Must(p.WithLimit(limit))})
	if err != nil {
		t.Fatal(err)
	}
	return c, l
}

// takeN takes n requests under s and returns how many were admitted and
// the last Result.
func takeN(t *testing.T, s *policy.Set, st algorithms.Store, n int) (int, *policy.Result) {
	t.Helper()
	admitted := 0
	var res *policy.Result
	for range n {
		res = takeResult(t, s, st, httptest.NewRequest("GET", "/", nil))
		if res.Allowed() {
			admitted++
		}
	}
	return admitted, res
}

// TestGuardedTakeKeepsUsage: a client that used 7 of 10 in a fixed window
// gets 1 more, not 8 (nor the 3 its guard held at its own 10), when the
// limit drops to 8 in that window: the guard is judged at 8. Its
// decisions report the guard's lower Remaining and, when the guard
// denies, its wait; the Limit stays the lowered one. In the next window it gets
// the lowered 8, and the configured Spec's counters hold what the
// lowered policy admitted.
func TestGuardedTakeKeepsUsage(t *testing.T) {
	now := time.Unix(1_700_000_080, 0) // 40 s into a minute
	st := memoryStoreAt(t, &now)
	configured, lowered := guardedSet(t, algorithms.FixedWindow, 8)
	if n, _ := takeN(t, configured, st, 7); n != 7 {
		t.Fatalf("under the configured limit: %d of 7 admitted", n)
	}
	res := takeResult(t, lowered, st, httptest.NewRequest("GET", "/", nil))
	if d := res.Decision(0); !d.Allowed || d.Limit != 8 || d.Remaining != 0 || d.ResetAfter != 20*time.Second {
		t.Errorf("first request at limit 8: %+v, want allowed, Limit 8, Remaining 0 (the guard's 8-8), ResetAfter 20s", d)
	}
	n, res := takeN(t, lowered, st, 5)
	if n != 0 {
		t.Errorf("at limit 8 after 8 of 10 used: %d of 5 more admitted, want 0", n)
	}
	if d := res.Decision(0); d.Allowed || d.Remaining != 0 || d.RetryAfter != 20*time.Second || d.Limit != 8 {
		t.Errorf("denied by the guard: %+v, want denied, Remaining 0, RetryAfter 20s, Limit 8", d)
	}
	if res.RetryAfter() != 20*time.Second {
		t.Errorf("Result.RetryAfter() = %v, want 20s", res.RetryAfter())
	}
	now = now.Add(20 * time.Second) // the next minute
	if n, _ := takeN(t, lowered, st, 9); n != 8 {
		t.Errorf("next minute at limit 8: %d of 9 admitted, want 8", n)
	}
	if d := takeResult(t, configured, st, httptest.NewRequest("GET", "/", nil)).Decision(0); !d.Allowed || d.Remaining != 1 {
		t.Errorf("back at the configured limit: %+v, want allowed with Remaining 1 (8 counted by the guard, then this one)", d)
	}
}

// countingStore counts the store calls and the checks each carried.
type countingStore struct {
	algorithms.Store
	calls  int
	checks []int
}

func (c *countingStore) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	c.calls++
	c.checks = append(c.checks, len(checks))
	return c.Store.Take(ctx, checks...)
}

// TestGuardedTakeOneCall: a guarded policy's request is one store call;
// a guard of its window kind and shape is folded into its own check
// (judged at its limit), a token_bucket one's is checked after the
// policies' own.
func TestGuardedTakeOneCall(t *testing.T) {
	now := time.Unix(1_700_000_040, 0)
	st := &countingStore{Store: memoryStoreAt(t, &now)}
	p := policy.Must(policy.PerMinute("a", 10, constKey))
	b := policy.Must(policy.PerMinute("b", 10, constKey))
	tb := policy.Must(policy.New("c", algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Minute}, constKey))
	s, err := policy.NewSet([]*policy.Policy{policy.Must(p.WithLimit(5)), b, policy.Must(tb.WithLimit(5))})
	if err != nil {
		t.Fatal(err)
	}
	res := takeResult(t, s, st, httptest.NewRequest("GET", "/", nil))
	if st.calls != 1 || len(st.checks) != 1 || st.checks[0] != 4 {
		t.Errorf("store calls %d with %v checks, want 1 call of 4 (a folded, b, c, c's guard)", st.calls, st.checks)
	}
	if res.Len() != 3 || res.Decision(0).Limit != 5 || res.Decision(1).Limit != 10 || res.Decision(2).Limit != 5 {
		t.Errorf("decisions %+v %+v %+v, want three: a at 5, b at 10, c at 5", res.Decision(0), res.Decision(1), res.Decision(2))
	}
}

// TestGuardedGiveBack: a guarded policy's units come back under its guard
// too (a CountIf response that does not count).
func TestGuardedGiveBack(t *testing.T) {
	now := time.Unix(1_700_000_040, 0)
	st := memoryStoreAt(t, &now)
	configured, lowered := guardedSet(t, algorithms.SlidingWindow, 8)
	takeN(t, configured, st, 6)
	res := takeResult(t, lowered, st, httptest.NewRequest("GET", "/", nil))
	if d := res.Decision(0); d.Remaining != 1 {
		t.Fatalf("at limit 8 after 6 of 10: Remaining %d, want 1 (the guard's, judged at 8)", d.Remaining)
	}
	if err := res.GiveBack(context.Background(), st, 0, 1); err != nil {
		t.Fatal(err)
	}
	if d := res.Decision(0); !res.Given(0) || d.Remaining != 2 {
		t.Errorf("after the give-back: Given %v, %+v; want given, Remaining 2", res.Given(0), d)
	}
	if d := takeResult(t, configured, st, httptest.NewRequest("GET", "/", nil)).Decision(0); d.Remaining != 3 {
		t.Errorf("under the configured Spec after the give-back: Remaining %d, want 3 (6 and this one counted)", d.Remaining)
	}
}

// TestGuardedRefund: a held leaky_queue request that leaves gives its
// place back in the lowered queue and in its guard's.
func TestGuardedRefund(t *testing.T) {
	now := time.Unix(1_700_000_040, 0)
	st := memoryStoreAt(t, &now)
	configured, lowered := guardedSet(t, algorithms.LeakyQueue, 5)
	takeN(t, configured, st, 3)
	res := takeResult(t, lowered, st, httptest.NewRequest("GET", "/", nil))
	// The configured queue (10/min: one per 6 s) holds 3, so its next
	// place is 18 s away; the lowered one (5/min, one per 12 s) is empty.
	if d := res.Decision(0); !d.Allowed || d.Delay != 18*time.Second {
		t.Fatalf("at limit 5 behind 3 queued: %+v, want allowed with Delay 18s (the guard's)", d)
	}
	if err := res.Refund(context.Background(), st, 0); err != nil {
		t.Fatal(err)
	}
	if !res.Refunded() || !res.Given(0) {
		t.Errorf("Refunded %v, Given %v; want both", res.Refunded(), res.Given(0))
	}
	if d := takeResult(t, configured, st, httptest.NewRequest("GET", "/", nil)).Decision(0); d.Delay != 18*time.Second {
		t.Errorf("the configured queue after the refund: Delay %v, want 18s (its place came back)", d.Delay)
	}
}

// TestGuardedPeekAndReset: a peek reports the merged decision (the guard
// judged at the lowered 8, holding 7) and consumes nothing; a reset
// forgets the key under the guard too.
func TestGuardedPeekAndReset(t *testing.T) {
	now := time.Unix(1_700_000_040, 0)
	st := memoryStoreAt(t, &now)
	configured, lowered := guardedSet(t, algorithms.FixedWindow, 8)
	takeN(t, configured, st, 7)
	r := httptest.NewRequest("GET", "/", nil)
	var res policy.Result
	if err := lowered.Prepare(r, lowered.Match(r), &res); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := res.Peek(context.Background(), st); err != nil {
			t.Fatal(err)
		}
		if d := res.Decision(0); !d.Allowed || d.Remaining != 1 || d.Limit != 8 {
			t.Errorf("peek at limit 8 after 7 of 10: %+v, want allowed with Remaining 1", d)
		}
	}
	if err := res.Reset(context.Background(), st, 1); err != nil {
		t.Fatal(err)
	}
	if n, _ := takeN(t, lowered, st, 9); n != 8 {
		t.Errorf("after a reset: %d of 9 admitted at limit 8, want 8", n)
	}
}

// TestGuardedManyPolicies: 64 policies, all lowered (from 10 to 5), are
// one store call of 64 checks, each guard folded into its policy's
// (judged at 5: each decision the guard's), and a give-back of every
// policy (past the stack's room) reaches every guard.
func TestGuardedManyPolicies(t *testing.T) {
	now := time.Unix(1_700_000_080, 0)
	st := &countingStore{Store: memoryStoreAt(t, &now)}
	var cps, lps []*policy.Policy
	for i := range policy.MaxPolicies {
		p := policy.Must(policy.New("p"+strconv.Itoa(i), algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute}, constKey))
		cps, lps = append(cps, p), append(lps, policy.Must(p.WithLimit(5)))
	}
	configured, err := policy.NewSet(cps)
	if err != nil {
		t.Fatal(err)
	}
	lowered, err := policy.NewSet(lps)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	// Policy i has used i%5 of its configured 10 (the first Takes under
	// the configured Set, with fewer policies as they go): each has room
	// for one more at 5.
	for k := range 4 {
		var mask uint64
		for i := range policy.MaxPolicies {
			if i%5 > k {
				mask |= 1 << i
			}
		}
		var res policy.Result
		if err := configured.Prepare(r, mask, &res); err != nil {
			t.Fatal(err)
		}
		if err := res.Take(context.Background(), st); err != nil {
			t.Fatal(err)
		}
	}
	st.calls, st.checks = 0, nil
	res := takeResult(t, lowered, st, r)
	if st.calls != 1 || st.checks[0] != policy.MaxPolicies {
		t.Fatalf("store calls %d of %v checks, want one of %d", st.calls, st.checks, policy.MaxPolicies)
	}
	for i := range policy.MaxPolicies {
		used := int64(i % 5)
		want := 5 - used - 1
		if d := res.Decision(i); !d.Allowed || d.Limit != 5 || d.Remaining != want {
			t.Errorf("policy %d (%d used before): %+v, want allowed, Limit 5, Remaining %d", i, used, d, want)
		}
	}
	// The memory store itself: countingStore forwards Take alone.
	if err := res.GiveBack(context.Background(), st.Store, 0, 1<<policy.MaxPolicies-1); err != nil {
		t.Fatal(err)
	}
	for i := range policy.MaxPolicies {
		used := int64(i % 5)
		if d := res.Decision(i); !res.Given(i) || d.Remaining != 5-used {
			t.Errorf("policy %d after the give-back: Given %v, %+v; want given, Remaining %d", i, res.Given(i), d, 5-used)
		}
	}
}

// TestTwoGuards: a policy given a guard by WithGuard (a reload's replaced
// Spec) and then lowered by WithLimit is guarded by both, its configured
// Spec first: one store call of two checks (the configured Spec's,
// folded into the policy's own, judged at its limit, and the other), the
// lower Remaining, and a give-back reaching both guards. A copy at a
// limit above both keeps them, judged at its limit, for a kind whose
// counters count whatever the limit (not a sliding_log).
func TestTwoGuards(t *testing.T) {
	now := time.Unix(1_700_000_080, 0)
	mem := memoryStoreAt(t, &now)
	st := &countingStore{Store: mem}
	fw := func(l int64) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: l, Window: time.Minute}
	}
	old := policy.Must(policy.New("p", fw(10), constKey))
	configured := policy.Must(policy.New("p", fw(6), constKey))
	carried := policy.Must(configured.WithGuard(fw(10)))
	lowered := policy.Must(carried.WithLimit(4))
	if gs := lowered.Guards(); len(gs) != 2 || gs[0] != fw(6) || gs[1] != fw(10) {
		t.Fatalf("Guards() = %v, want [6 10] (the configured, the one given)", gs)
	}
	raised := policy.Must(carried.WithLimit(12))
	if gs := raised.Guards(); len(gs) != 2 || gs[0] != fw(6) || gs[1] != fw(10) || raised.GuardLimit(gs[0]) != 12 || raised.GuardLimit(gs[1]) != 12 {
		t.Errorf("raised to 12: Guards() = %v, want [6 10], each judged at 12 (their counters count whatever the limit)", gs)
	}
	if gs := policy.Must(policy.Must(policy.New("p", algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 6, Window: time.Minute}, constKey)).WithLimit(12)).Guards(); len(gs) != 0 {
		t.Errorf("sliding_log raised to 12: Guards() = %v, want none (its log holds no more than its limit's instants)", gs)
	}
	set := func(p *policy.Policy) *policy.Set {
		s, err := policy.NewSet([]*policy.Policy{p})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	takeN(t, set(old), mem, 1)        // 1 of the old 10
	takeN(t, set(configured), mem, 2) // 2 of the configured 6
	res := takeResult(t, set(lowered), st, httptest.NewRequest("GET", "/", nil))
	if st.calls != 1 || st.checks[0] != 2 {
		t.Errorf("store calls %d of %v checks, want one of 2", st.calls, st.checks)
	}
	// Configured 4-3 = 1; old 4-2 = 2 (both guards judged at 4): the
	// first guard's.
	if d := res.Decision(0); !d.Allowed || d.Limit != 4 || d.Remaining != 1 {
		t.Errorf("decision %+v, want allowed, Limit 4, Remaining 1 (the configured Spec's)", d)
	}
	if err := res.GiveBack(context.Background(), mem, 0, 1); err != nil {
		t.Fatal(err)
	}
	if d := takeResult(t, set(old), mem, httptest.NewRequest("GET", "/", nil)).Decision(0); d.Remaining != 8 {
		t.Errorf("old Spec after the give-back: Remaining %d, want 8 (1 and this one)", d.Remaining)
	}
	if d := takeResult(t, set(configured), mem, httptest.NewRequest("GET", "/", nil)).Decision(0); d.Remaining != 3 {
		t.Errorf("configured Spec after the give-back: Remaining %d, want 3 (2 and this one)", d.Remaining)
	}
}
