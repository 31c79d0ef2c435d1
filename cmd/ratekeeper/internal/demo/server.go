// Package demo is the scripted, offline demonstration behind "ratekeeper
// demo": a chi server with the middleware driven over real HTTP in
// simulated time, and the algorithms compared on the seed scenarios.
package demo

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// Profiles maps the names of the header profiles to their values.
var Profiles = profiles()

func profiles() map[string]middleware.Profile {
	m := map[string]middleware.Profile{}
	for p := middleware.IETF; p <= middleware.NoHeaders; p++ {
		m[p.String()] = p
	}
	return m
}

// Clock is a simulated clock, safe for concurrent use: the server's
// goroutines read it while the script moves it.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Now returns the simulated time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// NewHandler builds the router of examples/chi (which, being a command,
// cannot be imported): per client IP 10 per second and 100 per minute on
// every route, and the write-endpoint preset (login 5 per minute, sliding
// log) keyed by client IP plus user on POST /login, /register and
// /comments. Its limits live in store; clock serves the middleware, which
// sends the headers of profile.
func NewHandler(store algorithms.Store, clock algorithms.Clock, profile middleware.Profile) (http.Handler, error) {
	ip, err := keyfunc.IP()
	if err != nil {
		return nil, err
	}
	user, err := keyfunc.FirstOf(keyfunc.User(), formValue("username"))
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
	global, err := middleware.New(store, []*policy.Policy{perSecond, perMinute}, middleware.WithClock(clock), middleware.WithHeaders(profile))
	if err != nil {
		return nil, err
	}
	rules, err := policy.WriteEndpoints(ipUser)
	if err != nil {
		return nil, err
	}
	writes, err := middleware.New(store, rules, middleware.WithClock(clock), middleware.WithHeaders(profile))
	if err != nil {
		return nil, err
	}
	r := chi.NewRouter()
	r.Use(global.Handler)
	r.Get("/", hello)
	r.Group(func(r chi.Router) {
		r.Use(writes.Handler) // after routing: the rules see the route pattern
		r.Post("/login", hello)
		r.Post("/register", hello)
		r.Post("/comments", hello)
	})
	return r, nil
}

func formValue(name string) keyfunc.Func {
	return func(r *http.Request) (string, error) {
		if v := r.PostFormValue(name); v != "" {
			return v, nil
		}
		return "", keyfunc.ErrNoUser
	}
}

func hello(w http.ResponseWriter, r *http.Request) {
	fmt.Fprintf(w, "hello from %s %s\n", r.Method, r.URL.Path)
}
