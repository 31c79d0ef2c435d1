package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// A Config is a configuration file, loaded by [Load] or [ParseConfig]: the
// policies, built and validated, and the settings of the middleware that
// enforces them. It is plain data: the middleware and the command-line tool
// read its fields.
//
// The file is YAML or JSON with these fields (only policies is required):
//
//	version: 1                 # optional; the only version
//	headers: ietf              # ietf (default), ietf-most-constraining, draft-7, draft-6, legacy, legacy-unix, none
//	failure_mode: closed       # open (default), closed, fallback
//	failure_retry_after: 5s    # with failure_mode closed only: its 503's Retry-After (default 1s, 1s to 1h)
//	trusted_proxies: [10.0.0.0/8, 192.0.2.7]  # CIDRs or addresses of reverse proxies
//	trusted_hops: 0            # or, instead, how many proxies append to the header (default 0: none)
//	ip_source: x-forwarded-for # or forwarded, or header:X-Real-IP; needs trusted_proxies
//	                           # or trusted_hops (header: trusted_proxies only)
//	ipv6_prefix: 64            # the ip key groups IPv6 clients by this prefix (default 64)
//	ipv4_prefix: 32            # and IPv4 clients by this one (default 32: each address)
//	nat64_prefixes: [64:ff9b:1::/48]  # NAT64 translators' own prefixes: their IPv4
//	                           # clients keyed by the IPv4 address embedded (default none)
//	policies:
//	  - name: per-ip           # required: A-Z a-z 0-9 - _ . (sent in headers)
//	    limit: 100             # required
//	    window: 1m             # required: Go duration (1s, 1m30s, 24h) or 1d
//	    algorithm: sliding_window  # default; or fixed_window, sliding_log, sliding_buckets,
//	                           # token_bucket, leaky_bucket, leaky_queue
//	    burst: 0               # token_bucket, leaky_bucket: capacity (default limit)
//	    buckets: 0             # sliding_buckets: sub-windows (must divide window)
//	    max_delay: 0s          # leaky_queue: longest hold
//	    key: user              # default ip; or a list of parts joined: [ip, header:X-User-ID]
//	    fallback: [ip]         # keys tried in order when key is missing (each a part or a list)
//	    on_missing_key: reject_400  # or reject_403, skip
//	    count: all             # or failed (responses >= 400 only), succeeded (see CountIf)
//	    methods: [POST]        # apply only to these methods
//	    routes: ["POST /login"]  # apply only to these route patterns
//
// An integer (limit, burst, buckets...) is written in decimal, without a
// leading zero: YAML readers disagree on 010 (octal 8, or 10), and the
// loader refuses it rather than pick one. An underscore may group digits
// (1_000_000), but only between two digits: 10_ or 1__0, which YAML 1.1
// readers read as 10 and others as a string, is refused (10_ is most
// likely 10_000 cut short). A duration (window, max_delay,
// failure_retry_after) is read exactly: a number with a fraction of a
// nanosecond (1.0000000001s, 0.5ns) is an error, where time.ParseDuration
// would drop the fraction.
//
// The file is read as YAML 1.2, in which a plain (unquoted) yes, no, on,
// off, y or n, in any of their cases YAML 1.1 knows (no, No, NO), is a
// string, and so are 2024-01-31 and an IPv6 address written out in
// decimal groups (1:2:3:4:5:6:7:8); YAML 1.1 readers (PyYAML, go-yaml v2
// and the tools built on them) read a boolean, a date and a number in
// base 60. Where the loader would take such a value as a string, a
// policy's name, its methods and trusted_proxies, it is refused (name: no
// is false to those readers, which would see another file): quote it
// (name: "no") to mean the string. In the other fields (headers,
// failure_mode, on_missing_key...) none of them is a value, and each is
// refused as any unknown value is.
//
// The policies of a file make one Set (middleware.FromConfig), and a
// route that would never apply there is an error: one on a method that
// methods exclude, and one on GET under methods naming HEAD but not GET,
// which covers HEAD requests only (see WithRoutes), when another policy
// has a route on HEAD for the same path, which takes those (see
// Set.Match). methods: [HEAD] with routes: ["GET /x"] alone is valid: it
// limits HEAD requests that ServeMux sends to the GET /x pattern. A method
// or a route listed twice in one policy ("GET /x" and "GET\t/x" are one
// route) is an error: it adds nothing, and is most likely a slip for
// another one.
//
// The ip key part reads a forwarding header (ip_source) only when the file
// says who writes it. trusted_proxies, the safer choice, names the proxies:
// a peer within them is a proxy, and the header is walked from the right
// past every proxy to the client (keyfunc.TrustedProxies); any other peer
// is the client. Entries holding every address of a family, one alone
// (0.0.0.0/0, ::/0) or together (0.0.0.0/1 and 128.0.0.0/1, every IPv4
// /8, ::/1 and 8000::/1), are an error: every peer of that family would be
// a proxy. An empty list is an error too, and so is an entry with bits set
// past its length (10.0.0.5/16, an interface's address and network): write
// the proxy's address alone (10.0.0.5) or its network (10.0.0.0/16); and
// the unspecified address (0.0.0.0, ::, "any" where a server listens),
// which no peer connects from, so that it would trust no proxy.
// trusted_hops: n is for proxies whose addresses are not known in advance,
// a cloud load balancer or a proxy on a Unix socket (no peer address, so
// that no trusted_proxies entry matches): every peer is taken for the
// nearest proxy and the client is the n-th entry from the right
// (keyfunc.TrustedHops), so only the proxies must be able to reach the
// server. trusted_hops is an integer from 0 (the default: none) to
// keyfunc.DefaultMaxHops (32); it excludes trusted_proxies, and an
// ip_source of header:NAME, which needs trusted_proxies. With neither, the
// client is the peer and no header is read, and a file that names an
// ip_source is an error, since nothing would read it. header:NAME is for a
// header of one address (X-Real-IP); header:X-Forwarded-For and
// header:Forwarded are errors, since those are lists: write x-forwarded-for
// or forwarded; so is header:Host, which names the server, not the client.
//
// Key parts are ip (the client address, see above), user (set by
// keyfunc.WithUser), route (the route pattern: the router's, see
// keyfunc.Route, or before routing the one the Set's pattern function
// finds, see WithPatternFunc), method, global (one key for everyone),
// header:NAME and cookie:NAME. The client chooses the value of
// a header or cookie, of any length: alone in a key, a value longer than
// keyfunc.MaxKeyLen bytes, holding a byte outside printable ASCII or
// starting with '#' is replaced by a digest ("#" and 22 characters), and in
// a list each part is bounded by keyfunc.Join. A header or cookie whose
// name marks a credential (Authorization, Proxy-Authorization, Cookie, or
// a name holding auth, token, secret, pass, pwd, sess (session, sessid),
// credential, key, jwt, bearer, logged_in or remember in any case, such
// as X-Api-Key; a name ending in sid, such as sid, connect.sid or APISID;
// one starting with __Secure-, __Host-, .AspNetCore. or wordpress_) is never kept as sent: keyfunc.Header and
// keyfunc.Cookie replace its value by its SHA-256 digest (as keyfunc.Secret
// writes it, once), so that the store and its dumps hold no credential, and
// a policy built in code with the same part has the same key. A part written twice in one key (header names in
// any case) is an error.
//
// Each fallback is tried when the key before it is missing (a part of it
// is: keyfunc.FirstOf, keyfunc.Join), and on_missing_key decides when the
// last one is. A fallback that is never tried is an error: one after a key
// whose parts are never missing (global, method), and one that needs every
// part the key before it may miss, missing whenever that key is (after key:
// user, fallback: [user, ip]). Header names are compared in any case
// (header:X-A and header:x-a are one part). on_missing_key is an error
// where every request has a key: when the key, or a fallback reached
// through keys without a route part, has parts that are never missing
// (key: global; key: user, fallback: [ip, global]). A missing route is
// never fallen back past (keyfunc.FirstOf): on_missing_key decides for
// requests seen before routing, and a fallback after a key that misses
// nothing but its route (key: route, fallback: ip) is an error too.
//
// A file with just a name, a limit and a window per policy gets the
// sliding window counter keyed by client IP.
type Config struct {
	// File is the name the configuration was read from.
	File string
	// Version is the format version (1).
	Version int
	// Policies are the policies, in file order, built and validated.
	Policies []*Policy
	// Definitions describe the policies as the file defined them, defaults
	// applied, in the same order as Policies.
	Definitions []Definition
	// Headers is the rate-limit header profile.
	Headers HeaderProfile
	// FailureMode says what the middleware does when its store fails.
	FailureMode FailureMode
	// FailureRetryAfter is the Retry-After of the 503 answered under
	// FailureClosed.
	FailureRetryAfter time.Duration
	// TrustedProxies are the reverse proxies whose forwarding headers the
	// ip key part reads; empty, with TrustedHops 0, means RemoteAddr is
	// the client.
	TrustedProxies []netip.Prefix
	// TrustedHops is the number of reverse proxies in front of the
	// server, each appending to the forwarding header, for proxies whose
	// addresses cannot be listed in TrustedProxies (one on a Unix socket,
	// a cloud load balancer): the ip key part takes the client from the
	// TrustedHops-th entry from the right of the header, whatever the
	// peer (keyfunc.TrustedHops), so only the proxies must be able to
	// reach the server. 0, the default, declares none. Exclusive with
	// TrustedProxies.
	TrustedHops int
	// IPSource is the forwarding header read from trusted proxies
	// (TrustedProxies or TrustedHops): "x-forwarded-for" (the default),
	// "forwarded" or "header:NAME" (with TrustedProxies only).
	IPSource string
	// IPv6Prefix is the prefix length the ip key part groups IPv6 clients
	// by.
	IPv6Prefix int
	// IPv4Prefix is the prefix length the ip key part groups IPv4 clients
	// by.
	IPv4Prefix int
	// NAT64Prefixes are the network-specific prefixes of the NAT64
	// translators in front of the server (keyfunc.NAT64Prefixes): an
	// address within one is keyed by the ip key part as the IPv4 address
	// it embeds, grouped by IPv4Prefix, rather than grouped with every
	// other client of the translator by IPv6Prefix. Empty: none (the
	// well-known prefix 64:ff9b::/96 is always read).
	NAT64Prefixes []netip.Prefix

	// source is the text the Config was parsed from (see Source).
	source []byte
	// stated are the top-level fields the file set (see Stated).
	stated []string
}

// Stated reports whether the file the Config was parsed from sets the
// top-level field name itself ("headers", "failure_mode",
// "trusted_proxies"...), rather than leaving it to its default. A Config
// built in code states nothing. middleware.ApplyConfig uses it so that a
// file that leaves its headers and failure mode to the middleware's own
// options is not taken for one that changes them.
func (c *Config) Stated(name string) bool { return slices.Contains(c.stated, name) }

// Source returns the bytes the Config was parsed from by [Load] or
// [ParseConfig], or nil. Package policy/reload compares it with the file
// to tell whether the file changed since (see reload.InForce). The slice
// must not be modified.
func (c *Config) Source() []byte { return c.source }

// A Definition is one policy as the configuration file defined it, with
// defaults applied.
type Definition struct {
	// Name is the policy's name.
	Name string
	// Spec is the policy's limit.
	Spec algorithms.Spec
	// Key lists the keys tried in order: the first one the request has is
	// used (keyfunc.FirstOf); each is a list of parts joined
	// (keyfunc.Join), such as ["ip", "header:X-User-ID"], or one part (a
	// lone header or cookie part bounded in length, see [Config]).
	Key [][]string
	// OnMissingKey is what happens to a request that has none of the keys.
	OnMissingKey KeyAction
	// Count is which admitted requests count, by their response: "all"
	// (the default, also ""), "failed" (a status of 400 or more,
	// [CountFailed]) or "succeeded" ([CountSucceeded]); see [CountIf].
	Count string
	// Methods restricts the policy to these methods; empty means all.
	Methods []string
	// Routes restricts the policy to these route patterns; empty means all.
	Routes []string
	// Line and Column locate the policy in the file.
	Line, Column int
}

// KeyString formats d.Key: parts joined by "+", alternatives by " | ",
// such as "user | ip".
func (d Definition) KeyString() string {
	alts := make([]string, len(d.Key))
	for i, parts := range d.Key {
		alts[i] = strings.Join(parts, "+")
	}
	return strings.Join(alts, " | ")
}

// A HeaderProfile names the rate-limit headers the middleware sends.
type HeaderProfile string

// The header profiles; see the middleware package for what each sends.
const (
	HeadersIETF       HeaderProfile = "ietf"
	HeadersDraft7     HeaderProfile = "draft-7"
	HeadersDraft6     HeaderProfile = "draft-6"
	HeadersLegacy     HeaderProfile = "legacy"
	HeadersLegacyUnix HeaderProfile = "legacy-unix"
	HeadersNone       HeaderProfile = "none"
	// HeadersIETFMostConstraining is "ietf" with one RateLimit member,
	// the most constraining policy's.
	HeadersIETFMostConstraining HeaderProfile = "ietf-most-constraining"
)

// HeaderProfiles lists every HeaderProfile, the default first.
var HeaderProfiles = [...]HeaderProfile{HeadersIETF, HeadersDraft7, HeadersDraft6, HeadersLegacy, HeadersLegacyUnix, HeadersNone, HeadersIETFMostConstraining}

// A FailureMode says what the middleware does when its store fails.
type FailureMode string

// The failure modes.
const (
	// FailureOpen lets requests through unlimited (the default).
	FailureOpen FailureMode = "open"
	// FailureClosed answers 503 with Retry-After.
	FailureClosed FailureMode = "closed"
	// FailureFallback decides with an in-memory store instead (by
	// default one of at most middleware.FallbackMaxKeys keys).
	FailureFallback FailureMode = "fallback"
)

// FailureModes lists every FailureMode, the default first.
var FailureModes = [...]FailureMode{FailureOpen, FailureClosed, FailureFallback}

// Defaults of a Config.
const (
	// DefaultAlgorithm is the algorithm of a policy that names none.
	DefaultAlgorithm = algorithms.SlidingWindow
	// DefaultFailureRetryAfter is the Retry-After under FailureClosed.
	DefaultFailureRetryAfter = time.Second
)

// MaxFailureRetryAfter bounds a file's failure_retry_after (inclusive; the
// least is 1s). It is sent to every client while the store fails, an
// outage of no known length, and clients that honour Retry-After (crawlers,
// well-behaved API clients) stay away that long after it is over: an hour
// is the most a store outage's answer should ask for, and more (8760h, a
// year) is most likely a slip of unit.
const MaxFailureRetryAfter = time.Hour

// MaxConfigSize is the size in bytes of the largest configuration [Load]
// and [ParseConfig] read (256 KiB); a larger one is refused with a
// *ConfigError. A real configuration takes a few kilobytes.
const MaxConfigSize = 256 << 10

// Load reads the configuration file at path (JSON when the name ends in
// .json, YAML when it ends in .yaml or .yml, and otherwise JSON when the
// content starts with '{', else YAML) and returns it with every policy
// built and validated. See [Config] for the format. A YAML file
// holds one document: a second one (after a "---" line) is an error, not
// ignored, while documents without content after it (a "---" line that
// ends the file, as tools writing streams of documents leave one, with
// comments or "..." lines at most) are no second one; its anchors,
// aliases and merge keys are read (<<: *a, or <<: [*a, *b], a's keys
// winning over b's, and the mapping's own over both), its tags (!!str) are not, and a tab inside a value that is
// unquoted or double-quoted is an error (the parser would drop it or
// misread the line: write a space, or \t in double quotes), and so is a
// space other than U+0020 (a non-breaking space, copied from a web page)
// or a zero-width character in an unquoted value or key, which YAML reads
// as text, not as a blank, and an unquoted value between typographic
// quotes (“/login”), which YAML does not read as quotes. The file is
// UTF-8 text, with or without a byte order mark: a UTF-16 file, or a byte
// that is not UTF-8 anywhere in it (a comment included), is an error at
// that byte.
//
// Every problem found is reported as a *ConfigError giving the file, the
// line and column, and the field, in the file's order, the first 20 of
// them (a 21st then says there are too many errors); several are joined with errors.Join (see [ConfigErrors]),
// those of one policy together: a value that is judged against another one
// (a burst against the limit and window, buckets against the window, a
// route against the methods, a fallback against the keys before it) is
// judged once that one is valid. Unknown
// fields are errors, and so is a field written twice in one mapping
// (reported at the second, which is not read). No Config is returned
// unless the whole file is valid.
//
// So that a hostile or corrupt file cannot stall the loader, a file is
// refused with a *ConfigError when it is larger than [MaxConfigSize] (256
// KiB), nests flow collections ([ ], { }) more than 64 levels deep in YAML
// or indents a line more than 256 columns (which bounds the nesting of block
// collections), nests more than 100 levels deep in JSON, or holds more
// than 4,096 mapping keys or 20,000 nodes (a YAML alias counting as the
// nodes it names); so is such a document given to [ParseConfig]. A real
// configuration stays far below these: [MaxPolicies] policies take a few
// kilobytes.
func Load(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigSize+1))
	if err != nil {
		// "read PATH: is a directory" names the path again.
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == path {
			err = pe.Err
		}
		return nil, fmt.Errorf("policy: %s: %w", path, err)
	}
	return ParseConfig(data, path)
}

// ParseConfig parses a configuration held in memory; name is used in
// error messages and its extension (.json, .yaml, .yml) selects the
// format. See [Load].
func ParseConfig(data []byte, name string) (*Config, error) {
	if len(data) > MaxConfigSize {
		return nil, &ConfigError{File: name, Reason: fmt.Sprintf("is larger than %d bytes", MaxConfigSize)}
	}
	if wideText(data) {
		return nil, &ConfigError{File: name, Line: 1, Column: 1, Reason: "is UTF-16 (or UTF-32) text, not UTF-8; save it as UTF-8"}
	}
	raw := bytes.Clone(data)
	data = bytes.TrimPrefix(data, []byte("\ufeff")) // a byte order mark, as some editors write
	if err := checkUTF8(data, name); err != nil {
		return nil, err
	}
	var root *cnode
	var err error
	if isJSON(data, name) {
		root, err = parseJSON(data, name)
	} else {
		root, err = parseYAML(data, name)
	}
	if err != nil {
		return nil, err
	}
	d := &decoder{file: name}
	cfg := d.config(root)
	if len(d.errs) > 0 {
		return nil, errors.Join(d.sortedErrors()...)
	}
	cfg.File = name
	cfg.source = raw
	return cfg, nil
}

// wideText reports whether data starts as UTF-16 or UTF-32 text does: a
// byte order mark FF FE or FE FF, or a zero byte in the first two (the
// high byte of an ASCII character), which UTF-8 YAML and JSON never have.
func wideText(data []byte) bool {
	if len(data) < 2 {
		return false
	}
	return data[0] == 0xff && data[1] == 0xfe || data[0] == 0xfe && data[1] == 0xff || data[0] == 0 || data[1] == 0
}

// checkUTF8 reports the first byte of data that is not UTF-8, by line
// and column (counting characters). Both parsers would replace it with
// U+FFFD and go on, so that a route of a file saved in Latin-1 ("/café")
// would load as a pattern no router reports, its policy never applying.
func checkUTF8(data []byte, file string) error {
	if utf8.Valid(data) {
		return nil
	}
	line, col := 1, 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return &ConfigError{File: file, Line: line, Column: col,
				Reason: fmt.Sprintf("is not UTF-8: byte %#02x (Latin-1 or Windows-1252 text, perhaps); save the file as UTF-8", data[i])}
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += size
	}
	return nil
}

func isJSON(data []byte, name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".json":
		return true
	case ".yaml", ".yml":
		return false
	}
	t := bytes.TrimLeft(data, " \t\r\n\ufeff")
	return len(t) > 0 && t[0] == '{'
}
