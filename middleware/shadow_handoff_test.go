package middleware_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestShadowReportRequestNotWrittenByTheHandler: a shadow report may hand
// the request it is given to another goroutine (a batching logger; see
// TestShadowReportKeepsRequest). It was the very request next was then
// handed, and the router in next wrote it (a ServeMux its Pattern and path
// values, chi its Pattern and, by SetPathValue, its path values) while
// that goroutine read it: go test -race reported the race, and the
// request the report kept read, once the handler had served it, a pattern
// and path values it did not have when reported. Under WithoutContext the
// request reported is the one the middleware was handed, and next is
// handed it as it came: the report's must be a request of its own all the
// same. What the report set on it (a form it parsed) still reaches the
// handler.
func TestShadowReportRequestNotWrittenByTheHandler(t *testing.T) {
	for _, router := range []string{"ServeMux", "chi"} {
		for _, noContext := range []bool{false, true} {
			name := router
			if noContext {
				name += "/WithoutContext"
			}
			t.Run(name, func(t *testing.T) {
				store, clock := newStore(t)
				var wg sync.WaitGroup
				var mu sync.Mutex
				var kept []*http.Request
				var read []string
				report := func(r *http.Request, _ *middleware.Result) {
					r.ParseForm() // the handler reads it
					mu.Lock()
					kept = append(kept, r)
					mu.Unlock()
					wg.Go(func() {
						// Reads r while the handler serves its request.
						s := r.Pattern + "|" + r.PathValue("id") + "|" + r.URL.Path
						mu.Lock()
						read = append(read, s)
						mu.Unlock()
					})
				}
				opts := []middleware.Option{middleware.WithClock(clock), middleware.WithShadow(report)}
				if noContext {
					opts = append(opts, middleware.WithoutContext())
				}
				m := middleware.MustNew(store, []*policy.Policy{fixed("p", 1, time.Minute, remote)}, opts...)
				var forms []string
				handler := func(w http.ResponseWriter, r *http.Request) {
					forms = append(forms, r.FormValue("q"))
				}
				var h http.Handler
				switch router {
				case "ServeMux":
					mux := http.NewServeMux()
					mux.HandleFunc("GET /items/{id}", handler)
					h = m.Handler(mux)
				case "chi":
					r := chi.NewRouter()
					r.Use(m.Handler)
					r.Get("/items/{id}", handler)
					h = r
				}
				for range 3 {
					if w := serve(h, "GET", "/items/7?q=x"); w.Code != http.StatusOK {
						t.Fatalf("status %d, want 200 (shadow mode)", w.Code)
					}
				}
				wg.Wait()
				if len(kept) != 2 {
					t.Fatalf("%d reports, want 2", len(kept))
				}
				for i, r := range kept {
					if r.Pattern != "" || r.PathValue("id") != "" {
						t.Errorf("report %d: its request reads pattern %q, id %q once the handler served it; want none, as reported (before routing)", i, r.Pattern, r.PathValue("id"))
					}
				}
				for _, s := range read {
					if s != "||/items/7" {
						t.Errorf("the report's goroutine read %q, want %q", s, "||/items/7")
					}
				}
				if len(forms) != 3 || forms[1] != "x" || forms[2] != "x" {
					t.Errorf("the handler read q = %q, want x each time", forms)
				}
			})
		}
	}
}

// TestShadowReportResultNotWrittenFurtherIn: the Result a shadow report is
// given may go to another goroutine with its request. A middleware further
// in that refused the request (a 429 of its own) marked it as refused
// further in (for a give-back the reported request never has) while that
// goroutine read it: go test -race reported the race.
func TestShadowReportResultNotWrittenFurtherIn(t *testing.T) {
	store, clock := newStore(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed []bool
	outer := middleware.MustNew(store, []*policy.Policy{fixed("trial", 1, time.Minute, remote)}, middleware.WithClock(clock),
		middleware.WithShadow(func(_ *http.Request, res *middleware.Result) {
			wg.Go(func() {
				f := res.StoreFailed() // read while the request goes on
				mu.Lock()
				failed = append(failed, f)
				mu.Unlock()
			})
		}))
	inner := middleware.MustNew(store, []*policy.Policy{fixed("enforced", 1, time.Minute, remote)}, middleware.WithClock(clock))
	r := chi.NewRouter()
	r.Use(outer.Handler, inner.Handler)
	r.Get("/", ok)
	codes := []int{serve(r, "GET", "/").Code, serve(r, "GET", "/").Code}
	wg.Wait()
	if codes[0] != http.StatusOK || codes[1] != http.StatusTooManyRequests {
		t.Errorf("statuses %v, want 200 then 429 (the middleware further in)", codes)
	}
	if len(failed) != 1 || failed[0] {
		t.Errorf("reports read StoreFailed %v, want once false", failed)
	}
}
