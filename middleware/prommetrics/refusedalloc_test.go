package prommetrics_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/middleware/prommetrics"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestRefusedAllocations: a request refused before its store call, for a
// missing key (400) or a cost out of range (429), allocates no more with
// the metrics than without, as the package doc says of every request
// recorded: a flood of requests without the key a policy needs costs the
// metrics nothing more than admitted ones. Each allocated two more
// (metricset.Count's errors.As targets). Through chi.
func TestRefusedAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: AllocsPerRun runs hundreds of requests")
	}
	costly := policy.Must(policy.New("costly", fixed("x", 10, remote).Spec(), remote,
		policy.WithCost(func(*http.Request) int64 { return 99 })))
	for _, tc := range []struct {
		name   string
		p      *policy.Policy
		status int
	}{
		{"missing key", fixed("per-user", 1_000_000, user), http.StatusBadRequest},
		{"cost out of range", costly, http.StatusTooManyRequests},
	} {
		t.Run(tc.name, func(t *testing.T) {
			metrics, err := prommetrics.New(nil)
			if err != nil {
				t.Fatal(err)
			}
			mem, err := algorithms.NewMemoryStore()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { mem.Close() })
			build := func(opts ...middleware.Option) http.Handler {
				opts = append(opts, middleware.WithErrorHandler(func(*http.Request, error) {}))
				m := middleware.MustNew(mem, []*policy.Policy{tc.p}, opts...)
				metrictest.KeepAlive(t, m)
				r := chi.NewRouter()
				r.Use(m.Handler)
				r.Get("/", func(http.ResponseWriter, *http.Request) {})
				return r
			}
			plain, observed := build(), build(middleware.WithObserver(metrics))
			r := httptest.NewRequest("GET", "/", nil)
			for _, h := range []http.Handler{plain, observed} {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != tc.status {
					t.Fatalf("status %d, want %d", w.Code, tc.status)
				}
			}
			a, b, ok := metrictest.AllocsNoMore(200, func() { plain.ServeHTTP(httptest.NewRecorder(), r) }, func() { observed.ServeHTTP(httptest.NewRecorder(), r) })
			if !ok {
				t.Errorf("%v allocations per request with the metrics, %v without", b, a)
			}
		})
	}
}
