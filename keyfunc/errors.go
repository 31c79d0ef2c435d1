package keyfunc

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

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
// not an IP address, a trusted forwarding header is missing or malformed or
// names the client "unknown" or by an obfuscated identifier (Forwarded),
// the chain of trusted hops is longer than the configured maximum
// ([MaxHops]), every hop of it is a trusted proxy, it has fewer entries
// than [TrustedHops], or the middleware [FromContext] reads found no client.
// It matches [ErrNoKey].
var ErrNoClientIP error = noKey("keyfunc: no client IP")

// ErrNoUser reports that the request context holds no user ID (see
// [WithUser]): the request is anonymous, or the rate limiter runs before
// the authentication middleware that stores the user (mounted before it,
// every request has none), which its text asks about. It matches
// [ErrNoKey].
var ErrNoUser error = noKey("keyfunc: no user ID in the request context (anonymous, or is the limiter mounted before the authentication middleware that calls keyfunc.WithUser?)")

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
	errHiddenClient  = ipError("keyfunc: no client IP: the trusted Forwarded header names the client unknown or obfuscated")
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

// TrustAllError is the error of [IP] when the prefixes given to
// [TrustedProxies] trust every address of a family as a proxy, one alone
// (0.0.0.0/0, ::/0, ::ffff:0:0/96) or together (0.0.0.0/1 and
// 128.0.0.0/1): every peer of that family would be skipped as a proxy, and
// a client could name any address it likes. Test for it with errors.As.
type TrustAllError struct {
	// Families names the families every address of which is trusted,
	// "IPv4", "IPv6" or both, in that order.
	Families []string
	// Index is the position among the prefixes of the one that holds a
	// whole family alone, or -1 when they hold it only together.
	Index int
	// Prefix is the prefix at Index, as it was given; the zero Prefix
	// when Index is -1.
	Prefix netip.Prefix
}

func (e *TrustAllError) Error() string {
	const advice = "so a client could name any other address; list the proxies' own prefixes, or use TrustedHops when they are unknown"
	if e.Index >= 0 {
		return fmt.Sprintf("keyfunc: IP: TrustedProxies: prefix %d (%s) trusts every address as a proxy, %s", e.Index, e.Prefix, advice)
	}
	every := make([]string, len(e.Families))
	for i, f := range e.Families {
		every[i] = "every " + f + " address"
	}
	peers := "every peer"
	if len(e.Families) == 1 {
		peers = "every " + e.Families[0] + " peer"
	}
	return fmt.Sprintf("keyfunc: IP: TrustedProxies: the prefixes together hold %s, so %s is trusted as a proxy and %s",
		strings.Join(every, " and "), peers, strings.TrimPrefix(advice, "so "))
}

// family names the family of a, an address NormalizePrefix left: "IPv4"
// or "IPv6".
func family(a netip.Addr) string {
	if a.Is4() {
		return "IPv4"
	}
	return "IPv6"
}
