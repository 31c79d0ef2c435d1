package middleware_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// exampleStore returns an in-memory store whose clock stands still, so the
// examples' output does not depend on when they run.
func exampleStore() *algorithms.MemoryStore {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(algorithms.ClockFunc(func() time.Time { return now })))
	if err != nil {
		panic(err)
	}
	return store
}

func Example() {
	store := exampleStore()
	defer store.Close()
	ip := keyfunc.Must(keyfunc.IP())
	m, err := middleware.New(store, []*policy.Policy{
		policy.Must(policy.PerSecond("per-second", 2, ip)),
		policy.Must(policy.PerMinute("per-minute", 100, ip)),
	})
	if err != nil {
		panic(err)
	}
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello")
	}))

	for range 3 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		fmt.Println(w.Code, w.Header().Get("RateLimit"))
		if w.Code == http.StatusTooManyRequests {
			fmt.Println("Retry-After:", w.Header().Get("Retry-After"))
			fmt.Print(w.Body)
		}
	}
	fmt.Println("RateLimit-Policy:", m.Set().PolicyHeader(3))
	// The shorthands use the sliding window counter: a request weighs on
	// the limit until the end of the window after its own, fading out, so
	// t (when r next grows) can be up to two windows away.
	//
	// Output:
	// 200 "per-second";r=1;t=2, "per-minute";r=99;t=120
	// 200 "per-second";r=0;t=2, "per-minute";r=98;t=90
	// 429 "per-second";r=0;t=2, "per-minute";r=98;t=90
	// Retry-After: 2
	// {"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Too Many Requests","status":429,"detail":"Quota exceeded for per-second; retry in 2 seconds.","violated-policies":["per-second"]}
	// RateLimit-Policy: "per-second";q=2;w=1, "per-minute";q=100;w=60
}

// Per-route limits with the standard library: wrap the handler.
func ExampleMiddleware_Handler() {
	store := exampleStore()
	defer store.Close()
	ip := keyfunc.Must(keyfunc.IP())
	strict := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.Login(ip))})

	mux := http.NewServeMux()
	mux.Handle("POST /login", strict.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})))
	mux.Handle("GET /", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))

	for _, target := range []string{"GET /", "POST /login", "POST /login"} {
		var method, path string
		fmt.Sscan(target, &method, &path)
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(method, path, nil))
		fmt.Printf("%s: %d %q\n", target, w.Code, w.Header().Get("RateLimit"))
	}
	// Output:
	// GET /: 200 ""
	// POST /login: 200 "\"login\";r=4;t=61"
	// POST /login: 200 "\"login\";r=3;t=61"
}

// Handlers downstream read the decision from the request context.
func ExampleFromContext() {
	store := exampleStore()
	defer store.Close()
	ip := keyfunc.Must(keyfunc.IP())
	m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.PerMinute("api", 60, ip))})
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, ok := middleware.FromContext(r.Context())
		if !ok || !res.Taken() { // no policy applied, or the store failed (FailOpen)
			return
		}
		for i := 0; i < res.Len(); i++ {
			fmt.Printf("%s: key %s, %d of %d left\n", res.Policy(i).Name(), res.Key(i), res.Decision(i).Remaining, res.Decision(i).Limit)
		}
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	// Output:
	// api: key api:192.0.2.1, 59 of 60 left
}

// Older header profiles report the policy with the lowest remaining.
func ExampleWithHeaders() {
	store := exampleStore()
	defer store.Close()
	ip := keyfunc.Must(keyfunc.IP())
	policies := []*policy.Policy{
		policy.Must(policy.PerSecond("per-second", 10, ip, policy.WithAlgorithm(algorithms.FixedWindow))),
		policy.Must(policy.PerMinute("per-minute", 100, ip, policy.WithAlgorithm(algorithms.FixedWindow))),
	}
	for _, p := range []middleware.Profile{middleware.Draft7, middleware.Draft6, middleware.Legacy} {
		m := middleware.MustNew(store, policies, middleware.WithHeaders(p))
		w := httptest.NewRecorder()
		m.Handler(http.NotFoundHandler()).ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		fmt.Println(p)
		for _, k := range []string{"RateLimit", "RateLimit-Policy", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset",
			"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
			if v := w.Header().Get(k); v != "" {
				fmt.Printf("  %s: %s\n", k, v)
			}
		}
	}
	// Output:
	// draft-7
	//   RateLimit: limit=10, remaining=9, reset=1
	//   RateLimit-Policy: 10;w=1, 100;w=60
	// draft-6
	//   RateLimit-Policy: 10;w=1, 100;w=60
	//   RateLimit-Limit: 10
	//   RateLimit-Remaining: 8
	//   RateLimit-Reset: 1
	// legacy
	//   X-RateLimit-Limit: 10
	//   X-RateLimit-Remaining: 7
	//   X-RateLimit-Reset: 1
}

// Global limits for every route and a stricter one on login, under chi.
func Example_chi() {
	store := exampleStore()
	defer store.Close()
	ip := keyfunc.Must(keyfunc.IP())
	global := middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.PerSecond("per-second", 10, ip, policy.WithAlgorithm(algorithms.FixedWindow))),
		policy.Must(policy.PerMinute("per-minute", 100, ip, policy.WithAlgorithm(algorithms.FixedWindow))),
	})
	login := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.Login(ip))})

	r := chi.NewRouter()
	r.Use(global.Handler)
	r.Get("/", func(w http.ResponseWriter, r *http.Request) {})
	r.With(login.Handler).Post("/login", func(w http.ResponseWriter, r *http.Request) {})

	for _, req := range []*http.Request{httptest.NewRequest("GET", "/", nil), httptest.NewRequest("POST", "/login", nil)} {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		fmt.Println(req.Method, req.URL.Path, w.Code)
		for _, v := range w.Header().Values("RateLimit") {
			fmt.Println("  RateLimit:", v)
		}
	}
	// Output:
	// GET / 200
	//   RateLimit: "per-second";r=9;t=1, "per-minute";r=99;t=60
	// POST /login 200
	//   RateLimit: "per-second";r=8;t=1, "per-minute";r=98;t=60
	//   RateLimit: "login";r=4;t=61
}

// A service whose handlers never read the decision can leave it out of the
// request context: the headers and rejections are the same, and the
// middleware no longer allocates a copy of the request to carry it.
func ExampleWithoutContext() {
	store := exampleStore()
	defer store.Close()
	m := middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.PerSecond("per-second", 1, keyfunc.Must(keyfunc.IP()))),
	}, middleware.WithoutContext())
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, ok := middleware.FromContext(r.Context())
		fmt.Println("decision in context:", ok)
	}))
	for range 2 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		fmt.Println(w.Code, w.Header().Get("RateLimit"))
	}
	// Output:
	// decision in context: false
	// 200 "per-second";r=0;t=2
	// 429 "per-second";r=0;t=2
}
