package middleware_test

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// specRecorder notes, in the order of the calls, the policies
// (ObservePolicy: "name spec"), limits ("name=limit/configured") and
// removals ("-name") a middleware tells it.
type specRecorder struct {
	mu   sync.Mutex
	told []string
}

func (r *specRecorder) note(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.told = append(r.told, s)
}

func (r *specRecorder) ObserveRequest(middleware.Event)        {}
func (r *specRecorder) ObserveState(from, to middleware.State) {}
func (r *specRecorder) ObserveLimit(name string, limit, configured int64) {
	r.note(name + "=" + strconv.FormatInt(limit, 10) + "/" + strconv.FormatInt(configured, 10))
}
func (r *specRecorder) ObservePolicyRemoved(name string) { r.note("-" + name) }
func (r *specRecorder) ObservePolicy(name string, spec algorithms.Spec) {
	r.note(name + " " + spec.String())
}

// take returns what r was told since the last take, one per line.
func (r *specRecorder) take() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := strings.Join(r.told, "\n")
	r.told = nil
	return s
}

// TestPolicyObserver: a PolicyObserver is told each policy's Spec as
// configured (its window above all, which ObserveLimit does not say)
// when the middleware is built, before any request, each before the
// policy's limits; on a reload, of every policy new or whose Spec changed,
// a window changed alone (limits unchanged, so no ObserveLimit) too; not
// on SetLimit, which changes the effective limit alone; and never once
// the middleware is closed. Several observers (one without the method)
// are each told.
func TestPolicyObserver(t *testing.T) {
	store, _ := newStore(t)
	rec, rec2 := &specRecorder{}, &specRecorder{}
	m := middleware.MustNew(store, []*policy.Policy{
		fixed("a", 10, time.Minute, remote), fixed("b", 5, time.Second, remote), fixed("c", 3, time.Hour, remote),
	}, middleware.WithObserver(rec, &nopObserver{}, rec2))
	check := func(when, want string) {
		t.Helper()
		for i, r := range []*specRecorder{rec, rec2} {
			if got := r.take(); got != want {
				t.Errorf("%s: observer %d told\n%s\nwant\n%s", when, i, got, want)
			}
		}
	}
	check("at New", "a fixed_window 10/1m0s\na=10/10\nb fixed_window 5/1s\nb=5/5\nc fixed_window 3/1h0m0s\nc=3/3")

	// a: window alone changed; b: unchanged; c: limit and window; d: new;
	// e: dropped.
	if err := m.SetPolicies([]*policy.Policy{
		fixed("a", 10, time.Hour, remote), fixed("b", 5, time.Second, remote), fixed("c", 4, time.Minute, remote), fixed("d", 1, time.Second, remote),
	}); err != nil {
		t.Fatal(err)
	}
	check("after the reload", "a fixed_window 10/1h0m0s\nc fixed_window 4/1m0s\nc=4/4\nd fixed_window 1/1s\nd=1/1")

	if err := m.SetLimit("a", 2); err != nil {
		t.Fatal(err)
	}
	check("after SetLimit", "a=2/10")

	if err := m.SetPolicies([]*policy.Policy{fixed("a", 10, time.Minute, remote)}); err != nil {
		t.Fatal(err)
	}
	check("after a reload dropping b, c and d", "a fixed_window 10/1m0s\n-b\n-c\n-d")

	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.SetPolicies([]*policy.Policy{fixed("a", 10, time.Second, remote), fixed("f", 1, time.Second, remote)}); err != nil {
		t.Fatal(err)
	}
	check("after Close", "")

	// A single observer, the common case, is called directly.
	solo := &specRecorder{}
	middleware.MustNew(store, []*policy.Policy{fixed("a", 10, time.Minute, remote)}, middleware.WithObserver(solo))
	if got, want := solo.take(), "a fixed_window 10/1m0s\na=10/10"; got != want {
		t.Errorf("single observer told\n%s\nwant\n%s", got, want)
	}
}
