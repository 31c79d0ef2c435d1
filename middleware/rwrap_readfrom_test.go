package middleware_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// brokenBackend is a backend's response body whose first read fails (its
// connection reset): a handler copying it to the client has sent nothing.
type brokenBackend struct{}

func (brokenBackend) Read([]byte) (int, error) { return 0, errors.New("backend connection reset") }

// statusLog is a Feedback that keeps the statuses it is told.
type statusLog struct {
	mu  sync.Mutex
	got []int
}

func (l *statusLog) Observe(_ time.Duration, status int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, status)
}

func (l *statusLog) statuses() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.got)
}

// TestFailedCopyCountsAsTheStatusSent: a handler that relays a backend's
// body with io.Copy and, when the copy fails before a byte, answers 502
// (as a proxy does) failed, over HTTP/1 too, where io.Copy goes through
// the writer's ReadFrom. The middleware's writer took the copy for a 200
// as it began: under policy.CountFailed every such failure was given back
// (three 502s in a row under a limit of two failures, never a 429), and a
// Feedback (the adaptive controller) was told of successes. Through chi
// and http.ServeMux, on a real HTTP/1 server, with and without a Feedback
// (whose writer is the one the handler writes to then).
func TestFailedCopyCountsAsTheStatusSent(t *testing.T) {
	for _, router := range []string{"chi", "ServeMux"} {
		for _, withFeedback := range []bool{false, true} {
			name := router + map[bool]string{false: "", true: "/Feedback"}[withFeedback]
			t.Run(name, func(t *testing.T) {
				store, _ := newStore(t)
				spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 2, Window: time.Hour}
				m := middleware.MustNew(store, []*policy.Policy{
					policy.Must(policy.New("relay", spec, user, policy.CountIf(policy.CountFailed))),
				})
				fb := &statusLog{}
				if withFeedback {
					m.SetFeedback(fb)
				}
				relay := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if _, err := io.Copy(w, brokenBackend{}); err != nil {
						http.Error(w, "bad gateway", http.StatusBadGateway)
					}
				})
				var root http.Handler
				if router == "chi" {
					c := chi.NewRouter()
					c.Use(m.Handler)
					c.Get("/relay", relay)
					root = c
				} else {
					mux := http.NewServeMux()
					mux.Handle("GET /relay", m.Handler(relay))
					root = mux
				}
				// done tells when the middleware has returned, its give-back
				// made: the client has its response before.
				done := make(chan struct{}, 1)
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					defer func() { done <- struct{}{} }()
					root.ServeHTTP(w, r)
				}))
				defer srv.Close()
				var got []int
				for range 3 {
					req, _ := http.NewRequest("GET", srv.URL+"/relay", nil)
					req.Header.Set("X-User", "ann")
					resp, err := srv.Client().Do(req)
					if err != nil {
						t.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					<-done
					got = append(got, resp.StatusCode)
				}
				if want := []int{502, 502, 429}; !slices.Equal(got, want) {
					t.Errorf("three failed relays answered %v, want %v (two failures counted); GivenBack %d", got, want, m.Stats().GivenBack)
				}
				if want := []int{502, 502}; withFeedback && !slices.Equal(fb.statuses(), want) {
					t.Errorf("the Feedback was told %v, want %v", fb.statuses(), want)
				}
			})
		}
	}
}
