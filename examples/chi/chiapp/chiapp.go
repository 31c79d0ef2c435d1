// Package chiapp is the router of examples/chi, importable so that the
// example server and "ratekeeper demo" run the same code: per client IP
// 10 requests per second and 100 per minute on every route, and the
// write-endpoint preset of policy.WriteEndpoints (login 5 per minute,
// register, comments) keyed by client IP plus user on POST /login,
// /register and /comments.
package chiapp

import (
	"net/http"
	"net/netip"
	"slices"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/examples/internal/app"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// NewHandler builds the router, its limits kept in store, for clients
// behind the reverse proxies within proxies (none: clients connect
// directly). opts apply to both of its middlewares (the global one and the
// write-endpoint one): an error handler, a clock, a header profile...
//
// It checks the routes of its rules against the router's
// (Middleware.CheckRoutes) and returns the error naming any that the
// router lacks, under which a rule would never apply: a server should
// refuse to start with it (a typo, "POST /logn", would otherwise leave
// login unlimited, silently).
func NewHandler(store algorithms.Store, proxies []netip.Prefix, opts ...middleware.Option) (http.Handler, error) {
	return newHandler(store, proxies, policy.WriteEndpoints, opts...)
}

// newHandler is NewHandler with the rules for the write endpoints built
// by writeRules from the key (a test gives rules with a typo).
func newHandler(store algorithms.Store, proxies []netip.Prefix, writeRules func(keyfunc.Func) ([]*policy.Policy, error), opts ...middleware.Option) (http.Handler, error) {
	// Clients connect directly: the key is the peer address (IPv6 by /64).
	// Behind reverse proxies, the key trusts them: the client is the
	// address their X-Forwarded-For names (one that reaches the server
	// directly is still keyed by its own address, whatever it sends), and
	// the forwarding check below is told of them too.
	var trust []keyfunc.IPOption
	if len(proxies) > 0 {
		trust = append(trust, keyfunc.TrustedProxies(proxies...))
		opts = append(slices.Clip(opts), middleware.CheckForwardingFrom("X-Forwarded-For", proxies...))
	}
	ip, err := keyfunc.IP(trust...)
	if err != nil {
		return nil, err
	}
	// The user is the signed-in user or, on /login, the submitted name.
	user, err := keyfunc.FirstOf(keyfunc.User(), app.FormValue("username"))
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
	// Deployed behind a proxy the key does not trust, every client has the
	// proxy's address and all share one limit: the forwarding check, on by
	// default, says so once, in the log.
	global, err := middleware.New(store, []*policy.Policy{perSecond, perMinute}, opts...)
	if err != nil {
		return nil, err
	}
	rules, err := writeRules(ipUser) // POST /login, /register, /comments
	if err != nil {
		return nil, err
	}
	writes, err := middleware.New(store, rules, opts...)
	if err != nil {
		return nil, err
	}

	r := chi.NewRouter()
	r.Use(app.SignedIn)
	r.Use(global.Handler) // runs before routing: only route-independent policies here
	r.Get("/", app.Hello)
	r.Group(func(r chi.Router) {
		// Inside a Group the middleware runs after routing, where the
		// route pattern the rules match on is known.
		r.Use(writes.Handler)
		r.Post("/login", app.Hello)
		r.Post("/register", app.Hello)
		r.Post("/comments", app.Hello)
	})
	// Every route of the rules must be one the router has: a rule on a
	// route it lacks would never apply. Checked once all are registered.
	if err := writes.CheckRoutes(policy.ChiPattern(r)); err != nil {
		return nil, err
	}
	return r, nil
}
