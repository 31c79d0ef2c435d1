package middleware_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestFeedbackRefusedOtherPaths: the paths TestFeedbackRefused leaves
// out. A leaky_queue request held, then passed on, is observed once and
// not told as refused; without context (WithoutContext) a denial is told
// once; a middleware nested in itself (its outer layer decides, the inner
// one passes on) tells a denial once, the inner layer never reached; a
// failure under FailClosed in shadow mode passes the request on, told
// nothing. Through a ServeMux and chi.
func TestFeedbackRefusedOtherPaths(t *testing.T) {
	quota := func(kind algorithms.Kind, limit int64, window, maxDelay time.Duration) []*policy.Policy {
		return []*policy.Policy{policy.Must(policy.New("q",
			algorithms.Spec{Algorithm: kind, Limit: limit, Window: window, MaxDelay: maxDelay}, keyfunc.Global()))}
	}
	for _, tc := range []struct {
		name     string
		failing  bool
		policies []*policy.Policy
		opts     []middleware.Option
		self     bool // nested in itself
		n        int
		codes    string
		told     string
	}{
		{name: "leaky_queue held then passed", policies: quota(algorithms.LeakyQueue, 1, 10*time.Second, time.Minute),
			opts: []middleware.Option{middleware.WithWait(func(context.Context, time.Duration) error { return nil })},
			n:    2, codes: "200 200", told: "200 200"},
		{name: "without context", policies: quota(algorithms.FixedWindow, 1, time.Hour, 0),
			opts: []middleware.Option{middleware.WithoutContext()},
			n:    3, codes: "200 429 429", told: "200 refused refused"},
		{name: "nested in itself", policies: quota(algorithms.FixedWindow, 1, time.Hour, 0), self: true,
			opts: []middleware.Option{middleware.WithErrorHandler(func(*http.Request, error) {})},
			// A request passed on goes through both layers' handlers,
			// each timing it (as before Refused); a denial is told once.
			n: 3, codes: "200 429 429", told: "200 200 refused refused"},
		{name: "fail closed in shadow mode", failing: true, policies: quota(algorithms.FixedWindow, 1, time.Hour, 0),
			opts: []middleware.Option{middleware.OnStoreError(middleware.FailClosed(time.Second)), middleware.WithShadow(nil)},
			n:    2, codes: "200 200", told: "200 200"},
	} {
		for _, mux := range []string{"ServeMux", "chi"} {
			t.Run(tc.name+"/"+mux, func(t *testing.T) {
				clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
				var store algorithms.Store // a memory store
				if tc.failing {
					store = &failing{}
				}
				m, fb := newRefusalMiddleware(t, clock, store, tc.policies, tc.opts...)
				app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
				mws := []func(http.Handler) http.Handler{m.Handler}
				if tc.self {
					mws = append(mws, m.Handler)
				}
				var h http.Handler
				if mux == "chi" {
					r := chi.NewRouter()
					r.Use(mws...)
					r.Get("/", app)
					h = r
				} else {
					var wrapped http.Handler = app
					for i := len(mws) - 1; i >= 0; i-- {
						wrapped = mws[i](wrapped)
					}
					sm := http.NewServeMux()
					sm.Handle("GET /", wrapped)
					h = sm
				}
				var codes []string
				for range tc.n {
					w := httptest.NewRecorder()
					h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
					codes = append(codes, fmt.Sprint(w.Code))
				}
				if got := strings.Join(codes, " "); got != tc.codes {
					t.Fatalf("statuses %s, want %s", got, tc.codes)
				}
				if got := fb.take(); got != tc.told {
					t.Errorf("Feedback told %q, want %q", got, tc.told)
				}
			})
		}
	}
}
