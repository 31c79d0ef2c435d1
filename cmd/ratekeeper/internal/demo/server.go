// Package demo is the scripted, offline demonstration behind "ratekeeper
// demo": a chi server with the middleware driven over real HTTP in
// simulated time, and the algorithms compared on the seed scenarios.
package demo

import (
	"net/http"
	"sync"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/examples/chi/chiapp"
	"github.com/ratekeeper/ratekeeper/middleware"
)

// ProfileOrder lists every header profile in the order the command names
// them: the default first, its variant next, none last.
var ProfileOrder = []middleware.Profile{
	middleware.IETF, middleware.IETFMostConstraining, middleware.Draft7, middleware.Draft6,
	middleware.Legacy, middleware.LegacyUnix, middleware.NoHeaders,
}

// Profiles maps the names of the header profiles to their values.
var Profiles = profiles()

func profiles() map[string]middleware.Profile {
	m := map[string]middleware.Profile{}
	for _, p := range ProfileOrder {
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

// NewHandler builds the router of examples/chi (package chiapp): per
// client IP 10 per second and 100 per minute on every route, and the
// write-endpoint preset (login 5 per minute, sliding log) keyed by client IP
// plus user on POST /login, /register and /comments. Its limits live in
// store; clock serves the middleware, which sends the headers of profile.
func NewHandler(store algorithms.Store, clock algorithms.Clock, profile middleware.Profile) (http.Handler, error) {
	return chiapp.NewHandler(store, nil, middleware.WithClock(clock), middleware.WithHeaders(profile))
}
