package middleware_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestCountFailedOnSystemClock gives back successful logins on the system
// clock, where the middleware's reckoning of the Take (waited read from
// before the Take to before the give-back) is off from the store's by the
// calls' latencies: the Take's log instant, window and bucket are still
// found, for every kind whose window no test run straddles (fixed_window
// is left out: a run across its boundary would start afresh), and the
// failures are still limited. (With a give-back that took the newest log
// instant at or before the reckoning, one that reckoned early by the Take's
// latency missed its own instant: a success stayed counted, and in a run
// the fifth failure was refused.)
func TestCountFailedOnSystemClock(t *testing.T) {
	for _, spec := range []algorithms.Spec{
		{Algorithm: algorithms.SlidingLog, Limit: 5, Window: time.Hour},
		{Algorithm: algorithms.SlidingWindow, Limit: 5, Window: time.Hour},
		{Algorithm: algorithms.SlidingBuckets, Limit: 5, Window: time.Hour, Buckets: 60},
		{Algorithm: algorithms.TokenBucket, Limit: 5, Window: time.Hour},
		{Algorithm: algorithms.LeakyBucket, Limit: 5, Window: time.Hour},
	} {
		t.Run(string(spec.Algorithm), func(t *testing.T) {
			store, err := algorithms.NewMemoryStore()
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			user := keyfunc.Must(keyfunc.Header("X-User"))
			m := middleware.MustNew(store, []*policy.Policy{
				policy.Must(policy.New("login", spec, user, policy.CountIf(policy.CountFailed))),
			})
			mux := http.NewServeMux()
			mux.Handle("POST /login", m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("X-Password") != "secret" {
					w.WriteHeader(http.StatusForbidden)
				}
			})))
			try := func(password string) int {
				r := httptest.NewRequest("POST", "/login", nil)
				r.Header.Set("X-User", "ann")
				r.Header.Set("X-Password", password)
				w := httptest.NewRecorder()
				mux.ServeHTTP(w, r)
				return w.Code
			}
			for i := range 20 {
				if code := try("secret"); code != http.StatusOK {
					t.Fatalf("success %d: %d, want 200", i, code)
				}
			}
			// The buckets give back a success's unit less the time between
			// the middleware's reading of the clock and the store's in the
			// Take (the reckoning is early by it: erring towards denying),
			// which a loaded machine can stretch to milliseconds: the fifth
			// failure may find that much of the last success still in the
			// bucket. The four before it cannot (a unit is 12 minutes).
			bucket := spec.Algorithm == algorithms.TokenBucket || spec.Algorithm == algorithms.LeakyBucket
			for i := range 5 {
				code := try("wrong")
				if code != http.StatusForbidden && !(bucket && i == 4 && code == http.StatusTooManyRequests) {
					t.Fatalf("failure %d: %d, want 403", i, code)
				}
			}
			if code := try("secret"); code != http.StatusTooManyRequests {
				t.Errorf("after five failures: %d, want 429", code)
			}
			if got := m.Stats().GivenBack; got != 20 {
				t.Errorf("GivenBack = %d, want 20", got)
			}
		})
	}
}

// TestCountIfShadowDenied: shadow mode lets a request through that the
// policies deny; its Take consumed nothing, so nothing is given back,
// while an admitted request's unit is.
func TestCountIfShadowDenied(t *testing.T) {
	store, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	user := keyfunc.Must(keyfunc.Header("X-User"))
	spec := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 2, Window: time.Hour}
	m := middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.New("login", spec, user, policy.CountIf(policy.CountSucceeded))),
	}, middleware.WithShadow(nil))
	mux := http.NewServeMux()
	mux.Handle("POST /login", m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Password") != "secret" {
			w.WriteHeader(http.StatusForbidden)
		}
	})))
	try := func(password string) {
		r := httptest.NewRequest("POST", "/login", nil)
		r.Header.Set("X-User", "ann")
		r.Header.Set("X-Password", password)
		mux.ServeHTTP(httptest.NewRecorder(), r)
	}
	try("secret") // counted: 1 left
	try("secret") // counted: 0 left
	try("wrong")  // shadow-denied: nothing to give back
	try("wrong")  // shadow-denied
	st := m.Stats()
	if st.ShadowDenied != 2 || st.GivenBack != 0 {
		t.Errorf("Stats: ShadowDenied %d, GivenBack %d; want 2 and 0", st.ShadowDenied, st.GivenBack)
	}
	ds, err := store.Take(t.Context(), algorithms.Check{Spec: spec, Key: "login:ann"})
	if err != nil {
		t.Fatal(err)
	}
	if ds[0].Allowed {
		t.Errorf("the successes' units: %+v, want both still spent (denied)", ds[0])
	}
}

// TestCountIfWriterInterfaces: a handler under a policy with CountIf gets
// a writer that keeps the server's optional interfaces (Flusher, Hijacker,
// io.ReaderFrom, and http.ResponseController's Unwrap), over a real
// HTTP/1 server; a hijacked connection counts as status 101.
func TestCountIfWriterInterfaces(t *testing.T) {
	store, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Hour}
	var statuses []int
	count := func(_ *http.Request, status int) bool {
		statuses = append(statuses, status)
		return false // give every request back
	}
	m := middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.New("p", spec, keyfunc.Must(keyfunc.Header("X-User")), policy.CountIf(count))),
	})
	var missing []string
	mux := http.NewServeMux()
	mux.Handle("GET /stream", m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := w.(http.Flusher); !ok {
			missing = append(missing, "Flusher")
		}
		if _, ok := w.(io.ReaderFrom); !ok {
			missing = append(missing, "io.ReaderFrom")
		}
		if _, ok := w.(http.Hijacker); !ok {
			missing = append(missing, "Hijacker")
		}
		io.WriteString(w, "part")
		if err := http.NewResponseController(w).Flush(); err != nil {
			missing = append(missing, "ResponseController.Flush: "+err.Error())
		}
	})))
	mux.Handle("GET /hijack", m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			missing = append(missing, "ResponseController.Hijack: "+err.Error())
			return
		}
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		conn.Close()
	})))
	// served tells the test when the middleware has returned, its
	// give-back done: a hijacked response reaches the client before.
	served := make(chan struct{}, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r)
		served <- struct{}{}
	}))
	defer srv.Close()
	for _, path := range []string{"/stream", "/hijack"} {
		r, _ := http.NewRequest("GET", srv.URL+path, nil)
		r.Header.Set("X-User", "ann")
		resp, err := srv.Client().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		<-served
	}
	if len(missing) > 0 {
		t.Errorf("the handler's writer lacks %v", missing)
	}
	if len(statuses) != 2 || statuses[0] != http.StatusOK || statuses[1] != http.StatusSwitchingProtocols {
		t.Errorf("statuses counted %v, want [200 101]", statuses)
	}
	if got := m.Stats().GivenBack; got != 2 {
		t.Errorf("GivenBack = %d, want 2", got)
	}
}

// brokenGiveBack is a memory store whose GiveBack fails.
type brokenGiveBack struct{ *algorithms.MemoryStore }

var errGiveBack = errors.New("middleware_test: give-back failed")

func (brokenGiveBack) GiveBack(context.Context, []algorithms.Refunded, []algorithms.Check, []algorithms.Decision, time.Duration) error {
	return errGiveBack
}

// TestCountIfGiveBackErrorIsReported: a give-back the store fails, for a
// response its policy does not count, reaches the error handler.
func TestCountIfGiveBackErrorIsReported(t *testing.T) {
	store, _ := newStore(t)
	var got reports
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Hour}
	m := middleware.MustNew(brokenGiveBack{store}, []*policy.Policy{
		policy.Must(policy.New("login", spec, user, policy.CountIf(policy.CountFailed))),
	}, got.handler())
	mux := http.NewServeMux()
	mux.Handle("POST /login", m.Handler(ok))
	if w := serve(mux, "POST", "/login", "X-User", "ann"); w.Code != http.StatusOK {
		t.Fatalf("login: %d, want 200", w.Code)
	}
	if errs := got.of(errGiveBack); len(errs) != 1 {
		t.Errorf("reports %v, want the give-back's error once", got.errs)
	}
}

// TestCountIfNothingGivenBackIsNotCounted: a response the policy counts
// gives nothing back, and Stats.GivenBack stays 0; one it does not count
// is given back, and counted there. (A store that cannot give units back
// is refused with a CountIf policy: TestCountIfNeedsGiveBackStore.)
func TestCountIfNothingGivenBackIsNotCounted(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  int
		wantGot int64
	}{
		{"success, not counted", http.StatusOK, 1},
		{"failure, counted", http.StatusForbidden, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem, _ := newStore(t)
			spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Hour}
			m := middleware.MustNew(mem, []*policy.Policy{
				policy.Must(policy.New("login", spec, user, policy.CountIf(policy.CountFailed))),
			})
			mux := http.NewServeMux()
			mux.Handle("POST /login", m.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tc.status)
			})))
			if w := serve(mux, "POST", "/login", "X-User", "ann"); w.Code != tc.status {
				t.Fatalf("login: %d, want %d", w.Code, tc.status)
			}
			if got := m.Stats().GivenBack; got != tc.wantGot {
				t.Errorf("Stats().GivenBack = %d, want %d", got, tc.wantGot)
			}
		})
	}
}
