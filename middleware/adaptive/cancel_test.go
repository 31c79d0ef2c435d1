package adaptive_test

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// deadlineCtx is a request context whose server-side deadline (a timeout
// middleware's, http.TimeoutHandler's) runs out when the test says, so
// that no test waits for the clock: Err is context.DeadlineExceeded once
// expired is closed.
type deadlineCtx struct {
	context.Context
	deadline time.Time
	expired  chan struct{}
}

type deadlineKey struct{}

func (c *deadlineCtx) Deadline() (time.Time, bool) { return c.deadline, true }
func (c *deadlineCtx) Done() <-chan struct{}       { return c.expired }
func (c *deadlineCtx) Err() error {
	select {
	case <-c.expired:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// withDeadline gives the requests of h that ask for it (?deadline) a
// deadlineCtx, which their handler can make run out (expire).
func withDeadline(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("deadline") {
			dc := &deadlineCtx{Context: r.Context(), deadline: time.Now().Add(time.Hour), expired: make(chan struct{})}
			r = r.WithContext(context.WithValue(dc, deadlineKey{}, dc))
		}
		h.ServeHTTP(w, r)
	})
}

// expire makes the server-side deadline of r run out, if it has one of
// withDeadline's.
func expire(r *http.Request) {
	if dc, ok := r.Context().Value(deadlineKey{}).(*deadlineCtx); ok {
		close(dc.expired)
	}
}

// TestClientCancellationsDoNotLower: requests whose clients hang up (a
// mobile network dropping, a load balancer's retries) before their handler
// ends are no sign of the service's health: handlers answer them 500 when
// their database call returns context.Canceled, a reverse proxy 502, and
// they last as long as the client waited. Through a real server, with the
// Controller wired by Controller.Handler and by the middleware's
// SetFeedback (ServeMux and chi), a period of 100 requests served in 10ms
// and 25 whose clients left after 50ms (20% "errors", a p99 five times the
// baseline) lowered every client's limit to 80%; the period is now
// healthy, as without them. The same 25 requests failing on the server's
// own deadline (run out while they ran), or answered 500 with their
// client still there, still lower it.
func TestClientCancellationsDoNotLower(t *testing.T) {
	for _, wiring := range []string{"Handler", "SetFeedback/ServeMux", "SetFeedback/chi"} {
		for _, failing := range []string{"client gone", "proxy, client gone", "server deadline", "client there"} {
			t.Run(wiring+"/"+failing, func(t *testing.T) {
				clock := algotest.NewClock(t0)
				p := policy.Must(policy.New("p0", algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 1000, Window: time.Minute}, ip))
				m := clockedMiddleware(t, clock, []*policy.Policy{p})
				c, err := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: 10 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}

				started := make(chan struct{}, 1)
				var app http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Query().Has("ok") {
						clock.Advance(10 * time.Millisecond)
						w.Write([]byte("ok"))
						return
					}
					clock.Advance(50 * time.Millisecond)
					started <- struct{}{}
					if failing != "client there" {
						expire(r)
						<-r.Context().Done() // the query ends with the context
					}
					http.Error(w, "query failed", http.StatusInternalServerError)
				})
				if failing == "proxy, client gone" {
					backend := httptest.NewServer(app)
					t.Cleanup(backend.Close)
					u, err := url.Parse(backend.URL)
					if err != nil {
						t.Fatal(err)
					}
					proxy := httputil.NewSingleHostReverseProxy(u)
					proxy.ErrorLog = log.New(io.Discard, "", 0)
					app = proxy // it answers 502 when its client's cancellation cuts its call
				}
				var h http.Handler
				switch wiring {
				case "Handler":
					h = m.Handler(withDeadline(c.Handler(app)))
				case "SetFeedback/ServeMux":
					m.SetFeedback(c)
					h = withDeadline(routed("ServeMux", app, m.Handler))
				case "SetFeedback/chi":
					m.SetFeedback(c)
					h = withDeadline(routed("chi", app, m.Handler))
				}
				ended := make(chan struct{}, 1)
				srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					defer func() { ended <- struct{}{} }()
					h.ServeHTTP(w, r)
				}))
				srv.Config.ErrorLog = log.New(io.Discard, "", 0)
				srv.Start()
				defer srv.Close()

				get := func(ctx context.Context, query string) (int, error) {
					req, err := http.NewRequestWithContext(ctx, "GET", srv.URL+"/?"+query, nil)
					if err != nil {
						t.Fatal(err)
					}
					resp, err := srv.Client().Do(req)
					if err != nil {
						return 0, err
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					return resp.StatusCode, nil
				}
				for range 100 {
					if code, err := get(context.Background(), "ok"); code != http.StatusOK {
						t.Fatalf("GET /?ok: %d, %v", code, err)
					}
					<-ended
				}
				for range 25 {
					ctx, cancel := context.WithCancel(context.Background())
					query := "fail"
					if failing == "server deadline" {
						query = "deadline"
					}
					replied := make(chan error, 1)
					go func() {
						_, err := get(ctx, query)
						replied <- err
					}()
					<-started
					if failing == "client gone" || failing == "proxy, client gone" {
						cancel() // the client hangs up
					}
					<-ended
					err := <-replied
					cancel()
					if left := failing == "client gone" || failing == "proxy, client gone"; left != errors.Is(err, context.Canceled) {
						t.Fatalf("GET /?%s: %v", query, err)
					}
				}
				clock.Advance(time.Minute)
				if err := c.Evaluate(); err != nil {
					t.Fatal(err)
				}
				want, wantLimits := 0.8, "800"
				if failing == "client gone" || failing == "proxy, client gone" {
					want, wantLimits = 1, "1000"
				}
				if c.Level() != want || limitsOf(m) != wantLimits {
					t.Errorf("after 100 requests served and 25 %s: level %v, limits %s; want %v, %s", failing, c.Level(), limitsOf(m), want, wantLimits)
				}
			})
		}
	}
}
