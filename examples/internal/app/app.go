// Package app holds what the example servers (examples/chi, examples/stdlib)
// share besides their routers: the stand-in for authentication, the user
// name read from the login form, the handler every route answers with,
// the error hook and the -trusted-proxies flag (ProxiesFlag); and, for
// those and examples/redis, the checks of the command line (NoArgs,
// CheckAddr), listening (a port in use said so) and serving until Ctrl-C
// or SIGTERM. examples/config uses the handler, the stand-in for
// authentication, NoArgs, listening and the server with its timeouts
// (NewServer). Being
// internal, it cannot be imported from another module: an example copied
// out takes the helpers it uses with it.
package app

import (
	"errors"
	"fmt"
	"log"
	"net/http"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// FormValue returns a key function reading the form field name of the
// request; a request without it has no key (an error matching
// keyfunc.ErrNoKey that names the field). It reads
// before the limit is decided, so from at most 64 KiB of the body (the
// handler finds the body so bounded): a denied request costs no more, and
// a form past it has no user.
func FormValue(name string) keyfunc.Func {
	missing := fmt.Errorf("no form field %q: %w", name, keyfunc.ErrNoKey)
	return func(r *http.Request) (string, error) {
		r.Body = http.MaxBytesReader(nil, r.Body, 64<<10)
		if v := r.PostFormValue(name); v != "" {
			return v, nil
		}
		return "", missing
	}
}

// SignedIn stands for real authentication: it takes the Basic auth user
// name on trust and puts it in the request context (keyfunc.WithUser). For
// the examples only: a real server verifies the password first.
func SignedIn(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, _, ok := r.BasicAuth(); ok && u != "" {
			r = r.WithContext(keyfunc.WithUser(r.Context(), u))
		}
		next.ServeHTTP(w, r)
	})
}

// Hello answers every route, with what the limiter left for the client.
func Hello(w http.ResponseWriter, r *http.Request) {
	res, _ := middleware.FromContext(r.Context())
	left := "unlimited"
	if res != nil && res.Taken() && res.Len() > 0 {
		left = fmt.Sprint(res.Decision(res.Lowest()).Remaining)
	}
	fmt.Fprintf(w, "hello from %s %s; requests left: %s\n", r.Method, r.URL.Path, left)
}

// LogError is the middlewares' error hook: it logs store failures and
// configuration errors, not the requests that lack a key (answered 400).
func LogError(r *http.Request, err error) {
	if errors.Is(err, policy.ErrKey) {
		return
	}
	log.Printf("ratelimit: %s %s: %v", r.Method, r.URL.Path, err)
}
