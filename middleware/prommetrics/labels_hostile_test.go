package prommetrics_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestLabelValuesFromConfigOnly: clients choose their paths, headers,
// keys, costs and whether they have a key at all; whatever they send,
// through chi and a ServeMux, every label value exported is a configured
// policy name or one of the fixed outcomes, kinds and states: no value of
// a request reaches a label, and the number of series does not grow with
// the number of clients.
func TestLabelValuesFromConfigOnly(t *testing.T) {
	allowed := []string{
		"per-ip", "per-user", "login", "costly", "queue", // the policies
		"allowed", "denied", "shadow_denied", "abandoned", // outcomes
		"store", "key", "cost", // kinds
		"healthy", "open", "closed", "fallback", // states
	}
	cost := func(r *http.Request) int64 {
		n, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
		return max(n, 1)
	}
	hdr := keyfunc.Must(keyfunc.Header("X-User"))
	policies := func() []*policy.Policy {
		return []*policy.Policy{
			policy.Must(policy.PerMinute("per-ip", 20, keyfunc.Must(keyfunc.IP()))),
			policy.Must(policy.PerMinute("per-user", 5, hdr)),
			policy.Must(policy.PerMinute("login", 3, keyfunc.Route(), policy.WithRoutes("POST /login/{name}"))),
			policy.Must(policy.PerMinute("costly", 10, hdr, policy.WithCost(cost))),
			policy.Must(policy.New("queue", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1_000_000, Window: time.Second, MaxDelay: time.Second},
				keyfunc.Global())),
		}
	}
	for _, router := range []string{"chi", "ServeMux"} {
		t.Run(router, func(t *testing.T) {
			reg, metrics, mem := metricsAndStore(t)
			var h http.Handler
			ok := func(http.ResponseWriter, *http.Request) {}
			// The queue's holds end at once: the store's clock stands still.
			wait := middleware.WithWait(func(context.Context, time.Duration) error { return nil })
			switch router {
			case "chi":
				r := chi.NewRouter()
				m := middleware.MustNew(mem, policies(), middleware.WithObserver(metrics.ForMiddleware()),
					middleware.WithPatternFunc(policy.ChiPattern(r)), wait)
				metrictest.KeepAlive(t, m)
				r.Use(m.Handler)
				r.Get("/*", ok)
				r.Post("/login/{name}", ok)
				h = r
			default:
				mux := http.NewServeMux()
				mux.HandleFunc("GET /", ok)
				mux.HandleFunc("POST /login/{name}", ok)
				m := middleware.MustNew(mem, policies(), middleware.WithObserver(metrics.ForMiddleware()),
					middleware.WithPatternFunc(policy.ServeMuxPattern(mux)), wait)
				metrictest.KeepAlive(t, m)
				h = m.Handler(mux)
			}
			count := func() int {
				mfs, err := reg.Gather()
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, mf := range mfs {
					for _, mt := range mf.GetMetric() {
						n++
						for _, lp := range mt.GetLabel() {
							if !slices.Contains(allowed, lp.GetValue()) {
								t.Errorf("%s{%s=%q}: a value not of the configuration", mf.GetName(), lp.GetName(), lp.GetValue())
							}
						}
					}
				}
				return n
			}
			send := func(i int) {
				method, path := "GET", fmt.Sprintf("/hostile-%d/%%2e%%2e/x?q=%d", i, i)
				if i%3 == 0 {
					method, path = "POST", fmt.Sprintf("/login/victim-%d", i)
				}
				r := httptest.NewRequest(method, path, nil)
				r.RemoteAddr = fmt.Sprintf("198.51.100.%d:%d", i%250, 1024+i)
				r.Header.Set("X-Forwarded-For", fmt.Sprintf("evil-%d", i))
				if i%5 != 0 { // else: no key for per-user and costly
					r.Header.Set("X-User", fmt.Sprintf("attacker-%d-\x00\xff", i%7)) // some users again: denied
				}
				r.Header.Set("X-Cost", strconv.Itoa(i%40)) // sometimes above costly's 10
				h.ServeHTTP(httptest.NewRecorder(), r)
			}
			for i := range 50 {
				send(i)
			}
			first := count()
			for i := 50; i < 300; i++ {
				send(i)
			}
			if got := count(); got != first {
				t.Errorf("%d series after 300 clients, %d after 50: the series grow with the clients", got, first)
			}
			// Every path a label could be taken on was taken.
			for _, c := range [][]string{
				{"ratekeeper_requests_total", "policy", "costly", "outcome", "denied"},
				{"ratekeeper_requests_total", "policy", "login", "outcome", "allowed"},
				{"ratekeeper_errors_total", "policy", "per-user", "kind", "key"},
				{"ratekeeper_errors_total", "policy", "costly", "kind", "cost"},
				{"ratekeeper_hold_seconds", "policy", "queue", "outcome", "allowed"},
			} {
				if v, err := gatherValue(reg, c[0], c[1:]...); err != nil || v == 0 {
					t.Errorf("%v: %v, %v; want it counted", c, v, err)
				}
			}
		})
	}
}
