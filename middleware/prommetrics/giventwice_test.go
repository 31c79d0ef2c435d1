package prommetrics_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestMetricsGivenTwiceToOneMiddleware: one Metrics given twice to the
// same middleware (two WithObserver options, as a base option list and an
// application's own both add it, or twice in one) was bound twice, each
// Binding recording every request: requests_total and decision_seconds
// counted each request twice, silently. New refuses it, naming the
// Metrics; given to two middlewares it is still one Binding each.
// Through chi and a ServeMux.
func TestMetricsGivenTwiceToOneMiddleware(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts func(o middleware.Observer) []middleware.Option
	}{
		{"two options", func(o middleware.Observer) []middleware.Option {
			return []middleware.Option{middleware.WithObserver(o), middleware.WithObserver(o)}
		}},
		{"one option", func(o middleware.Observer) []middleware.Option {
			return []middleware.Option{middleware.WithObserver(o, o)}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, metrics, mem := metricsAndStore(t)
			_, err := middleware.New(mem, []*policy.Policy{fixed("a", 10, remote)}, tc.opts(metrics)...)
			if err == nil || !strings.Contains(err.Error(), "*prommetrics.Metrics") || !strings.Contains(err.Error(), "twice") {
				t.Fatalf("New with the Metrics given twice: error %v, want one naming the *prommetrics.Metrics given twice", err)
			}
		})
	}

	// One Option given to two middlewares, nested, through each router:
	// each counts its own evaluation once.
	for _, router := range []string{"chi", "ServeMux"} {
		t.Run("two middlewares/"+router, func(t *testing.T) {
			reg, metrics, mem := metricsAndStore(t)
			opt := middleware.WithObserver(metrics)
			outer := middleware.MustNew(mem, []*policy.Policy{fixed("a", 10, remote)}, opt)
			inner := middleware.MustNew(mem, []*policy.Policy{fixed("b", 10, remote)}, opt)
			ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
			var h http.Handler
			if router == "chi" {
				r := chi.NewRouter()
				r.Use(outer.Handler, inner.Handler)
				r.Get("/", ok)
				h = r
			} else {
				mux := http.NewServeMux()
				mux.Handle("GET /", outer.Handler(inner.Handler(ok)))
				h = mux
			}
			if code := serve(h); code != http.StatusOK {
				t.Fatalf("status %d", code)
			}
			for _, p := range []string{"a", "b"} {
				if got := counterValue(t, reg, "ratekeeper_requests_total", "policy", p, "outcome", "allowed"); got != 1 {
					t.Errorf(`requests_total{policy=%q,outcome="allowed"} = %v, want 1`, p, got)
				}
			}
		})
	}
}
