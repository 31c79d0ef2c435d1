package keyfunc

import (
	"context"
	"net/http"
)

// userKey is the context key of the user ID.
type userKey struct{}

// WithUser returns a copy of ctx carrying the ID of the authenticated user,
// for [User] to read. An authentication middleware calls it once it has
// verified the credentials:
//
//	next.ServeHTTP(w, r.WithContext(keyfunc.WithUser(r.Context(), id)))
//
// An empty id is stored as is and reads as no user.
func WithUser(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, userKey{}, id)
}

// UserFrom returns the user ID stored by [WithUser], and whether there is
// a non-empty one.
func UserFrom(ctx context.Context) (string, bool) {
	id, _ := ctx.Value(userKey{}).(string)
	return id, id != ""
}

// User returns a Func whose key is the user ID stored by [WithUser]. A
// request without one (not authenticated, or the limiter placed before the
// authentication middleware) yields [ErrNoUser], never an empty key; to
// limit anonymous requests by IP instead, declare the fallback:
//
//	key, err := keyfunc.FirstOf(keyfunc.User(), ip)
func User() Func {
	return func(r *http.Request) (string, error) {
		if id, ok := UserFrom(r.Context()); ok {
			return id, nil
		}
		return "", ErrNoUser
	}
}
