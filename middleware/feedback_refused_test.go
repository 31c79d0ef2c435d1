package middleware_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// refusalRecorder is a Feedback that is told of refusals too.
type refusalRecorder struct {
	mu  sync.Mutex
	got []string
}

func (f *refusalRecorder) Observe(_ time.Duration, status int) { f.add(fmt.Sprint(status)) }
func (f *refusalRecorder) Refused()                            { f.add("refused") }

func (f *refusalRecorder) add(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, s)
}

func (f *refusalRecorder) take() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := strings.Join(f.got, " ")
	f.got = nil
	return s
}

// TestFeedbackRefused: a Feedback with a method Refused is told of every
// request the middleware answers itself, once, and of no other: a denial
// (429, its own or a deny handler's), a request no policy finds a key for
// (400), a cost no policy admits (429), a store failure under FailClosed
// (503), a request whose context ended while the store decided it, and a
// leaky_queue hold that the request's deadline cuts short or would; the
// requests passed on to the handler (admitted, skipped, shadow-denied,
// failed open) are observed as before, and not told as refused. Through
// a ServeMux and chi.
func TestFeedbackRefused(t *testing.T) {
	userQuota := func() []*policy.Policy {
		return []*policy.Policy{policy.Must(policy.New("per-user",
			algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 3, Window: time.Hour},
			keyfunc.Must(keyfunc.Header("X-User")),
			policy.WithCost(func(r *http.Request) int64 {
				if r.URL.Path == "/big" {
					return 5
				}
				return 1
			})))}
	}
	queue := []*policy.Policy{policy.Must(policy.New("queue",
		algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: 10 * time.Second, MaxDelay: time.Minute},
		keyfunc.Global()))}
	canceled := func(r *http.Request) *http.Request {
		ctx, cancel := context.WithCancel(r.Context())
		cancel()
		return r.WithContext(ctx)
	}
	soon := func(r *http.Request) *http.Request {
		// A deadline (on the real clock) before the request's turn in
		// the queue, 10 s away: refused at once, without a wait.
		ctx, cancel := context.WithTimeout(r.Context(), time.Second)
		t.Cleanup(cancel)
		return r.WithContext(ctx)
	}
	type req struct {
		path, user string
		with       func(*http.Request) *http.Request
	}
	serve := func(h http.Handler, q req) int {
		r := httptest.NewRequest("GET", q.path, nil)
		if q.user != "" {
			r.Header.Set("X-User", q.user)
		}
		if q.with != nil {
			r = q.with(r)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	for _, tc := range []struct {
		name     string
		store    func(t *testing.T, clock *algotest.Clock) algorithms.Store
		policies []*policy.Policy
		opts     []middleware.Option
		reqs     []req
		codes    string
		told     string
	}{
		{name: "quota, key and cost", policies: userQuota(),
			reqs:  []req{{path: "/", user: "ann"}, {path: "/", user: "ann"}, {path: "/", user: "ann"}, {path: "/", user: "ann"}, {path: "/"}, {path: "/big", user: "bob"}},
			codes: "200 200 200 429 400 429", told: "200 200 200 refused refused refused"},
		{name: "deny handler", policies: userQuota(),
			opts: []middleware.Option{middleware.WithDenyHandler(func(w http.ResponseWriter, r *http.Request, res *middleware.Result) {
				w.WriteHeader(http.StatusTeapot)
			})},
			reqs:  []req{{path: "/", user: "ann"}, {path: "/", user: "ann"}, {path: "/", user: "ann"}, {path: "/", user: "ann"}, {path: "/big", user: "ann"}},
			codes: "200 200 200 418 418", told: "200 200 200 refused refused"},
		{name: "skipped and shadow", policies: userQuota(),
			opts:  []middleware.Option{middleware.WithShadow(nil), middleware.WithSkip(func(r *http.Request) bool { return r.URL.Path == "/skip" })},
			reqs:  []req{{path: "/", user: "ann"}, {path: "/", user: "ann"}, {path: "/", user: "ann"}, {path: "/", user: "ann"}, {path: "/"}, {path: "/skip"}},
			codes: "200 200 200 200 200 200", told: "200 200 200 200 200 200"},
		{name: "fail closed", store: failingStore, policies: userQuota(),
			opts:  []middleware.Option{middleware.OnStoreError(middleware.FailClosed(time.Second))},
			reqs:  []req{{path: "/", user: "ann"}, {path: "/", user: "ann", with: canceled}},
			codes: "503 503", told: "refused refused"},
		{name: "fail open", store: failingStore, policies: userQuota(),
			reqs:  []req{{path: "/", user: "ann"}, {path: "/", user: "ann", with: canceled}},
			codes: "200 503", told: "200 refused"},
		{name: "leaky_queue deadline", policies: queue,
			reqs:  []req{{path: "/"}, {path: "/", with: soon}},
			codes: "200 503", told: "200 refused"},
		{name: "leaky_queue hold cut short", policies: queue,
			opts:  []middleware.Option{middleware.WithWait(func(context.Context, time.Duration) error { return context.Canceled })},
			reqs:  []req{{path: "/"}, {path: "/"}},
			codes: "200 503", told: "200 refused"},
	} {
		for _, mux := range []string{"ServeMux", "chi"} {
			t.Run(tc.name+"/"+mux, func(t *testing.T) {
				clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
				var store algorithms.Store
				if tc.store != nil {
					store = tc.store(t, clock)
				}
				m, fb := newRefusalMiddleware(t, clock, store, tc.policies, tc.opts...)
				app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
				var h http.Handler
				if mux == "chi" {
					r := chi.NewRouter()
					r.Use(m.Handler)
					r.Get("/*", app)
					h = r
				} else {
					sm := http.NewServeMux()
					sm.Handle("GET /", m.Handler(app))
					h = sm
				}
				var codes []string
				for _, q := range tc.reqs {
					codes = append(codes, fmt.Sprint(serve(h, q)))
				}
				if got := strings.Join(codes, " "); got != tc.codes {
					t.Fatalf("statuses %s, want %s", got, tc.codes)
				}
				if got := fb.take(); got != tc.told {
					t.Errorf("Feedback told %q, want %q", got, tc.told)
				}
				// SetFeedback(nil) stops it, refusals included: the
				// same requests an hour later (the quotas and the queue
				// back as they were) tell it nothing.
				m.SetFeedback(nil)
				clock.Advance(time.Hour)
				codes = codes[:0]
				for _, q := range tc.reqs {
					codes = append(codes, fmt.Sprint(serve(h, q)))
				}
				if got := strings.Join(codes, " "); got != tc.codes {
					t.Fatalf("an hour later, without a Feedback: statuses %s, want %s", got, tc.codes)
				}
				if got := fb.take(); got != "" {
					t.Errorf("after SetFeedback(nil): told %q, want nothing", got)
				}
			})
		}
	}
}

// failingStore returns a store whose every Take fails.
func failingStore(*testing.T, *algotest.Clock) algorithms.Store { return &failing{} }

// TestFeedbackRefusedNested: with nested middlewares, each tells its own
// Feedback of the requests it refuses: the inner one's Feedback is not
// told of a request the outer one denied, which never reached it.
func TestFeedbackRefusedNested(t *testing.T) {
	clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	spec := func(limit int64) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: limit, Window: time.Hour}
	}
	outer := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("outer", spec(3), keyfunc.Global()))}, middleware.WithClock(clock))
	inner := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("inner", spec(2), keyfunc.Global()))}, middleware.WithClock(clock))
	fb := &refusalRecorder{}
	inner.SetFeedback(fb)
	r := chi.NewRouter()
	r.Use(outer.Handler, inner.Handler)
	r.Get("/", func(w http.ResponseWriter, r *http.Request) {})
	var codes []int
	for range 4 {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		codes = append(codes, w.Code)
	}
	if fmt.Sprint(codes) != "[200 200 429 429]" {
		t.Fatalf("statuses %v, want [200 200 429 429]", codes)
	}
	if got := fb.take(); got != "200 200 refused" {
		t.Errorf("inner Feedback told %q, want %q (the outer one's denial is not its)", got, "200 200 refused")
	}
}

// newRefusalMiddleware returns a middleware of policies on store (a
// memory store on clock when store is nil), on clock, with opts and a
// quiet error handler, whose Feedback is a refusalRecorder.
func newRefusalMiddleware(t *testing.T, clock *algotest.Clock, store algorithms.Store, policies []*policy.Policy, opts ...middleware.Option) (*middleware.Middleware, *refusalRecorder) {
	t.Helper()
	if store == nil {
		s, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		store = s
	}
	opts = append([]middleware.Option{middleware.WithClock(clock), middleware.WithErrorHandler(func(*http.Request, error) {})}, opts...)
	m, err := middleware.New(store, policies, opts...)
	if err != nil {
		t.Fatal(err)
	}
	fb := &refusalRecorder{}
	m.SetFeedback(fb)
	return m, fb
}
