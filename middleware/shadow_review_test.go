package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

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
