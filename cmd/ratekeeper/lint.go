package main

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/replay"
	"github.com/ratekeeper/ratekeeper/internal/editdist"
	"github.com/ratekeeper/ratekeeper/policy"
)

// maxLogLimit is the sliding_log limit past which check warns about memory.
const maxLogLimit = 10_000

// lint returns advice on a valid configuration: choices that are allowed
// but often regretted. Each is "policy: advice".
func lint(cfg *policy.Config) []string {
	var out []string
	if cfg.IPv6Prefix > 64 && readsIP(cfg) {
		// A subscriber is handed a /64 at least (standards: IPv6 rotation).
		out = append(out, fmt.Sprintf("ipv6_prefix: %d keys apart the addresses of one subscriber, who is handed a /64 at least (often a /56 or /48): one client sends from 2^%d prefixes of /%d in its /64 alone, each a new allowance and a new key in the store; 64 or less (the default) groups them", cfg.IPv6Prefix, cfg.IPv6Prefix-64, cfg.IPv6Prefix))
	}
	if cfg.IPv4Prefix < 24 && readsIP(cfg) {
		out = append(out, fmt.Sprintf("ipv4_prefix: %d makes one key of %d addresses: one client uses up the allowance of all of them (a lockout of its neighbours); 24 to 32 (the default) keeps clients apart", cfg.IPv4Prefix, int64(1)<<(32-cfg.IPv4Prefix)))
	}
	if cfg.IPv6Prefix < 48 && readsIP(cfg) {
		out = append(out, fmt.Sprintf("ipv6_prefix: %d makes one key of 2^%d subscribers' /64s: one client uses up the allowance of all of them (a lockout of its neighbours); 48 to 64 (the default) keeps subscribers apart", cfg.IPv6Prefix, 64-cfg.IPv6Prefix))
	}
	for i, p := range cfg.Policies {
		d := cfg.Definitions[i]
		s := p.Spec()
		warn := func(format string, args ...any) {
			out = append(out, fmt.Sprintf("%s (line %d): %s", p.Name(), d.Line, fmt.Sprintf(format, args...)))
		}
		if s.Algorithm == algorithms.FixedWindow {
			warn("fixed_window admits up to %d requests in a moment across a window boundary (2 x limit); sliding_window costs the same two integers without that burst", 2*s.Limit)
		}
		if s.Algorithm == algorithms.SlidingBuckets && s.Buckets == 1 {
			// One bucket is the fixed window (DESIGN: B=1).
			warn("sliding_buckets with buckets: 1 is a fixed window: it admits up to %d requests in a moment across a window boundary (2 x limit); more buckets spread it over window/buckets, and sliding_window has none", 2*s.Limit)
		}
		if s.Algorithm == algorithms.SlidingLog && s.Limit > maxLogLimit {
			// The in-memory store keeps 16 bytes per accepted instant
			// (its time and its count), up to Limit of them.
			warn("sliding_log keeps one timestamp per admitted request: up to %d per key (about %d KB); sliding_window or sliding_buckets bound it", s.Limit, s.Limit*16/1024)
		}
		if s.Algorithm == algorithms.LeakyQueue && s.MaxDelay == 0 {
			// delay <= MaxDelay (DESIGN): 0 admits only a request whose slot is due.
			warn("leaky_queue with no max_delay holds no request: it passes one request every %s and refuses any that would have to wait for its slot, so it spaces requests instead of queueing them; max_delay sets how long a request may wait", emissionInterval(s))
		}
		if s.Algorithm == algorithms.LeakyQueue && !p.CountsAll() {
			// algorithms.GiveBacker: a queue place comes back by Refund's
			// rule, which a request passed on after its Delay seldom meets.
			warn("count: %s on leaky_queue gives almost nothing back: a request passed on has left the queue, and a place comes back only with no later request queued behind it, so nearly every request counts; sliding_window or token_bucket give back what count: leaves out", d.Count)
		}
		// global is never missing (a fallback after it is refused by the
		// config): one key for every request the policy applies to. A
		// key of route or method parts is one per route or method,
		// shared by all clients as well.
		if shared(d.Key[0]) && len(d.Routes) == 0 && len(d.Methods) == 0 {
			if len(d.Key[0]) == 1 && d.Key[0][0] == "global" {
				warn("key global on every request: one allowance shared by all clients, which one client can use up")
			} else {
				warn("key %s on every request: one allowance per %s shared by all clients, which one client can use up; add ip (or user) to the key for a limit per client", strings.Join(d.Key[0], "+"), strings.Join(slices.DeleteFunc(slices.Clone(d.Key[0]), func(p string) bool { return p == "global" }), " and "))
			}
		}
		needsAuth := false
		for _, part := range d.Key[len(d.Key)-1] {
			if part == "user" || len(part) > 7 && (part[:7] == "header:" || part[:7] == "cookie:") {
				needsAuth = true
			}
		}
		if needsAuth && d.OnMissingKey != policy.SkipPolicy && len(d.Routes) == 0 {
			warn("requests without %s are rejected with %d on every route; add fallback: ip, or on_missing_key: skip", strings.Join(d.Key[len(d.Key)-1], "+"), d.OnMissingKey.Status())
		}
		if parts := chosenParts(d.Key); len(parts) > 0 && !ipCovered(cfg, i) {
			msg := fmt.Sprintf("the client chooses %s of its key: a new value on each request is a new allowance, and a new key in the store, unless the application checks the value before this limiter; a policy keyed by ip over the same requests bounds each client whatever it sends", strings.Join(parts, " and "))
			for _, part := range parts {
				if forwardingHeader(part) {
					msg += fmt.Sprintf(" (%s is a forwarding header any client can send: for a client's address behind a proxy, key by ip with trusted_proxies and ip_source)", part)
					break
				}
			}
			warn("%s", msg)
		}
		for j := range i {
			e := cfg.Definitions[j]
			if e.Spec == d.Spec && slices.EqualFunc(e.Key, d.Key, slices.Equal) && slices.Equal(e.Methods, d.Methods) && slices.Equal(e.Routes, d.Routes) {
				warn("same limit, key and scope as %s: one of them is redundant", e.Name)
			}
		}
		for _, m := range d.Methods {
			if msg := unknownMethod(m); msg != "" {
				warn("method %q is %s", m, msg)
			}
		}
		for _, r := range d.Routes {
			if i := strings.IndexAny(r, " \t"); i > 0 {
				if msg := unknownMethod(r[:i]); msg != "" {
					warn("method %q (route %q) is %s", r[:i], r, msg)
				}
			}
			if first, write := colonParams(r); first != "" {
				warn("route %q has the segment %q, a parameter in express, httprouter and gin but literal text to ServeMux and chi, under which the policy never applies; write %q for them (keep it only under a pattern function that reports such patterns)", r, first, write)
			}
			if q, other := spelledBefore(cfg, i, r); q != "" {
				warn("route %q is %s's %q spelled another way: a router registers one of the two, and a policy routed by the other never applies; spell them alike", r, other, q)
			}
		}
	}
	return append(out, muxConflicts(cfg)...)
}

// muxConflicts returns advice on each route of cfg that a ServeMux cannot
// register beside a route before it in the file: each matches paths the
// other does not, and neither is more specific ("GET /a/{x}" and "GET
// /{y}/b" both match /a/b), so that ServeMux panics registering the
// second. An application's ServeMux holds one of them at most, and the
// other's policy never applies there; ratekeeper replay, which resolves a
// file whose routes are all ServeMux patterns as a ServeMux does, refuses
// the file. A file with a route that only chi reads is a chi
// application's, whose router registers both: no advice then. A route
// spelled as another with other wildcard names is advised on apart (see
// spelledBefore).
func muxConflicts(cfg *policy.Config) []string {
	type route struct {
		def     int // in cfg.Definitions
		pattern string
	}
	var all []route
	for i, d := range cfg.Definitions {
		for _, r := range d.Routes {
			all = append(all, route{i, r})
		}
	}
	for _, r := range all {
		if muxRegister(http.NewServeMux(), r.pattern) != "" {
			return nil // a route only chi reads
		}
	}
	mux := http.NewServeMux()
	owner := map[string]int{} // the routes registered, by pattern: the policy of the first
	var out []string
	for _, r := range all {
		if _, seen := owner[r.pattern]; seen {
			continue
		}
		msg := muxRegister(mux, r.pattern)
		if msg == "" {
			owner[r.pattern] = r.def
			continue
		}
		m := muxConflict.FindStringSubmatch(msg)
		if m == nil || replay.WildcardShape(m[1]) == replay.WildcardShape(r.pattern) {
			continue // spelled another way, or no conflict ServeMux names
		}
		other, ok := owner[m[1]]
		if !ok {
			continue // not as the file spells it: no policy to name
		}
		like := ""
		if l := muxLike.FindStringSubmatch(msg); l != nil {
			like = fmt.Sprintf(", like %q", l[1])
		}
		d := cfg.Definitions[r.def]
		out = append(out, fmt.Sprintf("%s (line %d): route %q conflicts with %s's %q in a ServeMux: both match some paths%s, neither more specific, and a ServeMux cannot register both (it panics): under ServeMux one of them is no route and its policy never applies there (chi registers both); ratekeeper replay, which routes such a file as a ServeMux does, refuses it",
			d.Name, d.Line, r.pattern, cfg.Definitions[other].Name, m[1], like))
	}
	return out
}

// muxConflict and muxLike read ServeMux's panic for a pattern that
// conflicts with one registered: the other pattern, and a path both match.
var (
	muxConflict = regexp.MustCompile(`conflicts with pattern "([^"]*)"`)
	muxLike     = regexp.MustCompile(`both match some paths, like "([^"]*)"`)
)

// muxRegister registers pattern in mux, and returns ServeMux's panic
// message if it refuses it, or "".
func muxRegister(mux *http.ServeMux, pattern string) (msg string) {
	defer func() {
		if v := recover(); v != nil {
			msg = fmt.Sprint(v)
		}
	}()
	mux.Handle(pattern, http.NotFoundHandler())
	return ""
}

// standardMethods are the methods of HTTP (RFC 9110 and RFC 5789's PATCH),
// in the order check names them.
var standardMethods = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace,
}

// unknownMethod returns advice on method m, as the rest of a sentence
// naming it, when it is none of standardMethods: a typo ("PSOT") loads,
// since a router registers any token as a method, and then the policy
// never applies. The advice guesses the standard method m most likely
// misspells, one edit away (two for a longer one, a swap of neighbours
// counting as one); "" for a standard method.
func unknownMethod(m string) string {
	if slices.Contains(standardMethods, m) {
		return ""
	}
	msg := "none of HTTP's " + strings.Join(standardMethods[:len(standardMethods)-1], ", ") + " or " + standardMethods[len(standardMethods)-1] +
		": it loads, as a router registers any method, but unless the application defines it no client sends it, and the policy never applies"
	best, bestDist := "", 3
	for _, s := range standardMethods {
		limit := 1
		if len(s) > 4 {
			limit = 2
		}
		if d := editdist.Distance(m, s); d <= limit && d < bestDist {
			best, bestDist = s, d
		}
	}
	if best != "" {
		msg += fmt.Sprintf("; did you mean %q?", best)
	}
	return msg
}

// colonParams returns the first segment of route r (an optional method,
// then a path) written as express, httprouter and gin write a parameter
// (":id": a ':' then a name, the whole segment, outside a chi regexp's
// braces), and r with each such segment written as ServeMux and chi write
// one ("{id}"); "" and "" when r has none.
func colonParams(r string) (first, write string) {
	method, path := "", r
	if i := strings.IndexByte(r, ' '); i >= 0 {
		method, path = r[:i+1], r[i+1:]
	}
	var b strings.Builder
	depth, start := 0, 0
	flush := func(seg string) {
		name, ok := strings.CutPrefix(seg, ":")
		if ok && isName(name) {
			if first == "" {
				first = seg
			}
			seg = "{" + name + "}"
		}
		b.WriteString(seg)
	}
	for i := 0; i < len(path); i++ {
		switch path[i] {
		case '{':
			depth++
		case '}':
			depth = max(0, depth-1)
		case '/':
			if depth == 0 {
				flush(path[start:i])
				b.WriteByte('/')
				start = i + 1
			}
		}
	}
	flush(path[start:])
	if first == "" {
		return "", ""
	}
	return first, method + b.String()
}

// isName reports whether s is a parameter's name: a letter or '_', then
// letters, digits and '_'.
func isName(s string) bool {
	for i, c := range s {
		if !(c == '_' || 'a' <= c|0x20 && c|0x20 <= 'z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return s != ""
}

// spelledBefore returns the first route in the file of r's shape (r with
// other wildcard names, see replay.WildcardShape), and its policy's name,
// when it is spelled otherwise than r, the i-th policy's.
func spelledBefore(cfg *policy.Config, i int, r string) (string, string) {
	shape := replay.WildcardShape(r)
	for j := 0; j <= i; j++ {
		for _, q := range cfg.Definitions[j].Routes {
			if replay.WildcardShape(q) == shape {
				if q == r {
					return "", ""
				}
				return q, cfg.Definitions[j].Name
			}
		}
	}
	return "", ""
}

// emissionInterval formats the time between two requests a leaky_queue of
// s passes, window/limit: as a time.Duration (truncated to the
// nanosecond), or in fractions of a nanosecond when it is shorter (more
// than one request per nanosecond of window), which the Duration would
// round down to 0s.
func emissionInterval(s algorithms.Spec) string {
	if d := time.Duration(int64(s.Window) / s.Limit); d > 0 {
		return d.String()
	}
	return strconv.FormatFloat(float64(s.Window)/float64(s.Limit), 'g', 3, 64) + "ns"
}

// readsIP reports whether a policy of cfg keys by the client's address.
func readsIP(cfg *policy.Config) bool {
	for _, d := range cfg.Definitions {
		for _, parts := range d.Key {
			if slices.Contains(parts, "ip") {
				return true
			}
		}
	}
	return false
}

// chosenParts returns the key parts of keys (a key and its fallbacks)
// whose value the client sends as it likes, a header or a cookie, in the
// keys tried up to the first holding ip, that one included (those after
// it are tried only for a request without an address).
func chosenParts(keys [][]string) []string {
	var out []string
	for _, parts := range keys {
		for _, p := range parts {
			if strings.HasPrefix(p, "header:") || strings.HasPrefix(p, "cookie:") {
				out = append(out, p)
			}
		}
		if slices.Contains(parts, "ip") {
			break
		}
	}
	return out
}

// ipCovered reports whether another policy of cfg keys by ip, with no
// value the client chooses, every request the i-th applies to: it has no
// routes nor methods, or the same.
func ipCovered(cfg *policy.Config, i int) bool {
	d := cfg.Definitions[i]
	for j, e := range cfg.Definitions {
		if j == i || !slices.Contains(e.Key[0], "ip") || len(chosenParts(e.Key[:1])) > 0 {
			continue
		}
		if len(e.Routes) == 0 && len(e.Methods) == 0 || slices.Equal(e.Routes, d.Routes) && slices.Equal(e.Methods, d.Methods) {
			return true
		}
	}
	return false
}

// forwardingHeader reports whether a key part is a header that proxies
// set to the client's address, which a client reaching the server
// directly sets as it likes.
func forwardingHeader(part string) bool {
	name, ok := strings.CutPrefix(part, "header:")
	if !ok {
		return false
	}
	switch strings.ToLower(name) {
	case "x-real-ip", "x-forwarded-for", "forwarded", "true-client-ip", "cf-connecting-ip", "x-client-ip", "fastly-client-ip", "x-cluster-client-ip":
		return true
	}
	return false
}

// shared reports whether the key parts tell no client apart: every one is
// global, route or method.
func shared(parts []string) bool {
	for _, p := range parts {
		if p != "global" && p != "route" && p != "method" {
			return false
		}
	}
	return true
}
