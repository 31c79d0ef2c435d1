// Package chiapp is the router of examples/chi, importable so that the
// example server and "ratekeeper demo" run the same code: per client IP
// 10 requests per second and 100 per minute on every route, and the
// write-endpoint preset of policy.WriteEndpoints (login 5 per minute,
// register, comments) keyed by client IP plus user on POST /login,
// /register and /comments.
package chiapp

import (
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// NewHandler builds the router, its limits kept in store. opts apply to both
// of its middlewares (the global one and the write-endpoint one): an error
// handler, a clock, a header profile...
func NewHandler(store algorithms.Store, opts ...middleware.Option) (http.Handler, error) {
	// Clients connect directly: the key is the peer address (IPv6 by /64).
	// Behind a proxy, add keyfunc.TrustedProxies(<its prefixes>).
	ip, err := keyfunc.IP()
	if err != nil {
		return nil, err
	}
	// The user is the signed-in user or, on /login, the submitted name.
	user, err := keyfunc.FirstOf(keyfunc.User(), FormValue("username"))
	if err != nil {
		return nil, err
	}
	ipUser, err := keyfunc.Join(ip, user)
	if err != nil {
		return nil, err
	}
	perSecond, err := policy.PerSecond("per-second", 10, ip)
	if err != nil {
		return nil, err
	}
	perMinute, err := policy.PerMinute("per-minute", 100, ip)
	if err != nil {
		return nil, err
	}
	global, err := middleware.New(store, []*policy.Policy{perSecond, perMinute}, opts...)
	if err != nil {
		return nil, err
	}
	rules, err := policy.WriteEndpoints(ipUser) // POST /login, /register, /comments
	if err != nil {
		return nil, err
	}
	writes, err := middleware.New(store, rules, opts...)
	if err != nil {
		return nil, err
	}

	r := chi.NewRouter()
	r.Use(SignedIn)
	r.Use(global.Handler) // runs before routing: only route-independent policies here
	r.Get("/", hello)
	r.Group(func(r chi.Router) {
		// Inside a Group the middleware runs after routing, where the
		// route pattern the rules match on is known.
		r.Use(writes.Handler)
		r.Post("/login", hello)
		r.Post("/register", hello)
		r.Post("/comments", hello)
	})
	return r, nil
}

// FormValue returns a key function reading the form field name of the
// request; a request without it has no user (keyfunc.ErrNoUser).
func FormValue(name string) keyfunc.Func {
	return func(r *http.Request) (string, error) {
		if v := r.PostFormValue(name); v != "" {
			return v, nil
		}
		return "", keyfunc.ErrNoUser
	}
}

// SignedIn stands for real authentication: it takes the Basic auth user
// name on trust and puts it in the request context (keyfunc.WithUser). For
// the demo only: a real server verifies the password first.
func SignedIn(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, _, ok := r.BasicAuth(); ok && u != "" {
			r = r.WithContext(keyfunc.WithUser(r.Context(), u))
		}
		next.ServeHTTP(w, r)
	})
}

// hello answers every route, with what the limiter left for the client.
func hello(w http.ResponseWriter, r *http.Request) {
	res, _ := middleware.FromContext(r.Context())
	left := "unlimited"
	if res != nil && res.Taken() && res.Len() > 0 {
		left = fmt.Sprint(res.Decision(res.Lowest()).Remaining)
	}
	fmt.Fprintf(w, "hello from %s %s; requests left: %s\n", r.Method, r.URL.Path, left)
}
