package keyfunc

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"
)

// Route returns a Func whose key is the pattern of the route that matched
// the request, never its raw path: /users/1 and /users/2 share the key of
// "/users/{id}", so a client cannot make new keys by inventing paths.
//
// The pattern is r.Pattern when it is set (by Go 1.22 ServeMux,
// "GET /users/{id}", and by chi v5.5.0 once it has matched a route,
// "/users/{id}"), else chi's chi.RouteContext(ctx).RoutePattern().
// While chi is dispatching a request it has not matched yet (its
// top-level r.Use), r.Pattern can only be that of an outer router (the
// "/" of http.Handle("/", r)), which is not this request's route: Route
// then yields [ErrNoRoute] too. Both patterns exist only once the router
// has matched the request, which decides where the limiter must sit:
//
//   - net/http ServeMux: wrap each handler, mux.Handle("GET /users/{id}",
//     limiter(h)); a middleware wrapping the mux itself sees no pattern,
//     or, around a mux mounted in another (outer.Handle("/api/", inner)),
//     only the outer mux's ("/api/"), one key for every route below it.
//   - chi: install it inline after routing, r.With(limiter).Get(...), or
//     with r.Use inside an r.Group (at the top or within r.Route). In a
//     top-level r.Use the pattern is empty; in the r.Use of a mounted
//     sub-router (the function of r.Route, a router given to r.Mount) it
//     is only the mount's prefix ("/api/*"), one key for every route below
//     it.
//
// A pattern found before routing and handed over with [WithRoute] comes
// first: a policy.Set whose pattern function resolves routes ahead of the
// router (policy.WithPatternFunc, policy.ServeMuxPattern) passes the
// pattern it matched that way, so that a route key agrees with the route
// policies it applies.
//
// A ServeMux pattern is the key as registered, its method and host kept
// ("POST example.com/login"): the host is part of the route, as
// example.com/login and /login are two routes with their own handlers.
// policy.RoutePattern and policy.ServeMuxPattern report patterns the same
// way, so that a route has one key wherever the limiter sits, around the
// routed handler or around the whole mux.
//
// A request without a pattern yields [ErrNoRoute], which ends a [FirstOf]
// rather than let it fall back to its next part (a fallback taken by every
// request, for all routes alike, would be a silent shared bucket). A
// ServeMux pattern holds a space, which [Join] and [Namespace] do not write
// as it is: under them its key is a digest (still one per route).
func Route() Func {
	return func(r *http.Request) (string, error) {
		if p, ok := r.Context().Value(routeKey{}).(string); ok {
			return p, nil
		}
		rctx := chi.RouteContext(r.Context())
		if rctx != nil && len(rctx.RoutePatterns) == 0 {
			return "", ErrNoRoute // chi has not matched yet
		}
		if r.Pattern != "" {
			return r.Pattern, nil
		}
		if rctx != nil {
			if p := rctx.RoutePattern(); p != "" {
				return p, nil
			}
		}
		return "", ErrNoRoute
	}
}

type routeKey struct{}

// WithRoute returns ctx carrying the route pattern of its request, found
// before the router has run, for [Route] to read ahead of the router's
// own. An empty pattern adds nothing.
func WithRoute(ctx context.Context, pattern string) context.Context {
	if pattern == "" {
		return ctx
	}
	return context.WithValue(ctx, routeKey{}, pattern)
}
