package keyfunc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
// []byte or any signed or unsigned integer (named types of these kinds
// included, such as type UserID int64), keyed by its own text (an
// integer by its decimal), or a [fmt.Stringer] of another kind (a struct,
// a pointer to one), keyed by its String.
//
// A value of a string, []byte or integer kind whose type shows it
// otherwise, by a String giving other text than its own (type APIKey
// string whose String is "[REDACTED]", a UserID shown as "user-42") or by
// a GoString, Format or LogValue method ([log/slog.LogValuer]), is keyed
// by the digest of its own text, as [Secret] writes it: a type that keeps
// its text out of logs gives the store no copy of it either, and each
// value keeps a key of its own, where its String would give every value
// one key ("[REDACTED]"), one bucket for every client. So is a pointer to
// such a value. A struct's String, the only text it has, must tell its
// values apart: one that redacts gives every client one key (read its ID
// field with a Func of your own). Any other value is kept as it is: wrap
// the Func in Secret or [SecretHMAC] when it is a credential or personal
// data, which the store, its dumps and logs of raw keys would otherwise
// show (the pk of the middleware's RateLimit headers and denial records
// is a keyed hash, never the key).
//
// A request without a value yields [ErrNoContextValue], never an empty or
// shared key, and so does one whose value is the zero value of its type
// ("", 0, UserID(0), a zero struct, a nil pointer or a pointer to a zero
// value), a struct (or pointer) Stringer whose String is "", or a value
// of another type. A middleware that stores the zero ID for anonymous
// requests thus gets the fallback declared with [FirstOf] for them (their
// IP, say), not one bucket that every anonymous client shares and any of
// them can exhaust.
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
// types are matched directly, named ones through reflection.
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
	}
	// A nil pointer (an anonymous request's *User) has no key, and its
	// String would dereference it; a zero value, or a pointer to one, is
	// no user either, whatever its String says ("0").
	rv := reflect.ValueOf(v)
	if rv.IsZero() {
		return ""
	}
	elem, ptr := rv, rv.Kind() == reflect.Pointer
	if ptr {
		if elem = rv.Elem(); elem.IsZero() {
			return ""
		}
	}
	if text, ok := scalarText(elem); ok {
		switch {
		case hidesText(v, text):
			return digest(text)
		case ptr && !isStringer(v):
			return "" // a plain pointer to a scalar is no key, as ever
		}
		return text
	}
	if s, ok := v.(fmt.Stringer); ok {
		return s.String()
	}
	return ""
}

// scalarText returns the text of a value of a string, byte-slice or
// integer kind (the decimal of an integer), and whether it is one.
func scalarText(rv reflect.Value) (string, bool) {
	switch rv.Kind() {
	case reflect.String:
		return rv.String(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(rv.Uint(), 10), true
	case reflect.Slice:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			return string(rv.Bytes()), true
		}
	}
	return "", false
}

// hidesText reports whether the type of v, whose own text is text, shows
// it otherwise: a String giving other text, or a GoString, Format or
// LogValue method (fmt's %#v and verbs, log/slog's records), which a type
// has to redact or reshape itself in logs.
func hidesText(v any, text string) bool {
	if s, ok := v.(fmt.Stringer); ok && s.String() != text {
		return true
	}
	switch v.(type) {
	case fmt.GoStringer, fmt.Formatter, slog.LogValuer:
		return true
	}
	return false
}

// isStringer reports whether v has a String method.
func isStringer(v any) bool {
	_, ok := v.(fmt.Stringer)
	return ok
}
