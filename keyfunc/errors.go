package keyfunc

import "errors"

// ErrNoKey is the root of the errors a [Func] returns when the request
// carries no usable key: a missing header, cookie or user ID, an address that
// does not parse, a forwarding chain that cannot be trusted. Test for it with
// errors.Is; every such error in this package matches it.
//
// A caller receiving an ErrNoKey-family error must not fall back to an empty
// or constant key on its own (that would put every such request into one
// shared bucket): reject the request, or declare the fallback with [FirstOf].
// Errors outside the family (for example a failing user-supplied Func) are
// not absorbed by [FirstOf].
var ErrNoKey = errors.New("keyfunc: no key")

// ErrNoClientIP reports that no client IP could be determined: RemoteAddr is
// not an IP address, a trusted forwarding header is missing or malformed,
// the chain of trusted hops is longer than the configured maximum
// ([MaxHops]), every hop of it is a trusted proxy, it has fewer entries
// than [TrustedHops], or the middleware [FromContext] reads found no client.
// It matches [ErrNoKey].
var ErrNoClientIP error = noKey("keyfunc: no client IP")

// ErrNoUser reports that the request context holds no user ID (see
// [WithUser]). It matches [ErrNoKey].
var ErrNoUser error = noKey("keyfunc: no user ID in the request context")

// ErrNoRoute reports that the request has no route pattern: the rate limiter
// runs before the router has matched the request (see [Route]). It matches
// [ErrNoKey], but [FirstOf] returns it rather than fall back past it: every
// request would take the fallback there.
var ErrNoRoute error = noKey("keyfunc: no route pattern (is the limiter placed after routing?)")

// noKeyError is an error in the ErrNoKey family. Values are built once, at
// construction, so returning one costs no allocation per request.
type noKeyError struct{ msg string }

func noKey(msg string) *noKeyError { return &noKeyError{msg: msg} }

func (e *noKeyError) Error() string { return e.msg }

// Is reports whether target is ErrNoKey, so that errors.Is(err, ErrNoKey)
// holds for every error of the family.
func (e *noKeyError) Is(target error) bool { return target == ErrNoKey }

// Specific reasons for ErrNoClientIP, matched by errors.Is against both
// ErrNoClientIP and ErrNoKey.
var (
	errBadRemoteAddr = ipError("keyfunc: no client IP: RemoteAddr is not an IP address")
	errBadEntry      = ipError("keyfunc: no client IP: malformed entry in a trusted forwarding header")
	errNoHeader      = ipError("keyfunc: no client IP: trusted peer sent no forwarding header")
	errTooManyHops   = ipError("keyfunc: no client IP: more trusted hops than MaxHops")
	errShortChain    = ipError("keyfunc: no client IP: fewer forwarding entries than TrustedHops")
	errAllTrusted    = ipError("keyfunc: no client IP: every forwarding hop is a trusted proxy")
	errNoContextIP   = ipError("keyfunc: no client IP: none in the request context")
)

// ipErr is a reason for ErrNoClientIP.
type ipErr struct{ msg string }

func ipError(msg string) *ipErr { return &ipErr{msg: msg} }

func (e *ipErr) Error() string { return e.msg }

// Is reports whether target is ErrNoClientIP or ErrNoKey.
func (e *ipErr) Is(target error) bool { return target == ErrNoClientIP || target == ErrNoKey }
