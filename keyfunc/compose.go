package keyfunc

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/ratekeeper/ratekeeper/internal/errlist"
)

// Bounds of composed keys.
const (
	// MaxPartLen is the longest part [Join] writes as it is; a longer
	// part, or one with a byte outside visible ASCII, is hashed.
	MaxPartLen = 64
	// MaxKeyLen is the longest key [Namespace] writes as it is; a longer
	// key, or one with a byte outside visible ASCII, is hashed.
	MaxKeyLen = 256
	// MaxNamespaceLen is the longest namespace [Namespace] accepts.
	MaxNamespaceLen = 64
)

// errEmptyKey reports that a Func returned "" with a nil error, which
// this package never does but a user-written Func might.
var errEmptyKey error = noKey("keyfunc: a Func returned an empty key")

// Join returns a Func whose key combines the keys of parts, in order, so
// that a request is limited per combination (per user and route, per IP
// and method, ...).
//
// The encoding is injective: two different lists of part keys never give
// the same key, whatever bytes they hold ("a:b"+"c" and "a"+"b:c" differ).
// Each part is written as its length in decimal, a colon and its bytes
// ("9:192.0.2.1" "5:alice"), unless it is longer than [MaxPartLen] or holds
// a byte outside visible ASCII: then it is written as "#" and its SHA-256
// digest ([HashLen] characters, as in [Secret]). Keys are thus printable and
// at most 3+MaxPartLen bytes per part. Two hashed parts collide only if
// SHA-256 truncated to 128 bits does.
//
// If a part returns an error, Join returns it unchanged (so a missing part
// stays in the [ErrNoKey] family and [FirstOf] can fall back past it); a
// part returning "" with a nil error is treated as missing. Join never
// returns an empty key with a nil error.
//
// At least one part is required, and none may be nil.
func Join(parts ...Func) (Func, error) {
	if len(parts) == 0 {
		return nil, errors.New("keyfunc: Join: no parts")
	}
	if err := nilParts("Join", parts); err != nil {
		return nil, err
	}
	ps := append([]Func(nil), parts...)
	return func(r *http.Request) (string, error) {
		var buf [256]byte
		b := buf[:0]
		for _, p := range ps {
			v, err := p(r)
			if err != nil {
				return "", err
			}
			if v == "" {
				return "", errEmptyKey
			}
			b = appendPart(b, v)
		}
		return string(b), nil
	}, nil
}

// appendPart appends the injective encoding of one part to b.
func appendPart(b []byte, v string) []byte {
	if len(v) > MaxPartLen || !printable(v) {
		b = append(b, '#')
		return appendSHA256(b, v)
	}
	b = strconv.AppendInt(b, int64(len(v)), 10)
	b = append(b, ':')
	return append(b, v...)
}

// FirstOf returns a Func whose key is that of the first of parts that has
// one: a declared fallback chain, such as the user ID when the request is
// authenticated and the client IP otherwise:
//
//	key, err := keyfunc.FirstOf(keyfunc.User(), ip)
//
// A part is passed over only when its error matches [ErrNoKey] (or it
// returns ""); any other error is returned at once, so that a failing
// lookup is not mistaken for an absent one. So is [ErrNoRoute]: a request
// has no route pattern only where the limiter runs before the router has
// matched it (see [Route]), where every request would take the fallback,
// one bucket per client for all routes; returned, it lets a policy.Set that
// resolves routes itself hand the route over, and otherwise the policy's
// key action decide. When no part has a key, the last part's error is
// returned (it matches ErrNoKey).
//
// The key is the part's key prefixed with its index and a colon ("0:alice",
// "1:192.0.2.1"), so that a user whose ID is "192.0.2.1" never shares the
// bucket of the client at that address.
//
// At least one part is required, and none may be nil.
func FirstOf(parts ...Func) (Func, error) {
	if len(parts) == 0 {
		return nil, errors.New("keyfunc: FirstOf: no parts")
	}
	if err := nilParts("FirstOf", parts); err != nil {
		return nil, err
	}
	ps := append([]Func(nil), parts...)
	return func(r *http.Request) (string, error) {
		err := errEmptyKey
		for i, p := range ps {
			var v string
			v, err = p(r)
			if err == nil && v == "" {
				err = errEmptyKey
			}
			if err == nil {
				return strconv.Itoa(i) + ":" + v, nil
			}
			if !errors.Is(err, ErrNoKey) || errors.Is(err, ErrNoRoute) {
				return "", err
			}
		}
		return "", err
	}, nil
}

// Namespace returns a Func whose key is f's key under the namespace ns,
// written "ns:key". Give every policy its own namespace (its name, with a
// version if its meaning may change) so that the same client under two
// policies never shares state, and so that keys of different kinds (a user
// ID and an IP address) never meet.
//
// The key is also bounded: a key longer than [MaxKeyLen] or holding a byte
// outside visible ASCII is written "ns#" and its SHA-256 digest (as in
// [Secret]). Since ns holds neither ':' nor '#', the encoding is injective.
// Errors of f pass through; "" from f is treated as missing.
//
// ns must be 1 to [MaxNamespaceLen] bytes of visible ASCII other than ':'
// and '#'; f must not be nil.
func Namespace(ns string, f Func) (Func, error) {
	var errs []error
	if ns == "" || len(ns) > MaxNamespaceLen {
		errs = append(errs, fmt.Errorf("keyfunc: Namespace: ns must be 1 to %d bytes, got %d", MaxNamespaceLen, len(ns)))
	}
	for i := 0; i < len(ns); i++ {
		if c := ns[i]; c < 0x21 || c > 0x7e || c == ':' || c == '#' {
			errs = append(errs, fmt.Errorf("keyfunc: Namespace: ns %q has byte %#x at %d (want visible ASCII, no ':' or '#')", ns, c, i))
			break
		}
	}
	if f == nil {
		errs = append(errs, errors.New("keyfunc: Namespace: f is nil"))
	}
	if len(errs) > 0 {
		return nil, errlist.Join(errs)
	}
	return func(r *http.Request) (string, error) {
		v, err := f(r)
		if err != nil {
			return "", err
		}
		if v == "" {
			return "", errEmptyKey
		}
		var buf [MaxNamespaceLen + 1 + MaxKeyLen]byte
		b := append(buf[:0], ns...)
		if len(v) > MaxKeyLen || !printable(v) {
			b = append(b, '#')
			b = appendSHA256(b, v)
		} else {
			b = append(b, ':')
			b = append(b, v...)
		}
		return string(b), nil
	}, nil
}

// Must returns f, and panics if err is not nil. It is meant for keys built
// from constant arguments, in package-level variables and tests:
//
//	var byUser = keyfunc.Must(keyfunc.Namespace("per-user", keyfunc.User()))
func Must(f Func, err error) Func {
	if err != nil {
		panic(err)
	}
	return f
}

// nilParts returns the error of fn (Join, FirstOf) naming every nil one
// of parts, or nil when there is none.
func nilParts(fn string, parts []Func) error {
	var at []string
	for i, p := range parts {
		if p == nil {
			at = append(at, strconv.Itoa(i))
		}
	}
	switch len(at) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("keyfunc: %s: part %s is nil", fn, at[0])
	}
	return fmt.Errorf("keyfunc: %s: parts %s and %s are nil", fn, strings.Join(at[:len(at)-1], ", "), at[len(at)-1])
}
