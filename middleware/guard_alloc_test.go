package middleware_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestAllocationsLowered: a token_bucket policy lowered by SetLimit is
// checked under its guard too (policy.Policy.Guard), whose store call a
// request's Result keeps in one allocation more (up to eight checks: four
// policies and their guards); a sliding_window one is checked once, on
// its guard's counters judged at its limit (nested.Ops.Folded), with
// the allocations of an unlowered one. Without context, the pooled
// Results keep theirs, so the budget is the unlowered one's. A limit
// lowered by SetLimitUnguarded costs what an unlowered one does.
func TestAllocationsLowered(t *testing.T) {
	store, _ := newStore(t)
	ip := keyfunc.Must(keyfunc.IP())
	bare := allocsPerRequest(ok)
	for _, kind := range []algorithms.Kind{algorithms.SlidingWindow, algorithms.TokenBucket} {
		for _, n := range []int{1, 4} {
			for _, ctx := range []bool{true, false} {
				for _, unguarded := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/%d/context=%v/unguarded=%v", kind, n, ctx, unguarded), func(t *testing.T) {
						if raceEnabled && !ctx {
							t.Skip("without context the Results are pooled, and the race detector makes sync.Pool drop items: allocation counts differ")
						}
						want := bare + 2
						if !ctx || unguarded || kind.Windowed() {
							want = bare + 1
						}
						if got := allocsLowered(t, store, ip, kind, n, ctx, unguarded); got > want {
							t.Errorf("%v allocations per request, want at most %v", got, want)
						}
					})
				}
			}
		}
	}
}

// allocsLowered returns the allocations per request of a middleware of n
// policies of kind, each lowered by SetLimit (or SetLimitUnguarded) to
// half its limit.
func allocsLowered(t *testing.T, store algorithms.Store, ip keyfunc.Func, kind algorithms.Kind, n int, ctx, unguarded bool) float64 {
	t.Helper()
	var ps []*policy.Policy
	for i := range n {
		ps = append(ps, policy.Must(policy.Per("p"+strconv.Itoa(i), 1_000_000, time.Duration(i+1)*time.Minute, ip, policy.WithAlgorithm(kind))))
	}
	var opts []middleware.Option
	if !ctx {
		opts = append(opts, middleware.WithoutContext())
	}
	m := middleware.MustNew(store, ps, opts...)
	set := m.SetLimit
	if unguarded {
		set = m.SetLimitUnguarded
	}
	for i := range n {
		if err := set("p"+strconv.Itoa(i), 500_000); err != nil {
			t.Fatal(err)
		}
	}
	h := m.Handler(ok)
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil)) // the store's first sight of the keys allocates
	return allocsPerRequest(h)
}

// TestSetLimitUnguarded: a limit of a bucket kind (token_bucket) set by
// SetLimitUnguarded is checked under its own Spec alone (no guard, no
// second check: the allocations of an unlowered policy), whose counters
// start afresh; SetLimit at the same limit switches the guard on,
// SetLimitUnguarded off again; a reload carries the limit over in
// proportion, unguarded still. (A window kind's: TestSetLimitUnguardedWindowKind.)
func TestSetLimitUnguarded(t *testing.T) {
	store, _ := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{bucket("a", 10)})
	h := m.Handler(ok)
	for range 7 {
		serve(h, "GET", "/")
	}
	guarded := func() bool {
		_, g := m.Set().Policy(0).Guard()
		return g
	}
	if err := m.SetLimitUnguarded("a", 8); err != nil {
		t.Fatal(err)
	}
	if guarded() || m.Set().Policy(0).Spec().Limit != 8 {
		t.Fatalf("after SetLimitUnguarded(a, 8): limit %d, guarded %v; want 8, unguarded", m.Set().Policy(0).Spec().Limit, guarded())
	}
	if got := remaining(t, serve(h, "GET", "/"), "a"); got != 7 {
		t.Errorf("unguarded at 8 after 7 of 10: r = %d, want 7 (its own counters, afresh)", got)
	}
	if err := m.SetLimit("a", 8); err != nil {
		t.Fatal(err)
	}
	if !guarded() {
		t.Error("SetLimit at the limit in force, unguarded: still unguarded, want the guard on")
	}
	if err := m.SetLimitUnguarded("a", 8); err != nil {
		t.Fatal(err)
	}
	if guarded() {
		t.Error("SetLimitUnguarded at the limit in force, guarded: still guarded, want it off")
	}
	if err := m.SetPolicies([]*policy.Policy{bucket("a", 20)}); err != nil {
		t.Fatal(err)
	}
	if guarded() || m.Set().Policy(0).Spec().Limit != 16 {
		t.Errorf("reloaded at 20: limit %d, guarded %v; want 16 (8 of 10 carried over), unguarded", m.Set().Policy(0).Spec().Limit, guarded())
	}
	for _, l := range []int64{20, 0} {
		if err := m.SetLimitUnguarded("a", l); err != nil {
			t.Fatal(err)
		}
		if got := m.Set().Policy(0).Spec().Limit; got != 20 || guarded() {
			t.Errorf("SetLimitUnguarded(a, %d): limit %d, guarded %v; want the configured 20", l, got, guarded())
		}
	}
	if err := m.SetLimitUnguarded("nope", 3); err == nil || !strings.Contains(err.Error(), "SetLimitUnguarded") {
		t.Errorf("SetLimitUnguarded(nope) = %v, want an error naming the method", err)
	}
}

// bucket returns a policy of a token bucket of limit a minute, per
// remote address.
func bucket(name string, limit int64) *policy.Policy {
	return policy.Must(policy.New(name, algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: limit, Window: time.Minute}, remote))
}

// TestSetLimitUnguardedWindowKind: for a window kind SetLimitUnguarded is
// SetLimit: the configured Spec's counters, which count requests whatever
// the limit, judged at the new limit in one check (as cheap as the
// unguarded copy's own, and exact), so a client that used 7 of 10 gets 1
// more at 8, not a fresh 8. Switching between the two methods at the
// limit in force does not rebuild the rule set, and a reload carries the
// limit over in proportion, judged on the new configured counters.
func TestSetLimitUnguardedWindowKind(t *testing.T) {
	store, _ := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{fixed("a", 10, time.Minute, remote)})
	h := m.Handler(ok)
	for range 7 {
		serve(h, "GET", "/")
	}
	if err := m.SetLimitUnguarded("a", 8); err != nil {
		t.Fatal(err)
	}
	if g, ok := m.Set().Policy(0).Guard(); !ok || g.Limit != 10 || m.Set().Policy(0).Spec().Limit != 8 {
		t.Fatalf("after SetLimitUnguarded(a, 8): limit %d, guard %v %v; want 8 judged on the configured 10's counters", m.Set().Policy(0).Spec().Limit, g, ok)
	}
	if got := remaining(t, serve(h, "GET", "/"), "a"); got != 0 {
		t.Errorf("at 8 after 7 of 10: r = %d, want 0 (the 7 counted)", got)
	}
	if w := serve(h, "GET", "/"); w.Code != http.StatusTooManyRequests {
		t.Errorf("at 8 after 8 in the minute: %d, want 429", w.Code)
	}
	before := m.Set()
	if err := m.SetLimit("a", 8); err != nil {
		t.Fatal(err)
	}
	if err := m.SetLimitUnguarded("a", 8); err != nil {
		t.Fatal(err)
	}
	if m.Set() != before {
		t.Error("switching between SetLimit and SetLimitUnguarded at the limit in force rebuilt a window kind's rule set")
	}
	if err := m.SetPolicies([]*policy.Policy{fixed("a", 20, time.Minute, remote)}); err != nil {
		t.Fatal(err)
	}
	if g, ok := m.Set().Policy(0).Guard(); !ok || g.Limit != 20 || m.Set().Policy(0).Spec().Limit != 16 {
		t.Errorf("reloaded at 20: limit %d, guard %v %v; want 16 (8 of 10 carried over) judged on the configured 20's counters", m.Set().Policy(0).Spec().Limit, g, ok)
	}
}

// TestSetLimitAboveConfiguredFlagMoot: above the configured limit no
// limit is guarded, so switching between SetLimit and SetLimitUnguarded
// at the limit in force there changes nothing: the rule set is not
// rebuilt (as for any limit in force).
func TestSetLimitAboveConfiguredFlagMoot(t *testing.T) {
	store, _ := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{fixed("a", 10, time.Minute, remote)})
	if err := m.SetLimit("a", 15); err != nil {
		t.Fatal(err)
	}
	before := m.Set()
	if err := m.SetLimitUnguarded("a", 15); err != nil {
		t.Fatal(err)
	}
	if err := m.SetLimit("a", 15); err != nil {
		t.Fatal(err)
	}
	if m.Set() != before {
		t.Error("switching the guard flag of a limit above the configured one rebuilt the rule set")
	}
}

// TestSetLimitUnguardedReloadedToWindowKind: a bucket kind's limit set by
// SetLimitUnguarded survives a reload that makes the policy a window kind,
// and is then SetLimit's: judged on the configured counters (its guard
// folded), as SetLimitUnguarded sets a window kind's.
func TestSetLimitUnguardedReloadedToWindowKind(t *testing.T) {
	store, _ := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{bucket("a", 10)})
	if err := m.SetLimitUnguarded("a", 8); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Set().Policy(0).Guard(); ok {
		t.Fatal("token_bucket at 8 by SetLimitUnguarded: guarded")
	}
	if err := m.SetPolicies([]*policy.Policy{fixed("a", 10, time.Minute, remote)}); err != nil {
		t.Fatal(err)
	}
	h := m.Handler(ok)
	for range 7 {
		serve(h, "GET", "/")
	}
	if g, ok := m.Set().Policy(0).Guard(); !ok || g.Limit != 10 || m.Set().Policy(0).Spec().Limit != 8 {
		t.Errorf("reloaded as fixed_window: limit %d, guard %v %v; want 8 judged on the configured 10's counters", m.Set().Policy(0).Spec().Limit, g, ok)
	}
	if err := m.SetLimit("a", 8); err != nil {
		t.Fatal(err)
	}
	if got := remaining(t, serve(h, "GET", "/"), "a"); got != 0 {
		t.Errorf("at 8 after 7: r = %d, want 0", got)
	}
}
