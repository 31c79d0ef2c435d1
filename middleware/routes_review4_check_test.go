package middleware_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestCheckRoutesNamesTheOtherMethod: a policy's route on a method the
// router does not have the path on ("GET /login" for a login form posted
// to "POST /login", the commonest slip with methods in routes) was
// reported as routed "to no route", and for a ServeMux with the advice
// that the mux may have the route under a Host, which it has not: the
// mux answers such a request 405 with Allow: POST. The report now says
// where the router sends the path on the methods it has it on, so the
// fix (the method) can be read off it, and gives no Host advice then.
func TestCheckRoutesNamesTheOtherMethod(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    []policy.Option
		pattern func() func(*http.Request) string
	}{
		{"ServeMux", []policy.Option{policy.WithRoutes("GET /login")}, func() func(*http.Request) string {
			mux := http.NewServeMux()
			mux.Handle("POST /login", ok)
			return policy.ServeMuxPattern(mux)
		}},
		{"chi", []policy.Option{policy.WithRoutes("GET /login")}, func() func(*http.Request) string {
			r := chi.NewRouter()
			r.Post("/login", ok)
			return policy.ChiPattern(r)
		}},
		// The route has no method; the policy's methods exclude POST.
		{"ServeMux, methods", []policy.Option{policy.WithMethods("GET"), policy.WithRoutes("/login")}, func() func(*http.Request) string {
			mux := http.NewServeMux()
			mux.Handle("POST /login", ok)
			return policy.ServeMuxPattern(mux)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, _ := newStore(t)
			m := middleware.MustNew(store, []*policy.Policy{fixed("login", 1, time.Minute, remote, tc.opts...)})
			err := m.CheckRoutes(tc.pattern())
			if !errors.Is(err, middleware.ErrUnknownRoute) {
				t.Fatalf("CheckRoutes = %v, want ErrUnknownRoute", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, "POST /login") {
				t.Errorf("CheckRoutes = %v\nwant it to say that the router has /login on POST", err)
			}
			if strings.Contains(msg, "Host") {
				t.Errorf("CheckRoutes = %v\nwant no advice about a Host: the mux has the path, on another method", err)
			}
		})
	}
}
