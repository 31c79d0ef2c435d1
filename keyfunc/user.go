package keyfunc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
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

// ErrNoContextValue reports that the request context holds no usable value
// under the key given to [ContextValue]. It matches [ErrNoKey].
var ErrNoContextValue error = noKey("keyfunc: no value under the context key")

// ContextValue returns a Func whose key is the value an authentication
// middleware of another library stored in the request context under key
// (for [WithUser]'s own key use [User]). The value may be a string, a
// []byte, any signed or unsigned integer, or a [fmt.Stringer]; a request
// without a value, with an empty one or with one of another type yields
// [ErrNoContextValue], never an empty or shared key. key must be comparable
// and not nil, as for [context.WithValue]; ContextValue returns an error
// otherwise.
func ContextValue(key any) (Func, error) {
	if key == nil {
		return nil, errors.New("keyfunc: ContextValue: key is nil")
	}
	if !reflect.TypeOf(key).Comparable() {
		return nil, fmt.Errorf("keyfunc: ContextValue: key of type %T is not comparable", key)
	}
	return func(r *http.Request) (string, error) {
		var s string
		switch v := r.Context().Value(key).(type) {
		case string:
			s = v
		case []byte:
			s = string(v)
		case int:
			s = strconv.FormatInt(int64(v), 10)
		case int64:
			s = strconv.FormatInt(v, 10)
		case int32:
			s = strconv.FormatInt(int64(v), 10)
		case uint:
			s = strconv.FormatUint(uint64(v), 10)
		case uint64:
			s = strconv.FormatUint(v, 10)
		case uint32:
			s = strconv.FormatUint(uint64(v), 10)
		case fmt.Stringer:
			s = v.String()
		}
		if s == "" {
			return "", ErrNoContextValue
		}
		return s, nil
	}, nil
}
