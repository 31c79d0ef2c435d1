package middleware_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// spanRecorder is a Feedback told of refusals and of the requests in
// flight (as an adaptive.Controller is): it records what it is told, and
// how many requests it has in flight.
type spanRecorder struct {
	mu   sync.Mutex
	got  []string
	open int
}

func (f *spanRecorder) Observe(latency time.Duration, status int) {
	f.add(fmt.Sprintf("%d/%v", status, latency))
}
func (f *spanRecorder) Refused() { f.add("refused") }

func (f *spanRecorder) Begin() interface{ End() } {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.open++
	return &recordedSpan{f: f}
}

func (f *spanRecorder) add(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, s)
}

func (f *spanRecorder) inFlight() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.open
}

// recordedSpan is a request in flight for a spanRecorder.
type recordedSpan struct {
	f     *spanRecorder
	ended bool
}

func (s *recordedSpan) End() {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	if s.ended {
		s.f.got = append(s.f.got, "ended twice")
		return
	}
	s.ended = true
	s.f.open--
}

// TestFeedbackSelfNestedOnce: a middleware nested in itself (chi's r.Use
// and r.With of the same one on a route, a ServeMux route wrapped twice
// or three times) told its Feedback of each request it passed on once per
// layer: two Observes of one request (the outer one timing the inner
// layer's decision too), and two requests in flight while the handler
// ran. It is told once, by the innermost layer the request reaches, as a
// middleware not nested is: one Observe of the handler's own time for a
// request passed on, one Refused for a request refused (by the inner
// layer under chi, where the route's policy is decided; by the outer one
// through the ServeMux), never an Observe of a 429, one Observe of a
// request every layer skips (WithSkip); and one request in flight while
// the handler runs, every span begun ended once. Built WithoutContext,
// which passes requests on as they came, it is told of a request by
// each layer, as SetFeedback says: the outer one times the inner one
// (its 429 too), as it counts the request once per layer
// (ErrCountedTwice: the first request is refused).
func TestFeedbackSelfNestedOnce(t *testing.T) {
	for _, c := range []struct {
		name      string
		layers    int
		noContext bool
		codes     string
		told      string
		inApp     string
	}{
		{name: "chi", layers: 2, codes: "200 429 429 200", told: "200/7ms refused refused 200/7ms", inApp: "[1 1]"},
		{name: "ServeMux", layers: 2, codes: "200 429 429 200", told: "200/7ms refused refused 200/7ms", inApp: "[1 1]"},
		{name: "ServeMux", layers: 3, codes: "200 429 429 200", told: "200/7ms refused refused 200/7ms", inApp: "[1 1]"},
		{name: "ServeMux", layers: 2, noContext: true, codes: "429 429 429 200",
			// The request counted twice is refused by the inner layer,
			// and the outer one times that layer's 429.
			told: "refused 429/0s refused refused 200/7ms 200/7ms", inApp: "[2]"},
	} {
		t.Run(fmt.Sprintf("%s/%d layers/without context %v", c.name, c.layers, c.noContext), func(t *testing.T) {
			store, clock := newStore(t)
			m := middleware.MustNew(store, []*policy.Policy{
				policy.Must(policy.New("global", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Hour}, keyfunc.Global())),
				policy.Must(policy.New("route", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}, keyfunc.Global(),
					policy.WithRoutes("GET /r"))),
			}, middleware.WithClock(clock), middleware.WithErrorHandler(func(*http.Request, error) {}),
				middleware.WithSkip(func(r *http.Request) bool { return r.Header.Get("X-Skip") != "" }))
			if c.noContext {
				m = middleware.MustNew(store, m.Set().Policies(), middleware.WithClock(clock), middleware.WithErrorHandler(func(*http.Request, error) {}),
					middleware.WithSkip(func(r *http.Request) bool { return r.Header.Get("X-Skip") != "" }), middleware.WithoutContext())
			}
			fb := &spanRecorder{}
			m.SetFeedback(fb)
			var inApp []int
			app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				inApp = append(inApp, fb.inFlight())
				clock.Advance(7 * time.Millisecond)
			})
			var h http.Handler
			if c.name == "chi" {
				r := chi.NewRouter()
				r.Use(m.Handler)
				r.With(m.Handler).Get("/r", app)
				h = r
			} else {
				var wrapped http.Handler = app
				for range c.layers {
					wrapped = m.Handler(wrapped)
				}
				mux := http.NewServeMux()
				mux.Handle("GET /r", wrapped)
				h = mux
			}
			var codes []string
			for i := range 4 {
				w := httptest.NewRecorder()
				r := httptest.NewRequest("GET", "/r", nil)
				if i == 3 {
					r.Header.Set("X-Skip", "1")
				}
				h.ServeHTTP(w, r)
				codes = append(codes, fmt.Sprint(w.Code))
			}
			if got := strings.Join(codes, " "); got != c.codes {
				t.Fatalf("statuses %s, want %s", got, c.codes)
			}
			fb.mu.Lock()
			defer fb.mu.Unlock()
			if got := strings.Join(fb.got, " "); got != c.told {
				t.Errorf("Feedback told %q, want %q", got, c.told)
			}
			if got := fmt.Sprint(inApp); got != c.inApp {
				t.Errorf("requests in flight while the handler ran: %s, want %s", got, c.inApp)
			}
			if fb.open != 0 {
				t.Errorf("%d requests in flight once all were served, want 0", fb.open)
			}
		})
	}
}
