package middleware_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

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

// TestQueueHeldHeadersAtWrite: the rate-limit headers of a request held
// for a leaky_queue Delay leave with the response, after the hold, so
// their delta-seconds (the IETF t, the draft-7, draft-6 and legacy reset)
// count from then, not from the admission: each is reduced by the time
// held, never below 0, rounded up. Remaining is as the decision left it;
// a Unix-time reset is an instant and does not move. A request refused at
// once (its deadline comes first) carries the values of its admission,
// its queue place given back (see TestQueueDeadlineRefundHeaders).
func TestQueueHeldHeadersAtWrite(t *testing.T) {
	for _, tt := range []struct {
		profile middleware.Profile
		want    map[string]string
	}{
		// At the admission the queue's t is 10 s, its reset 20 s, the
		// minute's t 60 s; the hold lasts 10.3 s.
		{middleware.IETF, map[string]string{"RateLimit": `"queue";r=5;t=0, "minute";r=98;t=50`}},
		{middleware.Draft7, map[string]string{"RateLimit": "limit=7, remaining=5, reset=10"}},
		{middleware.Draft6, map[string]string{"RateLimit-Limit": "7", "RateLimit-Remaining": "5", "RateLimit-Reset": "10"}},
		{middleware.Legacy, map[string]string{"X-RateLimit-Limit": "7", "X-RateLimit-Remaining": "5", "X-RateLimit-Reset": "10"}},
		{middleware.LegacyUnix, map[string]string{"X-RateLimit-Reset": strconv.FormatInt(t0.Unix()+20, 10)}},
	} {
		t.Run(tt.profile.String(), func(t *testing.T) {
			store, clock := newStore(t)
			queue := policy.Must(policy.New("queue", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: 10 * time.Second, MaxDelay: time.Minute}, remote))
			var waits []time.Duration
			m := middleware.MustNew(store, []*policy.Policy{queue, fixed("minute", 100, time.Minute, remote)},
				middleware.WithHeaders(tt.profile), middleware.WithClock(clock),
				middleware.WithWait(func(ctx context.Context, d time.Duration) error {
					waits = append(waits, d)
					clock.Advance(d + 300*time.Millisecond) // the timer fires late
					return nil
				}))
			r := chi.NewRouter()
			r.Use(m.Handler)
			r.Get("/", ok)
			get := func(ctx context.Context) *httptest.ResponseRecorder {
				w := httptest.NewRecorder()
				r.ServeHTTP(w, httptest.NewRequest("GET", "/", nil).WithContext(ctx))
				return w
			}
			get(context.Background()) // departs at once
			w := get(context.Background())
			if w.Code != 200 || !slices.Equal(waits, []time.Duration{10 * time.Second}) {
				t.Fatalf("held request: %d, waits %v; want 200 after one 10 s wait", w.Code, waits)
			}
			for k, v := range tt.want {
				if got := w.Header().Get(k); got != v {
					t.Errorf("after the hold: %s %q, want %q", k, got, v)
				}
			}

			// Refused at once: its turn is 9.7 s away (the queue frees at
			// t0+20 s), after its deadline; nothing was held, nothing is
			// reduced. Its place is given back: the queue holds 6 (5 with
			// it), its t is the same.
			w = get(beforeTurn(time.Second))
			if w.Code != 503 || len(waits) != 1 {
				t.Fatalf("deadline before the turn: %d, waits %v; want 503, no new wait", w.Code, waits)
			}
			if tt.profile == middleware.IETF {
				if got, want := w.Header().Get("RateLimit"), `"queue";r=6;t=10, "minute";r=97;t=50`; got != want {
					t.Errorf("refused at once: RateLimit %q, want %q", got, want)
				}
			}
		})
	}
}

// TestQueueCutShortObservedOnce: a request whose client goes away while
// it is held for its leaky_queue Delay is not served (503, counted
// Abandoned): the observer is told so once, when the hold ends, not first
// that it was allowed. A request held to its end is observed Allowed. The
// latency reported is the decision's, without the hold.
func TestQueueCutShortObservedOnce(t *testing.T) {
	store, clock := newStore(t)
	queue := policy.Must(policy.New("queue", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: time.Minute}, remote))
	rec := &recorder{}
	var leave context.CancelFunc // the client of the next held request goes away
	m := middleware.MustNew(store, []*policy.Policy{queue}, middleware.WithClock(clock), middleware.WithObserver(rec),
		middleware.WithWait(func(ctx context.Context, d time.Duration) error {
			if leave != nil {
				clock.Advance(d / 2)
				leave()
				return ctx.Err()
			}
			clock.Advance(d)
			return nil
		}))
	served := 0
	r := chi.NewRouter()
	r.Use(m.Handler)
	r.Get("/", func(w http.ResponseWriter, r *http.Request) { served++ })

	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil)) // departs at once
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	leave = cancel
	w := httptest.NewRecorder()
	r.ServeHTTP(w, httptest.NewRequest("GET", "/", nil).WithContext(ctx))
	leave = nil
	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil)) // held to its end
	if w.Code != 503 || served != 2 {
		t.Fatalf("client gone while held: %d, served %d; want 503, 2", w.Code, served)
	}
	if want := []string{"allowed", "abandoned", "allowed"}; !slices.Equal(rec.outcomes, want) {
		t.Errorf("outcomes %v, want %v (the abandoned request once, as what came of it)", rec.outcomes, want)
	}
	if rec.latency != 0 {
		t.Errorf("latency %s, want 0 (the clock moved only during the holds)", rec.latency)
	}
	if s := m.Stats(); s.Abandoned != 1 || s.Delayed != 2 {
		t.Errorf("stats %+v, want one abandoned, two delayed", s)
	}
}
