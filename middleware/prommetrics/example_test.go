package prommetrics_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/prommetrics"
	"github.com/ratekeeper/ratekeeper/policy"
)

// The middleware's decisions on a /metrics page, and its limits:
// effective_limit per limit_window_seconds, 2 requests per 60 s.
func Example() {
	reg := prometheus.NewRegistry()
	metrics, err := prommetrics.New(reg)
	if err != nil {
		fmt.Println(err)
		return
	}
	store, _ := algorithms.NewMemoryStore()
	defer store.Close()
	m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.PerMinute("per-ip", 2, keyfunc.Must(keyfunc.IP())))},
		middleware.WithObserver(metrics))

	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{})) // not limited
	mux.Handle("/", m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	for range 3 {
		mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	}
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(w.Body.String(), "\n") {
		if strings.HasPrefix(line, "ratekeeper_requests_total") || strings.HasPrefix(line, "ratekeeper_effective_limit") ||
			strings.HasPrefix(line, "ratekeeper_limit_window_seconds") {
			fmt.Println(line)
		}
	}
	// Output:
	// ratekeeper_effective_limit{policy="per-ip"} 2
	// ratekeeper_limit_window_seconds{policy="per-ip"} 60
	// ratekeeper_requests_total{outcome="abandoned",policy="per-ip"} 0
	// ratekeeper_requests_total{outcome="allowed",policy="per-ip"} 2
	// ratekeeper_requests_total{outcome="denied",policy="per-ip"} 1
	// ratekeeper_requests_total{outcome="shadow_denied",policy="per-ip"} 0
}

// A middleware rebuilt from a new configuration (rather than reloaded in
// place) and the old one closed, both given the one Metrics: the limit
// gauges report the new middleware's policies alone once the old one is
// closed (its burst gauge goes; per-ip is the new one's).
func ExampleMetrics_rebuilt() {
	reg := prometheus.NewRegistry()
	metrics, err := prommetrics.New(reg)
	if err != nil {
		fmt.Println(err)
		return
	}
	store, _ := algorithms.NewMemoryStore()
	defer store.Close()
	ip := keyfunc.Must(keyfunc.IP())
	old := middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.PerMinute("per-ip", 100, ip)), policy.Must(policy.PerSecond("burst", 10, ip)),
	}, middleware.WithObserver(metrics))
	m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.PerMinute("per-ip", 200, ip))},
		middleware.WithObserver(metrics))
	defer m.Close()
	handler := m.Handler(http.NotFoundHandler()) // serving from now on
	old.Close()
	handler.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))

	w := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(w.Body.String(), "\n") {
		if strings.HasPrefix(line, "ratekeeper_effective_limit") {
			fmt.Println(line)
		}
	}
	// Output:
	// ratekeeper_effective_limit{policy="per-ip"} 200
}
