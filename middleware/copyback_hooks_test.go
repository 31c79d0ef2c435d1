package middleware_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/formtest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestTheCallerSeesWhatARefusalHandlerSetOnTheRequest: a deny or reject
// handler (WithDenyHandler, WithRejectHandler) answers a request the
// middleware refuses, handed the same copy of the request next would have
// been. What it set on that copy, a form it parsed, was lost to the
// caller's request, and net/http left the files of a multipart form on
// disk (a client over its limit could fill the temp dir with uploads).
// The caller now sees the form, and no file is left, for a denial (429),
// a cost above the limit (429), a request without a key (400), one
// refused while the store fails (503, FailClosed) and one whose
// leaky_queue wait was cut short (503).
func TestTheCallerSeesWhatARefusalHandlerSetOnTheRequest(t *testing.T) {
	parse := func(r *http.Request) string {
		if err := r.ParseMultipartForm(1); err != nil {
			return err.Error()
		}
		return "a=" + r.FormValue("a")
	}
	noKey := func(*http.Request) (string, error) { return "", errors.New("no key") }
	queue := policy.Must(policy.New("queue", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: time.Hour}, constKey))
	cut := middleware.WithWait(func(context.Context, time.Duration) error { return context.DeadlineExceeded })
	for _, c := range []struct {
		name   string
		policy *policy.Policy
		opts   []middleware.Option
		status int
	}{
		{"deny handler", policy.Must(policy.Per("p", 1, time.Hour, constKey)), nil, http.StatusTooManyRequests},
		{"deny handler, cost", policy.Must(policy.Per("p", 1, time.Hour, constKey, policy.WithCost(func(*http.Request) int64 { return 5 }))), nil, http.StatusTooManyRequests},
		{"reject handler, wait cut short", queue, []middleware.Option{cut}, http.StatusServiceUnavailable},
		{"reject handler, no key", policy.Must(policy.Per("p", 1, time.Hour, noKey)), nil, http.StatusBadRequest},
		{"reject handler, store failing", policy.Must(policy.Per("p", 1, time.Hour, constKey)),
			[]middleware.Option{middleware.OnStoreError(middleware.FailClosed(time.Second))}, http.StatusServiceUnavailable},
	} {
		for _, router := range []string{"ServeMux", "chi"} {
			t.Run(router+"/"+c.name, func(t *testing.T) {
				tmp := t.TempDir()
				t.Setenv("TMPDIR", tmp)
				var seen []string
				answer := func(w http.ResponseWriter, r *http.Request, status int) {
					seen = append(seen, fmt.Sprintf("%d: %s", status, parse(r)))
					w.WriteHeader(status)
				}
				opts := append([]middleware.Option{
					middleware.WithErrorHandler(func(*http.Request, error) {}),
					middleware.WithDenyHandler(func(w http.ResponseWriter, r *http.Request, _ *middleware.Result) {
						answer(w, r, http.StatusTooManyRequests)
					}),
					middleware.WithRejectHandler(func(w http.ResponseWriter, r *http.Request, rej middleware.Rejection) {
						answer(w, r, rej.Status)
					}),
				}, c.opts...)
				var m *middleware.Middleware
				if c.name == "reject handler, store failing" {
					m = middleware.MustNew(&failing{}, []*policy.Policy{c.policy}, opts...)
				} else {
					s, _ := newStore(t)
					m = middleware.MustNew(s, []*policy.Policy{c.policy}, opts...)
				}
				caller := func(next http.Handler) http.Handler {
					return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						next.ServeHTTP(w, r)
						seen = append(seen, "caller: "+formtest.Describe(r))
					})
				}
				srv := formtest.NewServer(t, formtest.Routes(t, router, caller, m.Handler, func(http.ResponseWriter, *http.Request) {
					seen = append(seen, "handler")
				}))
				if c.name == "deny handler" || c.policy == queue {
					// The policy's one unit; the queue's first place.
					srv.Do("GET", "/items/1", "", nil)
				}
				seen = nil
				ct, body := formtest.Multipart(t)
				srv.Do("POST", "/items/7", ct, body)
				got := strings.Join(seen, "; ")
				want := fmt.Sprintf(`%d: a=1; caller: form map[a:[1]] post map[a:[1]] multipart map[a:[1]] [f=f.txt(4096)] pattern "" id ""`, c.status)
				if got != want {
					t.Errorf("got  %s\nwant %s", got, want)
				}
				if router == "chi" {
					// chi serves its middlewares a copy of its own: the
					// files are left with or without the middleware.
					return
				}
				if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
					t.Errorf("%d files left on disk, want none", len(entries))
				}
			})
		}
	}
}
