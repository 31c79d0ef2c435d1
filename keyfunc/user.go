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
// under the key given to [ContextValue]: the request is anonymous, or the
// rate limiter runs before the middleware that stores the value, which
// its text asks about. It matches [ErrNoKey].
var ErrNoContextValue error = noKey("keyfunc: no value under the context key (anonymous, or is the limiter mounted before the middleware that stores it?)")

// ContextValue returns a Func whose key is the value an authentication
// middleware of another library stored in the request context under key
// (for [WithUser]'s own key use [User]). The value may be a string, a
// []byte, any signed or unsigned integer (named types of these kinds
// included, such as type UserID int64), or a [fmt.Stringer], whose String
// is preferred for a named type that has one.
//
// A request without a value yields [ErrNoContextValue], never an empty or
// shared key, and so does one whose value is the zero value of its type
// ("", 0, UserID(0), a zero struct, a nil pointer or a pointer to a zero
// value), a Stringer whose String is "", or a value of another type. A
// middleware that stores the zero ID for anonymous requests thus gets the
// fallback declared with [FirstOf] for them (their IP, say), not one
// bucket that every anonymous client shares and any of them can exhaust.
// An ID that really is the zero value (a user 0) is no key either: store
// it in another form, as a string say.
//
// key must be comparable and not nil, as for [context.WithValue], and so
// must every value its interface fields hold (a lookup with a key holding
// a slice panics); ContextValue returns an error otherwise.
func ContextValue(key any) (Func, error) {
	if key == nil {
		return nil, errors.New("keyfunc: ContextValue: key is nil")
	}
	// The value, not only its type: a comparable struct type whose
	// interface field holds a slice makes every lookup panic.
	if !reflect.ValueOf(key).Comparable() {
		return nil, fmt.Errorf("keyfunc: ContextValue: key of type %T is not comparable", key)
	}
	return func(r *http.Request) (string, error) {
		if s := contextKey(r.Context().Value(key)); s != "" {
			return s, nil
		}
		return "", ErrNoContextValue
	}, nil
}

// contextKey returns the key text of a value [ContextValue] found, or ""
// for a value it cannot use: one of another type, the zero value of its
// type (or a pointer to one), or a Stringer writing nothing. The common
// types are matched directly; named string and integer types through
// reflection.
func contextKey(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case []byte:
		return string(v)
	case int:
		if v == 0 {
			return ""
		}
		return strconv.FormatInt(int64(v), 10)
	case int64:
		if v == 0 {
			return ""
		}
		return strconv.FormatInt(v, 10)
	case uint64:
		if v == 0 {
			return ""
		}
		return strconv.FormatUint(v, 10)
	case fmt.Stringer:
		// A nil pointer (an anonymous request's *User) has no key, and its
		// String would dereference it; a zero value, or a pointer to one,
		// is no user either, whatever its String says ("0").
		rv := reflect.ValueOf(v)
		if rv.IsZero() || rv.Kind() == reflect.Pointer && rv.Elem().IsZero() {
			return ""
		}
		return v.String()
	}
	rv := reflect.ValueOf(v)
	if rv.IsZero() {
		return ""
	}
	switch rv.Kind() {
	case reflect.String:
		return rv.String()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(rv.Uint(), 10)
	case reflect.Slice:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			return string(rv.Bytes())
		}
	}
	return ""
}
