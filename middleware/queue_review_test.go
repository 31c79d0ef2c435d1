package middleware_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestQueueDeadlineObservedOnce: a leaky_queue request refused at once
// because its context's deadline comes before the end of its Delay (503,
// never served) is reported to the observer once, as Abandoned (as Stats
// counts it), not first as Allowed.
func TestQueueDeadlineObservedOnce(t *testing.T) {
	store, clock := newStore(t)
	queue := policy.Must(policy.New("queue", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: 10 * time.Second, MaxDelay: time.Minute}, remote))
	rec := &recorder{}
	served := 0
	m := middleware.MustNew(store, []*policy.Policy{queue}, middleware.WithClock(clock), middleware.WithObserver(rec),
		middleware.WithWait(func(ctx context.Context, d time.Duration) error {
			t.Errorf("held for %s; want no hold", d)
			return nil
		}))
	mux := http.NewServeMux()
	mux.Handle("GET /", m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served++ })))

	mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil)) // departs at once
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest("GET", "/", nil).WithContext(ctx)) // its turn is 10 s away
	if w.Code != 503 || served != 1 {
		t.Fatalf("deadline before the turn: %d, served %d; want 503, 1", w.Code, served)
	}
	if want := []string{"allowed", "abandoned"}; !slices.Equal(rec.outcomes, want) {
		t.Errorf("outcomes %v, want %v (the refused request once, as what it got)", rec.outcomes, want)
	}
	if s := m.Stats(); s.Abandoned != 1 || s.Delayed != 0 {
		t.Errorf("stats %+v, want one abandoned, none delayed (it was not held)", s)
	}
}
