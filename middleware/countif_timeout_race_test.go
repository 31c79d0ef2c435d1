package middleware_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestCountIfOuterTimeoutHandler: http.TimeoutHandler between a middleware
// whose policy counts only responses below 500 (CountIf) and a middleware
// further in, through net/http's ServeMux and through chi. The handler
// between TimeoutHandler and the inner middleware blocks on a channel
// until TimeoutHandler, its time up, writes its 503: the outer middleware
// gives its units back for that 503 (as it is written and once
// TimeoutHandler returned) while the inner one, on TimeoutHandler's
// goroutine, decides the request (reading the outer one's Result and
// header values) and answers it itself. With the request's ended context
// it answers 503 (abandoned: its retry waits for the middlewares further
// out); with a context that outlives the answer (context.WithoutCancel,
// a handler going on with the work in the background) it admits the first
// request and refuses the others with 429. Run under -race: the two
// middlewares share no lock of a store (a store each) that would order
// their accesses for the race detector.
func TestCountIfOuterTimeoutHandler(t *testing.T) {
	key := func(*http.Request) (string, error) { return "k", nil }
	for _, router := range []string{"ServeMux", "chi"} {
		for _, keep := range []bool{false, true} {
			name := router + ", the request's context ended"
			if keep {
				name = router + ", the request's context kept"
			}
			t.Run(name, func(t *testing.T) {
				outerStore, _ := newStore(t)
				innerStore, _ := newStore(t)
				outer := middleware.MustNew(outerStore, []*policy.Policy{policy.Must(policy.Per("outer", 100, time.Hour, key,
					policy.CountIf(func(_ *http.Request, status int) bool { return status < 500 })))})
				inner := middleware.MustNew(innerStore, []*policy.Policy{policy.Must(policy.Per("inner", 1, time.Hour, key))})

				release := make(chan struct{}, 1) // the 503 of TimeoutHandler is being written
				finished := make(chan int, 1)     // the inner middleware's status
				// Between the outer middleware and TimeoutHandler: lets the
				// handler further in go on as TimeoutHandler writes its 503,
				// before the outer middleware sees the status.
				releasing := func(next http.Handler) http.Handler {
					return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						next.ServeHTTP(&releaseWriter{ResponseWriter: w, release: release}, r)
					})
				}
				timeout := func(next http.Handler) http.Handler {
					// Its time is up at once: the handler it serves blocks
					// until TimeoutHandler has answered.
					return http.TimeoutHandler(next, time.Nanosecond, "timed out")
				}
				gate := func(next http.Handler) http.Handler {
					return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						<-release
						if keep {
							r = r.WithContext(context.WithoutCancel(r.Context()))
						}
						cw := &codeWriter{ResponseWriter: w}
						next.ServeHTTP(cw, r)
						finished <- cw.code
					})
				}
				ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })

				var h http.Handler
				switch router {
				case "ServeMux":
					mux := http.NewServeMux()
					mux.Handle("GET /", outer.Handler(releasing(timeout(gate(inner.Handler(ok))))))
					h = mux
				case "chi":
					rt := chi.NewRouter()
					rt.Use(outer.Handler, releasing, timeout, gate, inner.Handler)
					rt.Get("/", ok)
					h = rt
				}
				srv := httptest.NewServer(h)
				defer srv.Close()

				const n = 32
				var inners []int
				for range n {
					resp, err := srv.Client().Get(srv.URL + "/")
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if resp.StatusCode != http.StatusServiceUnavailable {
						t.Fatalf("status %d, want TimeoutHandler's 503", resp.StatusCode)
					}
					inners = append(inners, hangguard.Await(t, finished, 10*time.Second, "the inner middleware's answer"))
				}
				for i, code := range inners {
					want := http.StatusServiceUnavailable
					if keep && i == 0 {
						want = http.StatusNoContent
					} else if keep {
						want = http.StatusTooManyRequests
					}
					if code != want {
						t.Fatalf("inner status %d of request %d, want %d", code, i, want)
					}
				}
				// Every 503 of TimeoutHandler's gave the outer middleware's
				// units back.
				if got := outer.Stats().GivenBack; got != n {
					t.Errorf("outer GivenBack = %d, want %d", got, n)
				}
			})
		}
	}
}

// releaseWriter signals release as the status is written, then writes it.
type releaseWriter struct {
	http.ResponseWriter
	release chan<- struct{}
}

func (w *releaseWriter) WriteHeader(code int) {
	w.release <- struct{}{}
	w.ResponseWriter.WriteHeader(code)
}

// codeWriter records the status written through it.
type codeWriter struct {
	http.ResponseWriter
	code int
}

func (w *codeWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}
