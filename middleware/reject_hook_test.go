package middleware_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// rejections records what a reject handler is given, and answers with a
// JSON body of the application's own.
type rejections struct {
	mu  sync.Mutex
	got []middleware.Rejection
}

func (c *rejections) option() middleware.Option {
	return middleware.WithRejectHandler(func(w http.ResponseWriter, r *http.Request, rej middleware.Rejection) {
		c.mu.Lock()
		c.got = append(c.got, rej)
		c.mu.Unlock()
		if res, _ := middleware.FromContext(r.Context()); res != rej.Result {
			http.Error(w, "the request's context lacks the Result", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rej.Status)
		io.WriteString(w, `{"error":"rate limiter"}`)
	})
}

func (c *rejections) all() []middleware.Rejection {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]middleware.Rejection(nil), c.got...)
}

// getBody sends a GET to url and returns the status and body.
func getBody(t *testing.T, c *http.Client, url string) (int, string, http.Header) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header
}

// TestRejectHandlerReplacesOtherRefusals: only the 429 could be replaced
// (WithDenyHandler); the 400/403 of a request without a key and the 503
// of a failing store under FailClosed always went out as the
// middleware's problem+json, which an API with error bodies of its own
// could not match. WithRejectHandler now answers them, given the status,
// the Retry-After the default would send and the cause. Through chi and a
// ServeMux over a real server.
func TestRejectHandlerReplacesOtherRefusals(t *testing.T) {
	noUser := keyfunc.Func(func(*http.Request) (string, error) { return "", keyfunc.ErrNoUser })
	for _, name := range []string{"chi", "ServeMux"} {
		route := func(m *middleware.Middleware) http.Handler { return routedBy(name, m) }
		t.Run(name+"/no key", func(t *testing.T) {
			store, _ := newStore(t)
			var got rejections
			p := fixed("per-user", 10, time.Minute, noUser, policy.OnKeyError(policy.RejectForbidden))
			srv := httptest.NewServer(route(middleware.MustNew(store, []*policy.Policy{p}, got.option())))
			defer srv.Close()
			code, body, _ := getBody(t, srv.Client(), srv.URL+"/")
			if code != 403 || body != `{"error":"rate limiter"}` {
				t.Errorf("got %d %q, want the handler's 403", code, body)
			}
			var ke *policy.KeyError
			if rs := got.all(); len(rs) != 1 || rs[0].Status != 403 || rs[0].RetryAfter != 0 || !errors.As(rs[0].Err, &ke) || rs[0].Result == nil {
				t.Errorf("handler given %+v, want one 403 with the *policy.KeyError", rs)
			}
		})
		t.Run(name+"/store down", func(t *testing.T) {
			mem, _ := newStore(t)
			store := &switchStore{Store: mem}
			store.fail.Store(true)
			var got rejections
			m := middleware.MustNew(store, []*policy.Policy{fixed("per-ip", 10, time.Minute, peerIP)},
				middleware.OnStoreError(middleware.FailClosed(7*time.Second)), got.option())
			srv := httptest.NewServer(route(m))
			defer srv.Close()
			code, body, h := getBody(t, srv.Client(), srv.URL+"/")
			if code != 503 || body != `{"error":"rate limiter"}` || h.Get("Retry-After") != "" {
				t.Errorf("got %d %q (Retry-After %q), want the handler's 503 alone", code, body, h.Get("Retry-After"))
			}
			rs := got.all()
			if len(rs) != 1 || rs[0].Status != 503 || rs[0].RetryAfter != 7*time.Second || rs[0].Err == nil || !strings.Contains(rs[0].Err.Error(), "store down") {
				t.Errorf("handler given %+v, want one 503, RetryAfter 7s, the store's error", rs)
			}
		})
	}
}

// TestRejectHandlerQueueDeadline: a leaky_queue request whose deadline
// (a context with a timeout, as chi's middleware.Timeout sets) comes
// before its turn is refused at once with 503; the handler is given the
// wait and the cause, after the decision.
func TestRejectHandlerQueueDeadline(t *testing.T) {
	store, clock := newStore(t)
	var got rejections
	spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: 10 * time.Second, MaxDelay: time.Minute}
	m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("queue", spec, peerIP))}, middleware.WithClock(clock), got.option())
	timeout := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
			defer cancel()
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
	r := chi.NewRouter()
	r.Use(timeout, m.Handler)
	r.Get("/", ok.ServeHTTP)
	srv := httptest.NewServer(r)
	defer srv.Close()
	// The queue passes one at once, then one per 10 s (the clock does not
	// move): the second's turn is 10 s away, after its 5 s deadline.
	if code, _, _ := getBody(t, srv.Client(), srv.URL+"/"); code != 200 {
		t.Fatalf("first request: %d", code)
	}
	if code, body, _ := getBody(t, srv.Client(), srv.URL+"/"); code != 503 || body != `{"error":"rate limiter"}` {
		t.Fatalf("second request: %d %q, want the handler's 503", code, body)
	}
	rs := got.all()
	if len(rs) != 1 || rs[0].Status != 503 || rs[0].RetryAfter != 10*time.Second ||
		!errors.Is(rs[0].Err, context.DeadlineExceeded) || !rs[0].Result.Taken() {
		t.Errorf("handler given %+v, want one 503, RetryAfter 10s, DeadlineExceeded, after the decision", rs)
	}
}

// TestRejectHandlerNil: a nil handler is a construction error naming the
// option.
func TestRejectHandlerNil(t *testing.T) {
	store, _ := newStore(t)
	_, err := middleware.New(store, []*policy.Policy{fixed("p", 1, time.Minute, remote)}, middleware.WithRejectHandler(nil))
	if err == nil || !strings.Contains(err.Error(), "WithRejectHandler") {
		t.Errorf("err = %v, want one naming WithRejectHandler", err)
	}
}

// TestRejectContentLength: the default 429 states the length of its body,
// unless a compressing middleware further out set Content-Encoding: then
// the length of the unencoded body would be wrong, and none is sent, not
// even one already on the response; the Content-Encoding is kept.
func TestRejectContentLength(t *testing.T) {
	for _, encoded := range []bool{false, true} {
		t.Run(fmt.Sprint("encoded=", encoded), func(t *testing.T) {
			store, _ := newStore(t)
			m := middleware.MustNew(store, []*policy.Policy{fixed("u", 1, time.Minute, user)})
			r := chi.NewRouter()
			if encoded {
				r.Use(func(next http.Handler) http.Handler {
					return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						w.Header().Set("Content-Encoding", "gzip")
						w.Header().Set("Content-Length", "4096")
						next.ServeHTTP(w, r)
					})
				})
			}
			r.Use(m.Handler)
			r.Get("/", func(http.ResponseWriter, *http.Request) {})
			serve(r, "GET", "/", "X-User", "ann")
			w := serve(r, "GET", "/", "X-User", "ann")
			if w.Code != http.StatusTooManyRequests {
				t.Fatalf("second request: %d, want 429", w.Code)
			}
			got, want := w.Header().Get("Content-Length"), strconv.Itoa(w.Body.Len())
			if encoded {
				want = ""
			}
			if got != want {
				t.Errorf("Content-Length %q, want %q", got, want)
			}
			if encoded && w.Header().Get("Content-Encoding") != "gzip" {
				t.Errorf("Content-Encoding %q, want the outer middleware's gzip kept", w.Header().Get("Content-Encoding"))
			}
		})
	}
}
