package middleware_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metricset"
)

// countingObserver counts, per "policy/series", what the metrics
// adapters (prommetrics, otelmetrics) count of the requests observed
// (metricset.Count: "login/allowed", "own/abandoned") and the give-backs
// they are told ("login/given_back"). One value is given to every
// middleware of a test, as one Metrics is: it adds them up.
type countingObserver struct {
	mu     sync.Mutex
	ps     *metricset.Policies[string]
	counts map[string]int
}

func newCountingObserver() *countingObserver {
	return &countingObserver{ps: metricset.NewPolicies(func(name string) string { return name }), counts: make(map[string]int)}
}

func (o *countingObserver) ObserveRequest(e middleware.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ps.Count(e, func(name string, s metricset.Series) { o.counts[name+"/"+s.Label()]++ })
}

func (o *countingObserver) ObserveGiveBack(policy string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.counts[policy+"/given_back"]++
}

func (*countingObserver) ObserveState(_, _ middleware.State) {}
func (*countingObserver) ObserveLimit(string, int64, int64)  {}

// String returns the counts, sorted: "login/allowed 3, login/given_back 3".
func (o *countingObserver) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var s []string
	for k, n := range o.counts {
		s = append(s, k+" "+strconv.Itoa(n))
	}
	slices.Sort(s)
	return strings.Join(s, ", ")
}

// nestedVia serves GET / with h through outer, then between (which may
// be nil), then inner: outer as chi's r.Use and the others as r.With, or
// outer around a ServeMux whose route holds between and inner.
func nestedVia(mux string, outer, inner *middleware.Middleware, between func(http.Handler) http.Handler, h http.Handler) http.Handler {
	if between == nil {
		between = func(h http.Handler) http.Handler { return h }
	}
	if mux == "chi" {
		r := chi.NewRouter()
		r.Use(outer.Handler)
		r.With(between, inner.Handler).Get("/", h.ServeHTTP)
		return r
	}
	sm := http.NewServeMux()
	sm.Handle("GET /", between(inner.Handler(h)))
	return outer.Handler(sm)
}
