package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestSharedPolicyUnderAnotherKeyStillCounts: a global list reused in a
// stricter middleware behind the authentication (the setup ErrCountedTwice
// is about) holds a policy keyed by the user, else the client. The global
// middleware, before the authentication, counts each request under its
// client; the one behind it under the user: two buckets, each counting
// the request once. The inner middleware left the policy out as already
// decided, so the per-user limit was never counted: a user whose
// requests came from three clients (a credential-stuffing spread) got
// [200 200 200] against a limit of 2 per user.
func TestSharedPolicyUnderAnotherKeyStillCounts(t *testing.T) {
	store, _ := newStore(t)
	client := keyfunc.Func(func(r *http.Request) (string, error) { return r.Header.Get("X-Client"), nil })
	shared := fixed("per-user", 2, time.Minute, keyfunc.Must(keyfunc.FirstOf(keyfunc.User(), client)))
	var got reports
	global := middleware.MustNew(store, []*policy.Policy{shared})
	strict := middleware.MustNew(store, []*policy.Policy{shared}, got.handler())
	auth := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(keyfunc.WithUser(r.Context(), r.Header.Get("X-User"))))
		})
	}
	r := chi.NewRouter()
	r.Use(global.Handler)
	r.Use(auth)
	r.With(strict.Handler).Get("/login", ok)
	srv := httptest.NewServer(r)
	defer srv.Close()
	var codes []int
	for _, c := range []string{"c1", "c2", "c3"} {
		req, _ := http.NewRequest("GET", srv.URL+"/login", nil)
		req.Header.Set("X-Client", c)
		req.Header.Set("X-User", "alice")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
	}
	if want := []int{200, 200, 429}; !slices.Equal(codes, want) {
		t.Errorf("alice from three clients: %v, want %v (the per-user bucket counts inside)", codes, want)
	}
	if errs := got.twice(); len(errs) != 0 {
		t.Errorf("reports %v, want none: no bucket counted the request twice", errs)
	}
}
