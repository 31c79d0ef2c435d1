package middleware_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// Fail closed where an unlimited request is worse than none (a login):
// while the store does not answer, the middleware answers 503 with
// Retry-After instead of letting requests through (FailOpen, the default).
// (downStore, a store whose backend is down, is defined in ExampleWithLogger's file.)
func ExampleOnStoreError() {
	ip := keyfunc.Must(keyfunc.IP())
	login := middleware.MustNew(downStore{}, []*policy.Policy{policy.Must(policy.Login(ip))},
		middleware.OnStoreError(middleware.FailClosed(5*time.Second)),
		middleware.WithErrorHandler(func(r *http.Request, err error) {
			fmt.Println("error handler:", err)
		}))
	h := login.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))

	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/login", nil))
	fmt.Println(w.Code, "Retry-After:", w.Header().Get("Retry-After"))
	fmt.Print(w.Body)
	// Output:
	// error handler: policy: store: redis: connection refused
	// 503 Retry-After: 5
	// {"type":"about:blank","title":"Service Unavailable","status":503}
}

// A 429 of the application's own: the rate-limit headers are set already,
// and the Result says which policies denied the request and for how long.
func ExampleWithDenyHandler() {
	store := exampleStore()
	defer store.Close()
	ip := keyfunc.Must(keyfunc.IP())
	m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.PerMinute("per-minute", 1, ip))},
		middleware.WithDenyHandler(func(w http.ResponseWriter, r *http.Request, res *middleware.Result) {
			var denied []string
			for i := range res.Len() {
				if !res.Decision(i).Allowed {
					denied = append(denied, res.Policy(i).Name())
				}
			}
			secs := int64((res.RetryAfter() + time.Second - 1) / time.Second) // whole seconds, rounded up
			w.Header().Set("Retry-After", fmt.Sprint(secs))
			w.Header().Set("Cache-Control", "no-store")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			json.NewEncoder(w).Encode(map[string]any{"error": "slow down", "policies": denied, "retry_in": secs})
		}))
	h := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))

	for range 2 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		fmt.Printf("%d %s Retry-After: %q\n", w.Code, w.Header().Get("RateLimit"), w.Header().Get("Retry-After"))
		fmt.Print(w.Body)
	}
	// Output:
	// 200 "per-minute";r=0;t=120 Retry-After: ""
	// 429 "per-minute";r=0;t=120 Retry-After: "120"
	// {"error":"slow down","policies":["per-minute"],"retry_in":120}
}

// Health checks and metrics scrapes are not limited: SkipPaths matches
// the exact paths (GET, and HEAD with it, unless a method is given), and
// WithSkip takes any function of the request.
func ExampleSkipPaths() {
	store := exampleStore()
	defer store.Close()
	ip := keyfunc.Must(keyfunc.IP())
	m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.PerMinute("per-minute", 1, ip))},
		middleware.WithSkip(middleware.SkipPaths("/healthz", "/metrics")))
	h := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))

	for _, path := range []string{"/healthz", "/healthz", "/", "/", "/metrics"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		fmt.Printf("%-9s %d %q\n", path, w.Code, w.Header().Get("RateLimit"))
	}
	// Output:
	// /healthz  200 ""
	// /healthz  200 ""
	// /         200 "\"per-minute\";r=0;t=120"
	// /         429 "\"per-minute\";r=0;t=120"
	// /metrics  200 ""
}

// One middleware around a whole ServeMux holding a rule table: a limit for
// every request and a stricter one for POST /login only. The limiter runs
// before the mux has routed, so it asks the mux for the route
// (policy.ServeMuxPattern); without it the login policy would never apply.
func ExampleWithPatternFunc() {
	store := exampleStore()
	defer store.Close()
	ip := keyfunc.Must(keyfunc.IP())
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("POST /login", func(http.ResponseWriter, *http.Request) {})
	m := middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.PerMinute("per-minute", 100, ip)),
		policy.Must(policy.Login(ip, policy.WithRoutes("POST /login"))),
	}, middleware.WithPatternFunc(policy.ServeMuxPattern(mux)))
	h := m.Handler(mux)

	for _, target := range []string{"GET /", "POST /login"} {
		var method, path string
		fmt.Sscan(target, &method, &path)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(method, path, nil))
		fmt.Printf("%-11s %d %s\n", target, w.Code, w.Header().Get("RateLimit"))
	}
	// Output:
	// GET /       200 "per-minute";r=99;t=120
	// POST /login 200 "per-minute";r=98;t=90, "login";r=4;t=61
}

// A login limit keyed by IP and the user name of a JSON body (the README's
// quick start reads a form's): the key function reads the body, bounded,
// and puts it back, so that the handler reads it whole.
func Example_jsonLogin() {
	store := exampleStore()
	defer store.Close()
	ip := keyfunc.Must(keyfunc.IP())
	userName := func(r *http.Request) (string, error) {
		body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, 64<<10))
		r.Body = io.NopCloser(bytes.NewReader(body)) // for the handler
		if err != nil {
			return "", err // answered 400
		}
		var in struct {
			Username string `json:"username"`
		}
		if json.Unmarshal(body, &in) != nil || in.Username == "" {
			// Answered 400, never a bucket shared by all: the error is in keyfunc.ErrNoKey's family.
			return "", fmt.Errorf("no username in the JSON body: %w", keyfunc.ErrNoKey)
		}
		return in.Username, nil
	}
	login := middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.Login(keyfunc.Must(keyfunc.Join(ip, userName)))),
	})
	mux := http.NewServeMux()
	mux.Handle("POST /login", login.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Username, Password string
		}
		json.NewDecoder(r.Body).Decode(&in)
		fmt.Fprintf(w, "checking %s's password", in.Username)
	})))

	for _, body := range []string{`{"username":"ann","password":"x"}`, `{}`} {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest("POST", "/login", strings.NewReader(body)))
		fmt.Println(w.Code, strings.TrimSpace(w.Body.String()))
	}
	for range 5 { // four more of ann's, then a sixth within the minute
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest("POST", "/login", strings.NewReader(`{"username":"ann","password":"y"}`)))
		fmt.Println(w.Code, w.Header().Get("RateLimit"))
	}
	// Output:
	// 200 checking ann's password
	// 400 {"type":"about:blank","title":"Bad Request","status":400,"detail":"The request does not identify the client for rate-limit policy login."}
	// 200 "login";r=3;t=61
	// 200 "login";r=2;t=61
	// 200 "login";r=1;t=61
	// 200 "login";r=0;t=61
	// 429 "login";r=0;t=61
}
