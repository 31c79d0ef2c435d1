package middleware_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// panickyRefused is a Feedback whose Refused panics (a bug of its own, or
// of a logger it calls while it judges a period).
type panickyRefused struct{}

func (panickyRefused) Observe(time.Duration, int) {}
func (panickyRefused) Refused()                   { panic(errRefusedBug) }

var errRefusedBug = errors.New("Refused bug")

// quietRefused is a Feedback whose Refused does nothing.
type quietRefused struct{}

func (quietRefused) Observe(time.Duration, int) {}
func (quietRefused) Refused()                   {}

// TestFeedbackRefusedPanicStillAnswers: a Feedback's Refused is called
// before the middleware writes its answer to a request it refuses; when
// it panicked, the answer was never written: a recoverer further out
// (chi's middleware.Recoverer) answered 500, without Retry-After, to a
// client over its limit, who retries at once; and a middleware further
// out that gives back the units of a refused response
// (policy.CountSucceeded) was not told of the refusal as its status was
// written. The answer is now written whatever Refused does, and the
// panic goes on, as a panic of any other hook does: the response the
// client gets (status, fields, body) is the one it gets with a Refused
// that returns. For a denial (429), a key rejected (400), a store
// failing under FailClosed (503), and a denial further in under a
// middleware that counts only successes. Through a ServeMux and chi.
func TestFeedbackRefusedPanicStillAnswers(t *testing.T) {
	noUser := func(r *http.Request) (string, error) {
		if u := r.Header.Get("X-User"); u != "" {
			return u, nil
		}
		return "", errors.New("no user")
	}
	for _, c := range []struct {
		name   string
		outer  bool // a middleware further out counting only successes
		store  func(t *testing.T) algorithms.Store
		policy *policy.Policy
		opts   []middleware.Option
		n      int
		want   string // the statuses
	}{
		{name: "denied", policy: fixed("p", 1, time.Hour, remote), n: 2, want: "200 429"},
		{name: "key rejected", policy: fixed("p", 1, time.Hour, noUser), n: 1, want: "400"},
		{name: "fail closed", store: func(*testing.T) algorithms.Store { return &failing{} }, policy: fixed("p", 1, time.Hour, remote),
			opts: []middleware.Option{middleware.OnStoreError(middleware.FailClosed(time.Second))}, n: 1, want: "503"},
		{name: "denied under an outer count of successes", outer: true, policy: fixed("p", 1, time.Hour, remote), n: 3, want: "200 429 429"},
	} {
		for _, router := range []string{"ServeMux", "chi"} {
			t.Run(c.name+"/"+router, func(t *testing.T) {
				serve := func(f middleware.Feedback) (responses []string, panics []any) {
					var store algorithms.Store
					if c.store != nil {
						store = c.store(t)
					} else {
						store, _ = newStore(t)
					}
					opts := append([]middleware.Option{middleware.WithErrorHandler(func(*http.Request, error) {})}, c.opts...)
					m := middleware.MustNew(store, []*policy.Policy{c.policy}, opts...)
					m.SetFeedback(f)
					recovering := func(next http.Handler) http.Handler {
						return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
							defer func() {
								if p := recover(); p != nil {
									panics = append(panics, p)
									w.WriteHeader(http.StatusInternalServerError)
								}
							}()
							next.ServeHTTP(w, r)
						})
					}
					mws := []func(http.Handler) http.Handler{recovering}
					if c.outer {
						ms, _ := newStore(t)
						outer := middleware.MustNew(ms, []*policy.Policy{fixed("outer", 10, time.Hour, remote, policy.CountIf(policy.CountSucceeded))})
						mws = append(mws, outer.Handler)
					}
					mws = append(mws, m.Handler)
					var h http.Handler
					if router == "chi" {
						r := chi.NewRouter()
						r.Use(mws...)
						r.Get("/", ok.ServeHTTP)
						h = r
					} else {
						var wrapped http.Handler = ok
						for i := len(mws) - 1; i >= 0; i-- {
							wrapped = mws[i](wrapped)
						}
						sm := http.NewServeMux()
						sm.Handle("GET /", wrapped)
						h = sm
					}
					for range c.n {
						w := httptest.NewRecorder()
						h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
						responses = append(responses, response(w))
					}
					return responses, panics
				}
				want, none := serve(quietRefused{})
				if len(none) != 0 {
					t.Fatalf("with a quiet Refused: panics %v", none)
				}
				var codes []string
				for _, w := range want {
					codes = append(codes, w[:3])
				}
				if got := strings.Join(codes, " "); got != c.want {
					t.Fatalf("with a quiet Refused: statuses %s, want %s", got, c.want)
				}
				got, panics := serve(panickyRefused{})
				if !slices.Equal(got, want) {
					t.Errorf("responses with a Refused that panics:\n%s\nwant those with one that returns:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				refused := strings.Count(c.want, "429") + strings.Count(c.want, "400") + strings.Count(c.want, "503")
				if len(panics) != refused {
					t.Errorf("the recoverer caught %d panics (%v), want %d: the panic of Refused goes on", len(panics), panics, refused)
				}
				for _, p := range panics {
					if p != errRefusedBug {
						t.Errorf("the recoverer caught %v, want Refused's panic", p)
					}
				}
			})
		}
	}
}

// response describes w's response: its status, fields and body.
func response(w *httptest.ResponseRecorder) string {
	res := w.Result()
	body, _ := io.ReadAll(res.Body)
	var fields []string
	for k, v := range res.Header {
		fields = append(fields, fmt.Sprintf("%s: %q", k, v))
	}
	slices.Sort(fields)
	return fmt.Sprintf("%d %s %s", res.StatusCode, strings.Join(fields, " "), body)
}

// TestRefusalHookPanicBeforeRefused: the observer and the error handler
// are called before the Feedback's Refused on the way to a refusal, as
// the Feedback doc says; one of theirs that panics leaves the request
// unanswered (a recoverer further out answers it), the Feedback told
// nothing, as a panic of a hook does anywhere in the middleware. A denial
// (the observer) and a key rejected (the error handler), through a
// ServeMux.
func TestRefusalHookPanicBeforeRefused(t *testing.T) {
	errHookBug := errors.New("hook bug")
	noKey := func(*http.Request) (string, error) { return "", errors.New("no key") }
	for _, c := range []struct {
		name   string
		policy *policy.Policy
		opts   []middleware.Option
		n      int
	}{
		{"observer, denied", fixed("p", 1, time.Hour, remote), []middleware.Option{
			middleware.WithObserver(observerFunc(func(e middleware.Event) {
				if e.Outcome == middleware.Denied {
					panic(errHookBug)
				}
			})),
			middleware.WithErrorHandler(func(*http.Request, error) {}),
		}, 2},
		{"error handler, key rejected", fixed("p", 1, time.Hour, noKey), []middleware.Option{
			middleware.WithErrorHandler(func(*http.Request, error) { panic(errHookBug) }),
		}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			store, _ := newStore(t)
			m := middleware.MustNew(store, []*policy.Policy{c.policy}, c.opts...)
			fb := &refusalRecorder{}
			m.SetFeedback(fb)
			var caught any
			limited := m.Handler(ok)
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				defer func() {
					if caught = recover(); caught != nil {
						w.WriteHeader(http.StatusInternalServerError)
					}
				}()
				limited.ServeHTTP(w, r)
			})
			var codes []string
			for range c.n {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
				codes = append(codes, fmt.Sprint(w.Code))
			}
			if got, want := codes[len(codes)-1], "500"; got != want || caught != errHookBug {
				t.Errorf("the refused request: status %s, panic %v; want %s (the recoverer's), %v", got, caught, want, errHookBug)
			}
			if got, want := fb.take(), strings.Repeat("200 ", c.n-1); got != strings.TrimSpace(want) {
				t.Errorf("Feedback told %q, want %q (not the refusal)", got, strings.TrimSpace(want))
			}
		})
	}
}
