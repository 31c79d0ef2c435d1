package middleware_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestShadowReportKeepsRequest: a shadow report may hand its request to
// another goroutine (a batching logger), as the request is the handler's
// own. The middleware built the request it gives the report and then built
// it again, in the same place, for the handler: the second write raced
// with the reader (go test -race reports it).
func TestShadowReportKeepsRequest(t *testing.T) {
	store, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	p := policy.Must(policy.PerMinute("one", 1, keyfunc.Global(), policy.WithAlgorithm(algorithms.FixedWindow)))
	var wg sync.WaitGroup
	var reported []*http.Request
	var mu sync.Mutex
	m := middleware.MustNew(store, []*policy.Policy{p}, middleware.WithShadow(func(r *http.Request, _ *middleware.Result) {
		wg.Go(func() {
			_, ok := middleware.FromContext(r.Context()) // read by another goroutine
			mu.Lock()
			defer mu.Unlock()
			if ok && r.Method == "GET" {
				reported = append(reported, r)
			}
		})
	}))
	var served int
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served++ }))
	for range 3 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	}
	wg.Wait()
	if served != 3 || len(reported) != 2 {
		t.Errorf("served %d, reported %d; want 3 served (shadow), 2 reported with the Result", served, len(reported))
	}
}

// TestShadowContextEndedServed: in shadow mode a request whose context
// ends while the store decides it (a server-side deadline runs out, or its
// client goes away) goes on to the handler undecided, as it would without
// the middleware: the handler sees its context ended and answers. It is
// counted and reported as shadow-denied, its Result's Err the store's
// error, under either failure mode; a reject hook is not called. It was
// answered 503 (Retry-After 1 s for a deadline) and counted abandoned: a
// refusal, which shadow mode promises never to make. A leaky_queue
// request whose deadline comes before its turn, refused at once outside
// shadow mode, is neither held nor refused. Through a real chi router, in
// a synctest bubble (deadlines pass on the fake clock).
func TestShadowContextEndedServed(t *testing.T) {
	for _, tt := range []struct {
		name       string
		cancel     bool // the client goes away, instead of a deadline
		failClosed bool
		queue      bool // a leaky_queue policy whose turn comes after the deadline
	}{
		{name: "deadline"},
		{name: "deadline, fail closed", failClosed: true},
		{name: "client gone", cancel: true},
		{name: "client gone, fail closed", cancel: true, failClosed: true},
		{name: "queue turn after the deadline", queue: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mem, clock := newStore(t)
				var reports []error
				rejected, waits := 0, 0
				opts := []middleware.Option{
					middleware.WithClock(clock),
					middleware.WithShadow(func(_ *http.Request, res *middleware.Result) { reports = append(reports, res.Err()) }),
					middleware.WithRejectHandler(func(w http.ResponseWriter, _ *http.Request, j middleware.Rejection) {
						rejected++
						w.WriteHeader(j.Status)
					}),
					middleware.WithWait(func(context.Context, time.Duration) error {
						waits++
						return nil
					}),
				}
				if tt.failClosed {
					opts = append(opts, middleware.OnStoreError(middleware.FailClosed(30*time.Second)))
				}
				p := fixed("u", 100, time.Minute, user)
				if tt.queue {
					p = queue10s()
				}
				m := middleware.MustNew(&hanging{mem: mem}, []*policy.Policy{p}, opts...)
				r := chi.NewRouter()
				r.Use(endsAfterASecond(tt.cancel))
				r.Use(m.Handler)
				var handlerSaw []error
				r.Get("/", func(w http.ResponseWriter, req *http.Request) {
					handlerSaw = append(handlerSaw, req.Context().Err())
					ok(w, req)
				})
				wantErr := context.DeadlineExceeded
				if tt.cancel {
					wantErr = context.Canceled
				}
				if tt.queue {
					serve(r, "GET", "/") // departs at once
				}
				w := serve(r, "GET", "/", "X-User", "hang")
				if w.Code != http.StatusOK || w.Body.String() != "ok" || w.Header().Get("Retry-After") != "" {
					t.Errorf("%d %q, Retry-After %q; want 200 ok from the handler, no Retry-After", w.Code, w.Body, w.Header().Get("Retry-After"))
				}
				if rejected != 0 || waits != 0 {
					t.Errorf("%d rejections, %d holds; want none", rejected, waits)
				}
				st := m.Stats()
				if tt.queue {
					// Admitted, its place taken: nothing to report.
					if len(handlerSaw) != 2 || handlerSaw[1] != nil || len(reports) != 0 || st.Abandoned != 0 {
						t.Errorf("handler saw %v, reports %v, stats %+v; want the request served in time, unreported", handlerSaw, reports, st)
					}
					return
				}
				if len(handlerSaw) != 1 || handlerSaw[0] != wantErr {
					t.Errorf("handler saw contexts ended with %v, want once with %v", handlerSaw, wantErr)
				}
				if len(reports) != 1 || !errors.Is(reports[0], wantErr) {
					t.Errorf("shadow reports %v, want one with an error wrapping %v", reports, wantErr)
				}
				if st.ShadowDenied != 1 || st.Abandoned != 0 || st.FailedClosed != 0 {
					t.Errorf("stats %+v, want 1 shadow-denied, none abandoned or failed closed", st)
				}
			})
		})
	}
}
