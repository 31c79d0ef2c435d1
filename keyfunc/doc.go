// Package keyfunc extracts rate-limit keys from HTTP requests: who is asking.
//
// A [Func] maps a request to a key. The package provides the parts
// (client [IP], [User], a value another auth middleware put in the context
// ([ContextValue]), [Header], [Cookie], [Route], [Method], [Global],
// [Const]) and the ways to combine them ([Join], [FirstOf], [Namespace],
// [Secret]). A typical policy limits authenticated users by ID and anonymous
// clients by address, behind a proxy at 10.0.0.0/8:
//
//	ip, err := keyfunc.IP(keyfunc.TrustedProxies(netip.MustParsePrefix("10.0.0.0/8")))
//	who, err := keyfunc.FirstOf(keyfunc.User(), ip)
//	key, err := keyfunc.Namespace("per-client", who)
//
// # Security
//
// Keys decide who shares a bucket, so everything that reaches one is
// treated as hostile input:
//
//   - No forwarding header is read unless the connecting peer is a declared
//     trusted proxy ([TrustedProxies], [TrustedHops]); the chain is walked
//     from the right, and at most [MaxHops] entries are examined.
//   - IPv4-mapped IPv6 is unmapped first (and a translated IPv4 client of
//     64:ff9b::/96, a 6to4 site of 2002::/16 or a Teredo client of
//     2001::/32 keyed as its IPv4 address when that is global, and the
//     IPv4 clients of a translator declared with [NAT64Prefixes]), IPv6
//     is grouped by /64 (see [IPv6Prefix]), ports and zones are dropped.
//   - A request without a usable key gets an error in the [ErrNoKey] family,
//     never "" or a shared placeholder; to [ContextValue], the zero value
//     of any type (UserID(0) as much as "") is no key. Every Func of this
//     package returns either a non-empty key or a non-nil error. A
//     fallback must be declared ([FirstOf]).
//   - [Join], [FirstOf] and [Namespace] encode injectively, so distinct
//     inputs never meet in one key; [Join] and [Namespace] bound the length
//     and hash long or non-printable values; [Secret] hashes values that
//     must not be readable in the store, and [Header] and [Cookie] hash
//     those whose name marks a credential (Authorization, X-Api-Key, a
//     session cookie) by themselves, as [ContextValue] hashes a value
//     whose type redacts its text.
//   - Client-chosen parts ([Header], [Cookie]) let a client pick its key;
//     combine them with something it cannot choose.
//
// Bad configuration is reported by the constructors, which return an error
// naming the faulty option; no Func panics on any request.
//
// Every Func returned here is safe for concurrent use.
//
// # httprate
//
// Func is an alias of the type underlying httprate's KeyFunc: a Func can be
// passed to httprate (httprate.LimitBy(10, time.Minute, ip)), and an
// httprate key function (httprate.KeyByIP) used wherever a Func is wanted,
// with no wrapper and no conversion.
package keyfunc

import "net/http"

// A Func returns the rate-limit key of a request, or an error when it cannot
// tell (see ErrNoKey). It is an alias of the function type, the shape of
// httprate's KeyFunc, so a Func and an httprate.KeyFunc are assignable to
// each other with no wrapper or conversion.
//
// A Func of this package returns either a non-empty key and a nil error or
// "" and a non-nil error.
type Func = func(r *http.Request) (string, error)
