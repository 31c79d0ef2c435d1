package middleware_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// feedbackRecorder records what the middleware tells its Feedback.
type feedbackRecorder struct {
	mu  sync.Mutex
	got []string
}

func (f *feedbackRecorder) Observe(latency time.Duration, status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, fmt.Sprintf("%d/%v", status, latency))
}

// TestFeedback: every request passed to the handler is reported with the
// handler's latency (on the middleware's clock) and status, panics as 500;
// requests the middleware answers itself (429, 400 for no key) are not;
// SetFeedback(nil) stops it.
func TestFeedback(t *testing.T) {
	clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	p := policy.Must(policy.New("per-user", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 3, Window: time.Hour},
		keyfunc.Must(keyfunc.Header("X-User"))))
	m := middleware.MustNew(store, []*policy.Policy{p}, middleware.WithClock(clock))
	fb := &feedbackRecorder{}
	m.SetFeedback(fb)
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		clock.Advance(7 * time.Millisecond)
		switch r.URL.Path {
		case "/fail":
			http.Error(w, "down", http.StatusServiceUnavailable)
		case "/panic":
			panic(http.ErrAbortHandler)
		case "/silent":
		default:
			w.Write([]byte("ok"))
		}
	}))
	serve := func(path, user string) int {
		r := httptest.NewRequest("GET", path, nil)
		if user != "" {
			r.Header.Set("X-User", user)
		}
		w := httptest.NewRecorder()
		func() {
			defer func() { recover() }()
			h.ServeHTTP(w, r)
		}()
		return w.Code
	}
	codes := []int{serve("/", "ann"), serve("/fail", "ann"), serve("/silent", "ann"), serve("/", "ann"), serve("/", "")}
	if fmt.Sprint(codes) != "[200 503 200 429 400]" {
		t.Fatalf("statuses %v", codes)
	}
	serve("/panic", "bob")
	m.SetFeedback(nil)
	serve("/", "bob")
	want := "[200/7ms 503/7ms 200/7ms 500/7ms]"
	if fmt.Sprint(fb.got) != want {
		t.Errorf("feedback %v, want %s (handled requests only, a panic as 500)", fb.got, want)
	}
}

// feedbackMiddleware returns a middleware with one policy that allows
// everything, and the recorder it feeds.
func feedbackMiddleware(t *testing.T) (*middleware.Middleware, *feedbackRecorder) {
	t.Helper()
	clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	p := policy.Must(policy.New("global", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1000, Window: time.Hour},
		keyfunc.Global()))
	m := middleware.MustNew(store, []*policy.Policy{p}, middleware.WithClock(clock))
	fb := &feedbackRecorder{}
	m.SetFeedback(fb)
	return m, fb
}

// TestSetFeedbackUnderTraffic: SetFeedback may be called while requests
// are served (run with -race); every request passed on is reported to the
// Feedback loaded when it started, or to none.
func TestSetFeedbackUnderTraffic(t *testing.T) {
	m, fb := feedbackMiddleware(t)
	m.SetFeedback(nil)
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	const workers, each = 4, 200
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
			}
		})
	}
	for i := range 100 {
		if i%2 == 0 {
			m.SetFeedback(fb)
		} else {
			m.SetFeedback(nil)
		}
	}
	wg.Wait()
	m.SetFeedback(fb)
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if n := len(fb.got); n < 1 || n > workers*each+1 {
		t.Errorf("%d reports, want 1 to %d", n, workers*each+1)
	}
}
