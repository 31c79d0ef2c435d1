// Command chi is a small server showing ratekeeper under the chi router:
// global limits per client IP for every route, and the stricter
// write-endpoint preset for login, register and comments, keyed by client IP
// plus user.
//
//	go run ./examples/chi -addr 127.0.0.1:8080
//	curl -i http://127.0.0.1:8080/
//	for i in 1 2 3 4 5 6; do curl -si -d username=ann http://127.0.0.1:8080/login | head -1; done
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	flag.Parse()
	store, err := algorithms.NewMemoryStore(algorithms.WithMaxKeys(1_000_000))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	h, err := newHandler(store)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Addr: *addr, Handler: h, ReadHeaderTimeout: 5 * time.Second}
	log.Printf("listening on http://%s", *addr)
	log.Fatal(srv.ListenAndServe())
}

// newHandler builds the router, its limits kept in store.
func newHandler(store algorithms.Store) (http.Handler, error) {
	// Clients connect directly: the key is the peer address (IPv6 by /64).
	// Behind a proxy, add keyfunc.TrustedProxies(<its prefixes>).
	ip, err := keyfunc.IP()
	if err != nil {
		return nil, err
	}
	// The user is the signed-in user or, on /login, the submitted name.
	user, err := keyfunc.FirstOf(keyfunc.User(), formValue("username"))
	if err != nil {
		return nil, err
	}
	ipUser, err := keyfunc.Join(ip, user)
	if err != nil {
		return nil, err
	}

	global, err := middleware.New(store, []*policy.Policy{
		policy.Must(policy.PerSecond("per-second", 10, ip)),
		policy.Must(policy.PerMinute("per-minute", 100, ip)),
	}, middleware.WithErrorHandler(logError))
	if err != nil {
		return nil, err
	}
	rules, err := policy.WriteEndpoints(ipUser) // POST /login, /register, /comments
	if err != nil {
		return nil, err
	}
	writes, err := middleware.New(store, rules, middleware.WithErrorHandler(logError))
	if err != nil {
		return nil, err
	}

	r := chi.NewRouter()
	r.Use(signedIn)
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

// formValue returns a key function reading a form field of the request.
func formValue(name string) keyfunc.Func {
	return func(r *http.Request) (string, error) {
		if v := r.PostFormValue(name); v != "" {
			return v, nil
		}
		return "", keyfunc.ErrNoUser
	}
}

// signedIn stands for real authentication: it takes the Basic auth user
// name on trust, for the demo only.
func signedIn(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, _, ok := r.BasicAuth(); ok && u != "" {
			r = r.WithContext(keyfunc.WithUser(r.Context(), u))
		}
		next.ServeHTTP(w, r)
	})
}

func hello(w http.ResponseWriter, r *http.Request) {
	res, _ := middleware.FromContext(r.Context())
	left := "unlimited"
	if res != nil && res.Taken() && res.Len() > 0 {
		left = fmt.Sprint(res.Decision(res.Lowest()).Remaining)
	}
	fmt.Fprintf(w, "hello from %s %s; requests left: %s\n", r.Method, r.URL.Path, left)
}

func logError(r *http.Request, err error) {
	if errors.Is(err, policy.ErrKey) {
		return // a client error, answered 400
	}
	log.Printf("ratelimit: %s %s: %v", r.Method, r.URL.Path, err)
}
