package metricset_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metricset"
	"github.com/ratekeeper/ratekeeper/policy"
)

// holdObserver records what Holds observes of each Event, as
// "policy/outcome seconds" lines, one string per Event.
type holdObserver struct {
	mu     sync.Mutex
	events []string
	// allocs, when set, is told the allocations of Holds on each held
	// Event.
	allocs func(float64)
}

func (o *holdObserver) ObserveRequest(e middleware.Event) {
	var seen []string
	metricset.Holds(e, func(name string, h metricset.Hold, seconds float64) {
		seen = append(seen, fmt.Sprintf("%s/%s %v", name, h.Label(), time.Duration(seconds*float64(time.Second))))
	})
	if _, held := e.Held(); held && o.allocs != nil {
		var n int
		observe := func(string, metricset.Hold, float64) { n++ }
		o.allocs(testing.AllocsPerRun(100, func() { metricset.Holds(e, observe) }))
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events = append(o.events, strings.Join(seen, ", "))
}

func (o *holdObserver) ObserveState(from, to middleware.State)      {}
func (o *holdObserver) ObserveLimit(name string, limit, conf int64) {}

func queueEvery(name string, every time.Duration) *policy.Policy {
	spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: every, MaxDelay: time.Minute}
	return policy.Must(policy.New(name, spec, user))
}

// TestHolds: through a ServeMux and the memory store, Holds observes the
// hold of each request held, once under each policy whose decision had a
// Delay (a leaky_queue that queued it), with the outcome of the hold and
// the time that policy's queue held it: its Delay, or the time held when
// that is less. Two queues of one per 10 s and one per 4 s and a fixed
// window, and a wait that advances the clock:
//   - the first request departs at once: nothing;
//   - the second is held 10 s, for both queues: 10 s under the first, 4 s
//     under the second (its own Delay: the longer one held it the rest);
//     nothing under the window;
//   - the third, 10 s later, is queued by the first queue alone (the
//     second has room again), and its client leaves 3 s into the hold: 3 s,
//     abandoned;
//   - the fourth's deadline comes before its turn: refused at once, not
//     held, nothing;
//   - the fifth is held by a wait that returns at once: a hold of 0 s.
//
// Events without a Result, or not held (none of the others), observe
// nothing.
func TestHolds(t *testing.T) {
	clock := algotest.NewClock(time.Unix(1_700_000_040, 0))
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	var wait func(ctx context.Context, d time.Duration) error
	obs := &holdObserver{allocs: func(n float64) {
		if n != 0 {
			t.Errorf("Holds: %v allocations, want 0", n)
		}
	}}
	m := middleware.MustNew(store, []*policy.Policy{queueEvery("q10", 10*time.Second), queueEvery("q4", 4*time.Second), fixed("flat", 100)},
		middleware.WithObserver(obs), middleware.WithClock(clock),
		middleware.WithWait(func(ctx context.Context, d time.Duration) error { return wait(ctx, d) }))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(http.ResponseWriter, *http.Request) {})
	h := m.Handler(mux)
	do := func(ctx context.Context) int {
		r := httptest.NewRequest("GET", "/", nil).WithContext(ctx)
		r.Header.Set("X-User", "ann")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	bg := context.Background()
	wait = func(ctx context.Context, d time.Duration) error { return clock.Sleep(ctx, d) }
	for i := range 2 {
		if code := do(bg); code != http.StatusOK {
			t.Fatalf("request %d: %d", i+1, code)
		}
	}
	left, leave := context.WithCancel(bg)
	wait = func(ctx context.Context, d time.Duration) error {
		clock.Advance(3 * time.Second)
		leave()
		<-ctx.Done()
		return ctx.Err()
	}
	if code := do(left); code != http.StatusServiceUnavailable {
		t.Fatalf("client gone while held: %d", code)
	}
	soon, cancel := context.WithTimeout(bg, 100*time.Millisecond)
	defer cancel()
	wait = func(context.Context, time.Duration) error {
		t.Error("a request whose deadline comes before its turn held")
		return nil
	}
	if code := do(soon); code != http.StatusServiceUnavailable {
		t.Fatalf("deadline before its turn: %d", code)
	}
	wait = func(context.Context, time.Duration) error { return nil }
	if code := do(bg); code != http.StatusOK {
		t.Fatalf("held at once: %d", code)
	}
	want := []string{
		"",
		"q10/allowed 10s, q4/allowed 4s",
		"q10/abandoned 3s",
		"",
		"q10/allowed 0s",
	}
	if got := obs.events; !slices.Equal(got, want) {
		t.Errorf("observed %q\nwant     %q", got, want)
	}
	metricset.Holds(middleware.Event{}, func(name string, h metricset.Hold, _ float64) {
		t.Errorf("an Event without a Result observed %s/%s", name, h.Label())
	})
}

// TestHoldLabels: the outcomes of a hold are labelled as the requests
// counter labels the same outcomes.
func TestHoldLabels(t *testing.T) {
	var got []string
	for h := range metricset.Hold(metricset.NumHolds) {
		got = append(got, h.Label())
	}
	if want := []string{metricset.Allowed.Label(), metricset.Abandoned.Label()}; !slices.Equal(got, want) {
		t.Errorf("hold labels %q, want %q", got, want)
	}
}

// TestDefaultHoldBuckets: from 1ms (the spacing of a queue of a thousand a
// second) to 60s (a MaxDelay of a minute), increasing, a new slice each
// call.
func TestDefaultHoldBuckets(t *testing.T) {
	a, b := metricset.DefaultHoldBuckets(), metricset.DefaultHoldBuckets()
	want := []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}
	if !slices.Equal(a, want) {
		t.Errorf("DefaultHoldBuckets() = %v, want %v", a, want)
	}
	if err := rule.Check("DefaultHoldBuckets", a); err != nil {
		t.Error(err)
	}
	a[0] = 5
	if b[0] != .001 {
		t.Errorf("two calls share their slice")
	}
}
