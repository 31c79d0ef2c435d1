package middleware_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestRejectionBodiesExact: every default refusal's problem+json body, to
// the byte, with its status, Content-Type, Cache-Control, Content-Length
// and Retry-After: the 400 and 403 of a request a policy finds no key for,
// the 429 of a cost no window admits, FailClosed's 503, and the singular
// "1 second" of a denial whose retry is one second.
func TestRejectionBodiesExact(t *testing.T) {
	const typ = "https://example.com/probs/too-many"
	tests := []struct {
		name       string
		policy     *policy.Policy
		opts       []middleware.Option
		header     []string
		storeDown  bool
		status     int
		retryAfter string
		body       string
	}{
		{
			name:   "no key, 400",
			policy: fixed("per-user", 5, time.Minute, user),
			status: http.StatusBadRequest,
			body: `{"type":"about:blank","title":"Bad Request","status":400,` +
				`"detail":"The request does not identify the client for rate-limit policy per-user."}` + "\n",
		},
		{
			name:   "no key, 403",
			policy: fixed("per-user", 5, time.Minute, user, policy.OnKeyError(policy.RejectForbidden)),
			status: http.StatusForbidden,
			body: `{"type":"about:blank","title":"Forbidden","status":403,` +
				`"detail":"The request does not identify the client for rate-limit policy per-user."}` + "\n",
		},
		{
			name: "cost beyond capacity",
			policy: fixed("uploads", 12, time.Minute, user, policy.WithCost(func(r *http.Request) int64 {
				n, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
				return n
			})),
			header: []string{"X-User", "ann", "X-Cost", "20"},
			status: http.StatusTooManyRequests,
			body: `{"type":"` + typ + `","title":"Too Many Requests","status":429,` +
				`"detail":"The request costs 20 units; policy uploads admits 1 to 12.","violated-policies":["uploads"]}` + "\n",
		},
		{
			name:       "store down, fail closed",
			policy:     fixed("p", 5, time.Minute, user),
			opts:       []middleware.Option{middleware.OnStoreError(middleware.FailClosed(3 * time.Second))},
			storeDown:  true,
			header:     []string{"X-User", "ann"},
			status:     http.StatusServiceUnavailable,
			retryAfter: "3",
			body:       `{"type":"about:blank","title":"Service Unavailable","status":503}` + "\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, _ := newStore(t)
			opts := append([]middleware.Option{middleware.WithProblemType(typ)}, tt.opts...)
			var st algorithms.Store = store
			if tt.storeDown {
				st = &failing{}
			}
			m := middleware.MustNew(st, []*policy.Policy{tt.policy}, opts...)
			r := chi.NewRouter()
			r.Use(m.Handler)
			r.Post("/", ok)
			w := serve(r, "POST", "/", tt.header...)
			checkProblem(t, w.Result(), w.Body.String(), tt.status, tt.retryAfter, tt.body)
		})
	}

	t.Run("retry in 1 second", func(t *testing.T) {
		store, clock := newStore(t)
		m := middleware.MustNew(store, []*policy.Policy{fixed("burst", 1, 10*time.Second, user)}, middleware.WithProblemType(typ))
		h := m.Handler(ok)
		serve(h, "GET", "/", "X-User", "ann")
		clock.Advance(9*time.Second + time.Millisecond)
		w := serve(h, "GET", "/", "X-User", "ann")
		checkProblem(t, w.Result(), w.Body.String(), http.StatusTooManyRequests, "1",
			`{"type":"`+typ+`","title":"Too Many Requests","status":429,`+
				`"detail":"Quota exceeded for burst; retry in 1 second.","violated-policies":["burst"]}`+"\n")
	})
}

func checkProblem(t *testing.T, resp *http.Response, body string, status int, retryAfter, want string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Errorf("status %d, want %d", resp.StatusCode, status)
	}
	if body != want {
		t.Errorf("body\n%s\nwant\n%s", body, want)
	}
	h := resp.Header
	if got := h.Get("Content-Type"); got != middleware.ContentTypeProblem {
		t.Errorf("Content-Type %q, want %q", got, middleware.ContentTypeProblem)
	}
	if got := h.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", got)
	}
	if got := h.Get("Content-Length"); got != strconv.Itoa(len(want)) {
		t.Errorf("Content-Length %q, want %d", got, len(want))
	}
	if got := h.Get("Retry-After"); got != retryAfter {
		t.Errorf("Retry-After %q, want %q", got, retryAfter)
	}
}
