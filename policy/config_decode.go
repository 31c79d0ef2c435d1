package policy

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/errtext"
	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// A decoder turns a document tree into a Config, collecting every problem
// with its position.
type decoder struct {
	file string
	errs []error
}

// fail records a problem at n. Every problem is kept (the file's size and
// node bounds bound them): the decoder meets them out of the file's order
// (the policies after the settings of the whole file, a value judged
// against another one once that is read), and Load reports the first
// maxConfigErrors by position (see sortedErrors).
func (d *decoder) fail(n *cnode, field, format string, args ...any) {
	// A field path holds the file's keys as spelt, and a reason may
	// quote its values: neither may carry a control character to a
	// terminal or a log (the YAML parser's messages are escaped too).
	// A value of the file is cut when it is long (see errorText), and so
	// is a field path holding a long key.
	ce := &ConfigError{File: d.file, Field: errtext.Cut(escapeControls(field)), Reason: errorText(fmt.Sprintf(format, args...))}
	if n != nil {
		ce.Line, ce.Column = n.pos.line, n.pos.col
	}
	d.errs = append(d.errs, ce)
}

// fields calls set for every entry of the mapping n, and reports entries
// not in known (naming the field one most likely misspells, if any: see
// nearestField), and keys written twice (at the second: set sees the
// first only).
func (d *decoder) fields(n *cnode, path string, known []string, set func(name string, k, v *cnode)) bool {
	if n.kind != mapNode {
		d.fail(n, path, "must be a mapping, not %s", n.describe())
		return false
	}
	for i, k := range n.keys {
		if first := n.lookup(k.text); first != k {
			d.fail(k, join(path, k.text), "appears twice; the first is at line %d, column %d", first.pos.line, first.pos.col)
			continue
		}
		if !containsStr(known, k.text) {
			if k.text == "" {
				d.fail(k, path, "a field with an empty name; want one of %s", strings.Join(known, ", "))
			} else if where := otherLevel(k.text, known); where != "" {
				d.fail(k, join(path, k.text), "unknown field here; %s", where)
			} else if near := cmp.Or(synonym(k.text, known), nearestField(k.text, known)); near != "" {
				d.fail(k, join(path, k.text), "unknown field; did you mean %q? (want one of %s)", near, strings.Join(known, ", "))
			} else {
				d.fail(k, join(path, k.text), "unknown field; want one of %s", strings.Join(known, ", "))
			}
			continue
		}
		set(k.text, k, n.vals[i])
	}
	return true
}

// otherLevel says where name, a field unknown among known, belongs when
// it is a field of the other level of the file (a policy's at the top
// level, a line dedented by mistake; a setting of the whole file in a
// policy), or returns "".
func otherLevel(name string, known []string) string {
	switch {
	case slices.Equal(known, topFields) && containsStr(policyFields, name):
		return "a field of a policy: write it in an entry of policies"
	case slices.Equal(known, policyFields) && containsStr(topFields, name):
		return "a setting of the whole file: write it at the top level, outside policies"
	}
	return ""
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func containsStr(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

var topFields = []string{"version", "headers", "failure_mode", "failure_retry_after", "trusted_proxies", "trusted_hops", "ip_source", "ipv6_prefix", "ipv4_prefix", "nat64_prefixes", "policies"}

var policyFields = []string{"name", "algorithm", "limit", "window", "burst", "buckets", "max_delay", "key", "fallback", "on_missing_key", "count", "methods", "routes"}

// rawPolicy is a policy entry before it is built, with the nodes of its
// fields for error positions.
type rawPolicy struct {
	node  *cnode
	path  string
	def   Definition
	nodes map[string]*cnode
	// items locate the entries of methods and routes, for their errors.
	items map[string][]stringItem
	// bad holds the fields whose value was reported (or that are missing):
	// build judges the others, with defaults standing in for these.
	bad map[string]bool
	// broken says that a problem of the entry was reported: it is built
	// only to report its other problems.
	broken bool
	// unknown says that the entry has a field it does not know, perhaps
	// a misspelt algorithm.
	unknown bool
}

func (d *decoder) config(root *cnode) *Config {
	cfg := &Config{
		Version:           1,
		Headers:           HeadersIETF,
		FailureMode:       FailureOpen,
		FailureRetryAfter: DefaultFailureRetryAfter,
		IPSource:          "x-forwarded-for",
		IPv6Prefix:        keyfunc.DefaultIPv6Prefix,
		IPv4Prefix:        keyfunc.DefaultIPv4Prefix,
	}
	var policies *cnode
	var source, proxies, hops, retryAfter *cnode
	proxiesBad := false // a trusted_proxies entry was reported
	hopsBad := false    // trusted_hops was reported
	sourceBad := false  // ip_source was reported
	modeBad := false    // failure_mode was reported
	nat64Bad := false   // a nat64_prefixes entry was reported
	d.fields(root, "", topFields, func(name string, k, v *cnode) {
		cfg.stated = append(cfg.stated, name)
		switch name {
		case "version":
			if n, ok := d.integer(v, name); ok && n != 1 {
				d.fail(v, name, "must be 1, got %d", n)
			}
		case "headers":
			if s, ok := d.enum(v, name, profileNames()); ok {
				cfg.Headers = HeaderProfile(s)
			}
		case "failure_mode":
			if s, ok := d.enum(v, name, modeNames()); ok {
				cfg.FailureMode = FailureMode(s)
			} else {
				modeBad = true
			}
		case "failure_retry_after":
			retryAfter = v
			if t, ok := d.duration(v, name); ok {
				if t < time.Second {
					d.fail(v, name, "must be at least 1s, got %s", t)
				} else if t > MaxFailureRetryAfter {
					// Sent to every client while the store fails: a
					// client honouring it would stay away that long.
					d.fail(v, name, "must be at most %s (MaxFailureRetryAfter), got %s: clients that honour Retry-After stay away that long after the store is back", shortDuration(MaxFailureRetryAfter), t)
				}
				cfg.FailureRetryAfter = t
			}
		case "trusted_proxies":
			proxies = v
			before := len(d.errs)
			if v.kind == seqNode && len(v.vals) == 0 {
				// No proxy, as keyfunc.TrustedProxies() with no prefix,
				// which keyfunc.IP refuses: most likely a list a
				// template left empty, not a server clients reach
				// directly.
				d.fail(v, name, "is empty; list the proxies' addresses or prefixes, or leave trusted_proxies out when clients connect directly")
			}
			cfg.TrustedProxies = d.prefixes(v, name)
			d.coverage(v, name, cfg.TrustedProxies)
			proxiesBad = len(d.errs) > before
		case "trusted_hops":
			hops = v
			n, ok := d.integer(v, name)
			switch {
			case !ok:
				hopsBad = true
			case n < 0 || n > keyfunc.DefaultMaxHops:
				// keyfunc.IP examines at most DefaultMaxHops entries (the
				// file does not set MaxHops), so a client beyond them
				// would never be found.
				d.fail(v, name, "must be between 0 and %d, got %d", keyfunc.DefaultMaxHops, n)
				hopsBad = true
			default:
				cfg.TrustedHops = int(n)
			}
		case "ip_source":
			source = v
			if s, ok := d.str(v, name); ok {
				cfg.IPSource = s
			} else {
				sourceBad = true
			}
		case "ipv6_prefix":
			if n, ok := d.integer(v, name); ok {
				if n < 1 || n > 128 {
					// Reported here only: the ip key part is built with the default.
					d.fail(v, name, "must be between 1 and 128, got %d", n)
				} else {
					cfg.IPv6Prefix = int(n)
				}
			}
		case "ipv4_prefix":
			if n, ok := d.integer(v, name); ok {
				if n < 1 || n > 32 {
					// Reported here only: the ip key part is built with the default.
					d.fail(v, name, "must be between 1 and 32, got %d", n)
				} else {
					cfg.IPv4Prefix = int(n)
				}
			}
		case "nat64_prefixes":
			before := len(d.errs)
			cfg.NAT64Prefixes = d.nat64Prefixes(v, name)
			nat64Bad = len(d.errs) > before
		case "policies":
			policies = v
		}
	})
	if retryAfter != nil && cfg.FailureMode != FailureClosed && !modeBad {
		// It would do nothing, silently: a file that forgot
		// failure_mode: closed fails open. (A failure_mode that was
		// reported, a misspelt closed perhaps, is no mode the file asked
		// for: the error is there.)
		d.fail(retryAfter, "failure_retry_after", "is the Retry-After of failure_mode closed, and failure_mode is %s", cfg.FailureMode)
	}
	if cfg.TrustedHops > 0 && (len(cfg.TrustedProxies) > 0 || proxiesBad) {
		// keyfunc.IP refuses both; said here, at the field, rather than
		// as an ip_source error.
		d.fail(hops, "trusted_hops", "excludes trusted_proxies: name the proxies by address (preferred) or count them, not both")
		hopsBad = true
	}
	if root.kind != mapNode {
		return cfg
	}
	if policies == nil {
		d.fail(root, "policies", "is missing; a configuration needs at least one policy")
		return cfg
	}
	var ip keyfunc.Func
	if !proxiesBad && !hopsBad && !sourceBad && !nat64Bad { // else the ip part cannot be built as the file means, and that is reported
		ip = d.ipFunc(cfg, source, proxies, hops)
	}
	raws := d.policies(policies)
	seen := map[string]*rawPolicy{}
	for _, rp := range raws {
		if prev, dup := seen[rp.def.Name]; dup && rp.def.Name != "" {
			d.fail(rp.nodes["name"], rp.path+".name", "%q is already the name of %s (line %d)", rp.def.Name, prev.path, prev.node.pos.line)
			d.build(rp, ip) // its other problems
			continue
		}
		seen[rp.def.Name] = rp
		p := d.build(rp, ip)
		if p != nil {
			cfg.Policies = append(cfg.Policies, p)
			cfg.Definitions = append(cfg.Definitions, rp.def)
		}
	}
	d.checkHeadShadows(raws)
	return cfg
}

func profileNames() []string {
	out := make([]string, len(HeaderProfiles))
	for i, p := range HeaderProfiles {
		out[i] = string(p)
	}
	return out
}

func kindNames() []string {
	out := make([]string, len(algorithms.Kinds))
	for i, k := range algorithms.Kinds {
		out[i] = string(k)
	}
	return out
}

func modeNames() []string {
	out := make([]string, len(FailureModes))
	for i, m := range FailureModes {
		out[i] = string(m)
	}
	return out
}

// ipFunc builds the ip key part from the client-address settings, source,
// proxies and hops being the nodes of ip_source, trusted_proxies and
// trusted_hops (nil when the file leaves them out); nil after reporting a
// problem.
func (d *decoder) ipFunc(cfg *Config, source, proxies, hops *cnode) keyfunc.Func {
	opts := []keyfunc.IPOption{keyfunc.IPv6Prefix(cfg.IPv6Prefix), keyfunc.IPv4Prefix(cfg.IPv4Prefix)}
	if len(cfg.NAT64Prefixes) > 0 {
		opts = append(opts, keyfunc.NAT64Prefixes(cfg.NAT64Prefixes...))
	}
	if len(cfg.TrustedProxies) > 0 || cfg.TrustedHops > 0 { // not both: config refused that
		if len(cfg.TrustedProxies) > 0 {
			opts = append(opts, keyfunc.TrustedProxies(cfg.TrustedProxies...))
		} else {
			opts = append(opts, keyfunc.TrustedHops(cfg.TrustedHops))
		}
		switch s := cfg.IPSource; {
		case s == "x-forwarded-for":
			opts = append(opts, keyfunc.FromXForwardedFor())
		case s == "forwarded":
			opts = append(opts, keyfunc.FromForwarded())
		case strings.HasPrefix(s, "header:"):
			if why := headerSourceProblem(s, ""); why != "" {
				d.fail(source, "ip_source", "%s", why)
				return nil
			}
			if cfg.TrustedHops > 0 {
				// keyfunc.FromHeader requires TrustedProxies.
				d.fail(source, "ip_source", "%s needs trusted_proxies: a header of one value is believed only from a proxy known by its address; with trusted_hops, use x-forwarded-for or forwarded", errtext.Cut(s))
				return nil
			}
			opts = append(opts, keyfunc.FromHeader(strings.TrimPrefix(s, "header:")))
		default:
			d.fail(source, "ip_source", "unknown source %q; want x-forwarded-for, forwarded or header:NAME%s", s, suggestSource(s))
			return nil
		}
	} else if source != nil {
		// Name the fix that loads: a header: source takes trusted_proxies
		// alone, and an unknown source is no source at all.
		switch s := cfg.IPSource; {
		case s == "x-forwarded-for", s == "forwarded":
			d.fail(source, "ip_source", "needs trusted_proxies or trusted_hops: headers from untrusted peers are never read")
		case strings.HasPrefix(s, "header:"):
			if why := headerSourceProblem(s, ", with trusted_proxies or trusted_hops"); why != "" {
				d.fail(source, "ip_source", "%s", why)
				break
			}
			d.fail(source, "ip_source", "%s needs trusted_proxies: headers from untrusted peers are never read, and a header of one value is believed only from a proxy known by its address", errtext.Cut(s))
		default:
			d.fail(source, "ip_source", "unknown source %q; want x-forwarded-for, forwarded or header:NAME%s", s, suggestSource(s))
		}
		return nil
	}
	f, err := keyfunc.IP(opts...)
	if err != nil {
		// Every setting was judged above, in the file's words: this is a
		// rule of keyfunc.IP's that the loader does not know yet. It is
		// told at the setting that chose a forwarding header.
		at, field, value := source, "ip_source", cfg.IPSource
		switch {
		case source != nil:
		case proxies != nil:
			at, field, value = proxies, "trusted_proxies", fmt.Sprint(cfg.TrustedProxies)
		case hops != nil:
			at, field, value = hops, "trusted_hops", strconv.Itoa(cfg.TrustedHops)
		default:
			field, value = "", fmt.Sprintf("ipv4_prefix %d with ipv6_prefix %d", cfg.IPv4Prefix, cfg.IPv6Prefix)
		}
		d.fail(at, field, "%s is refused: %s", errtext.Cut(value), strings.TrimPrefix(err.Error(), "keyfunc: "))
		return nil
	}
	return f
}

// headerSourceProblem returns why s, an ip_source of the form header:NAME,
// cannot load whatever the file declares of its proxies, or "" when
// trusted_proxies make it load: NAME is a list of hops (X-Forwarded-For,
// Forwarded: the message names the source that walks it, followed by
// trust, what that source needs and the file lacks, if any), Host, or no
// header name (header: alone, which is told it needs one). keyfunc.IP, which refuses such a name only once trusted
// proxies are declared, is asked with one, so that a file that declares
// none (or counts trusted_hops) is told of its name first rather than
// sent to trusted_proxies, with which it would still not load.
func headerSourceProblem(s, trust string) string {
	name := strings.TrimPrefix(s, "header:")
	if name == "" {
		return fmt.Sprintf("%q needs a header name: header:NAME", s)
	}
	if why := nameProblem("header", name); why != "" {
		return fmt.Sprintf("%q: %s", s, why)
	}
	// keyfunc.IP refuses these too, in its own words.
	switch h := http.CanonicalHeaderKey(name); h {
	case "X-Forwarded-For", "Forwarded":
		return fmt.Sprintf("%s is a list of hops, not one address; write ip_source: %s%s", s, strings.ToLower(h), trust)
	case "Host":
		// net/http moves it out of the header map: no request would
		// have a client address.
		return fmt.Sprintf("%s names the server the request is for, not the client; write the header your proxies set to the client's address (header:X-Real-IP), or x-forwarded-for or forwarded", s)
	}
	if _, err := keyfunc.IP(keyfunc.TrustedProxies(anyProxy), keyfunc.FromHeader(name)); err != nil {
		// A rule of keyfunc's that the cases above do not know yet.
		return fmt.Sprintf("%s is refused: %s", s, strings.TrimPrefix(err.Error(), "keyfunc: "))
	}
	return ""
}

// anyProxy is a trusted proxy for headerSourceProblem to check a header
// name with: keyfunc.IP judges the name alone once any is declared.
var anyProxy = netip.MustParsePrefix("192.0.2.1/32")

func (d *decoder) policies(n *cnode) []*rawPolicy {
	if n.kind != seqNode {
		d.fail(n, "policies", "must be a list of policies, not %s", n.describe())
		return nil
	}
	if len(n.vals) == 0 {
		d.fail(n, "policies", "is empty; a configuration needs at least one policy")
		return nil
	}
	if len(n.vals) > MaxPolicies {
		d.fail(n, "policies", "holds %d policies; at most %d", len(n.vals), MaxPolicies)
		return nil
	}
	var out []*rawPolicy
	for i, v := range n.vals {
		if rp := d.policy(v, fmt.Sprintf("policies[%d]", i)); rp != nil {
			out = append(out, rp)
		}
	}
	return out
}

func (d *decoder) policy(n *cnode, path string) *rawPolicy {
	rp := &rawPolicy{node: n, path: path, nodes: map[string]*cnode{}, items: map[string][]stringItem{}, bad: map[string]bool{}}
	def := &rp.def
	def.Line, def.Column = n.pos.line, n.pos.col
	def.Spec.Algorithm = DefaultAlgorithm
	def.Key = [][]string{{"ip"}}
	bad := len(d.errs)
	ok := d.fields(n, path, policyFields, func(name string, k, v *cnode) {
		rp.nodes[name] = v
		before := len(d.errs)
		defer func() { rp.bad[name] = rp.bad[name] || len(d.errs) > before }()
		field := path + "." + name
		switch name {
		case "name":
			if s, ok := d.str(v, field); ok && d.sameInYAML11(v, field) {
				def.Name = s
			}
		case "algorithm":
			if s, ok := d.str(v, field); ok {
				def.Spec.Algorithm = algorithms.Kind(s)
			}
		case "limit":
			def.Spec.Limit, _ = d.integer(v, field)
		case "window":
			def.Spec.Window, _ = d.duration(v, field)
		case "burst":
			def.Spec.Burst, _ = d.integer(v, field)
		case "buckets":
			if b, ok := d.integer(v, field); ok {
				if b > algorithms.MaxBuckets || b < 0 {
					d.fail(v, field, "must be between 1 and %d, got %d", algorithms.MaxBuckets, b)
				}
				def.Spec.Buckets = int(b)
			}
		case "max_delay":
			def.Spec.MaxDelay, _ = d.duration(v, field)
		case "key":
			if parts, ok := d.keyParts(v, field); ok {
				def.Key[0] = parts
			}
		case "fallback":
			def.Key = append(def.Key[:1], d.fallback(v, field)...)
		case "on_missing_key":
			if s, ok := d.enum(v, field, []string{"reject_400", "reject_403", "skip"}); ok {
				def.OnMissingKey = map[string]KeyAction{"reject_400": RejectBadRequest, "reject_403": RejectForbidden, "skip": SkipPolicy}[s]
			}
		case "count":
			if s, ok := d.enum(v, field, []string{"all", "failed", "succeeded"}); ok {
				def.Count = s
			}
		case "methods":
			def.Methods, rp.items[name] = d.stringItems(v, field)
			for _, it := range rp.items[name] {
				d.sameInYAML11(it.node, it.field)
			}
		case "routes":
			def.Routes, rp.items[name] = d.stringItems(v, field)
		}
	})
	if !ok {
		return nil
	}
	for _, k := range n.keys {
		rp.unknown = rp.unknown || !containsStr(policyFields, k.text)
	}
	for _, req := range []string{"name", "limit", "window"} {
		if rp.nodes[req] == nil {
			d.fail(n, path+"."+req, "is missing")
			rp.bad[req] = true
		}
	}
	rp.broken = len(d.errs) > bad
	return rp
}

// build makes the Policy of rp, reporting policy.New's complaints at the
// field they name. It reports every problem of rp that does not depend on
// another one reported (see specProblems), and returns nil when rp has
// any, also one reported before (rp.broken).
func (d *decoder) build(rp *rawPolicy, ip keyfunc.Func) *Policy {
	def := &rp.def
	ok := !rp.broken
	if ip == nil {
		// The ip settings were refused, and that is reported, so the
		// Config will not be returned: a stand-in lets the policy's own
		// problems be reported too.
		ip = keyfunc.Global()
	}
	if !rp.bad["name"] {
		if err := validName(def.Name); err != nil {
			d.fail(rp.nodeOr("name"), rp.path+".name", "%s", err)
			ok = false
		}
	}
	key, field, err := keyFunc(def.Key, ip)
	if err != nil {
		d.fail(rp.nodeOr(field), rp.path+"."+field, "%s", strings.TrimPrefix(err.Error(), "keyfunc: "))
		ok = false
	} else {
		if !d.checkFallbacks(rp) {
			ok = false
		}
		if !d.checkKeyAction(rp) {
			ok = false
		}
	}
	opts := []Option{OnKeyError(def.OnMissingKey)}
	if len(def.Key) > 1 && slices.ContainsFunc(def.Key, hasRoute) {
		opts = append(opts, routeBehindFallback())
	}
	switch def.Count {
	case "failed":
		opts = append(opts, CountIf(CountFailed))
	case "succeeded":
		opts = append(opts, CountIf(CountSucceeded))
	}
	if !d.checkRouteItems(rp) {
		ok = false
	}
	if !d.specProblems(rp) {
		ok = false
	}
	if !ok {
		return nil
	}
	if rp.nodes["methods"] != nil {
		opts = append(opts, WithMethods(def.Methods...))
	}
	if rp.nodes["routes"] != nil {
		opts = append(opts, WithRoutes(def.Routes...))
	}
	p, err := New(def.Name, def.Spec, key, opts...)
	if err != nil {
		var pe *Error
		if !errors.As(err, &pe) {
			d.fail(rp.node, rp.path, "%v", err)
			return nil
		}
		name := specField(pe.Field)
		d.fail(rp.nodeOr(name), rp.path+"."+name, "%s", fileWords(pe.Reason))
		return nil
	}
	return p
}

// specProblems reports the problems of rp's Spec, every one that can be
// judged (see specErrors), and reports whether there were none. A field
// whose value was reported already (rp.bad) is not reported again, and
// nothing is judged against it. Burst, buckets and max_delay are judged
// only when the algorithm is known: not when it is refused, nor when the
// entry has an unknown field and no algorithm, which may be a misspelt
// one.
func (d *decoder) specProblems(rp *rawPolicy) bool {
	errs := specErrors(rp.def.Spec, specRefused{
		limit:     rp.bad["limit"],
		window:    rp.bad["window"],
		buckets:   rp.bad["buckets"],
		algorithm: rp.bad["algorithm"] || rp.unknown && rp.nodes["algorithm"] == nil,
	})
	for _, err := range errs {
		var se *algorithms.SpecError
		if !errors.As(err, &se) {
			d.fail(rp.node, rp.path, "%v", err)
			continue
		}
		name := specField("Spec." + se.Field)
		reason := fileWords(se.Reason)
		if se.Field == "Algorithm" && se.Spec.Algorithm != "" {
			reason += didYouMean(string(se.Spec.Algorithm), kindNames())
		}
		d.fail(rp.nodeOr(name), rp.path+"."+name, "%s", reason)
	}
	return len(errs) == 0
}

// hasRoute reports whether the parts of a key hold the route part.
func hasRoute(parts []string) bool { return slices.Contains(parts, "route") }

// checkRouteItems reports each entry of rp's methods and routes that
// [WithMethods] or [WithRoutes] refuses, and each route on a method the
// methods exclude, at the entry itself, and each of the two lists that is
// empty (New would name the first problem only, at the list, and only
// once the policy has no other); it reports whether there were none.
func (d *decoder) checkRouteItems(rp *rawPolicy) bool {
	ok := true
	empty := func(name string) {
		if n := rp.nodes[name]; n != nil && n.kind == seqNode && len(n.vals) == 0 {
			d.fail(n, rp.path+"."+name, "is empty")
			ok = false
		}
	}
	empty("methods")
	check := func(name string, i int, err error) {
		if err == nil {
			return
		}
		reason := err.Error()
		var pe *Error
		if errors.As(err, &pe) {
			reason = fileWords(pe.Reason)
		}
		if name == "routes" {
			reason += routeListHint(rp.def.Routes[i])
		}
		d.fail(rp.items[name][i].node, rp.path+"."+name, "%s", reason)
		ok = false
	}
	// repeat reports entry i of the list name, the same as entry j.
	repeat := func(name, what string, i, j int, as string) {
		it := rp.items[name]
		d.fail(it[i].node, it[i].field, "repeats %s (%q): a %s listed twice adds nothing", it[j].field[len(rp.path)+1:], as, what)
		ok = false
	}
	methodAt := map[string]int{} // the first entry of each valid method
	for i, m := range rp.def.Methods {
		err := WithMethods(m)(&Policy{name: rp.def.Name})
		check("methods", i, err)
		if j, seen := methodAt[m]; err == nil && seen {
			repeat("methods", "method", i, j, m)
		} else if err == nil {
			methodAt[m] = i
		}
	}
	methodsOK := ok
	empty("routes")
	routeAt := map[route]int{} // the first entry of each valid route, as the routers read it
	for i, rt := range rp.def.Routes {
		p := &Policy{name: rp.def.Name}
		err := WithRoutes(rt)(p)
		if err == nil {
			if j, seen := routeAt[p.routes[0]]; seen {
				repeat("routes", "route", i, j, rp.def.Routes[j])
			} else {
				routeAt[p.routes[0]] = i
			}
		}
		if err == nil && methodsOK && len(rp.def.Methods) > 0 {
			p.methods = rp.def.Methods
			err = p.checkRouteMethods()
		}
		check("routes", i, err)
	}
	return ok
}

// routeListHint returns "; write several routes as a list: [...]" when
// pattern, refused, is routes joined by commas into one string, each of
// which loads alone ("/a, /b" for ["/a", "/b"]), or "".
func routeListHint(pattern string) string {
	pieces := strings.Split(pattern, ",")
	if len(pieces) < 2 {
		return ""
	}
	for i, p := range pieces {
		pieces[i] = strings.TrimSpace(p)
		if pieces[i] == "" || WithRoutes(pieces[i])(&Policy{}) != nil {
			return ""
		}
	}
	return "; write several routes as a list: [" + quoteList(pieces, "") + "]"
}

// checkHeadShadows reports each route on GET of a policy whose methods
// name HEAD but not GET, a route that covers HEAD requests only (see
// WithRoutes), when another policy of the file has a route on HEAD for
// the same path: in the Set the file makes, that one takes every HEAD
// request to the path (Set.Match; whatever its methods, since a route on
// HEAD needs them to admit HEAD, and a policy of a file has no other
// condition), and the route never applies. Routes and methods refused
// already are left out.
func (d *decoder) checkHeadShadows(raws []*rawPolicy) {
	type headRoute struct {
		rp      *rawPolicy
		pattern string
	}
	heads := map[string]headRoute{} // the first HEAD route on each path
	parsed := make([][]route, len(raws))
	for i, rp := range raws {
		if rp.bad["methods"] || rp.bad["routes"] || len(rp.def.Methods) > 0 && WithMethods(rp.def.Methods...)(&Policy{}) != nil {
			continue
		}
		for _, pat := range rp.def.Routes {
			p := &Policy{}
			if WithRoutes(pat)(p) != nil {
				parsed[i] = append(parsed[i], route{}) // keeps the indexes of rp.items
				continue
			}
			rt := p.routes[0]
			parsed[i] = append(parsed[i], rt)
			// A route on HEAD: "HEAD /x" (where the methods let HEAD or GET
			// through), or "/x" under methods naming HEAD (Policy.onHead).
			if rt.method == http.MethodHead && (len(rp.def.Methods) == 0 ||
				containsStr(rp.def.Methods, http.MethodHead) || containsStr(rp.def.Methods, http.MethodGet)) ||
				rt.method == "" && containsStr(rp.def.Methods, http.MethodHead) {
				if _, seen := heads[rt.path]; !seen {
					heads[rt.path] = headRoute{rp, pat}
				}
			}
		}
	}
	for i, rp := range raws {
		m := rp.def.Methods
		if len(parsed[i]) == 0 || !containsStr(m, http.MethodHead) || containsStr(m, http.MethodGet) {
			continue
		}
		for j, rt := range parsed[i] {
			h, found := heads[rt.path]
			own := slices.Contains(parsed[i], route{method: http.MethodHead, path: rt.path, chiPath: rt.chiPath}) ||
				slices.Contains(parsed[i], route{path: rt.path, chiPath: rt.chiPath}) // on HEAD under m
			if rt.method != http.MethodGet || !found || h.rp == rp || own {
				continue
			}
			d.fail(rp.items["routes"][j].node, rp.path+".routes", "%q covers only HEAD requests under methods %q, and %s's route %q takes every HEAD request to %s: the policy would never apply there",
				rp.def.Routes[j], m, h.rp.path, h.pattern, rt.path)
		}
	}
}

func (rp *rawPolicy) nodeOr(name string) *cnode {
	if n := rp.nodes[name]; n != nil {
		return n
	}
	return rp.node
}

// goNames rewrites the Go names of a policy's settings that the reasons
// of algorithms.SpecError and *Error use (Limit, Window, Methods) into
// the file's (TestConfigPolicyErrorsSpeakConfig finds any other).
var goNames = strings.NewReplacer(
	"(or 0 for Limit)", "(or 0 for the limit)",
	"does not divide Window ", "does not divide the window ",
	", which Methods ", ", which methods ",
)

// fileWords returns reason, a reason of algorithms.SpecError or *Error,
// in the file's words (see goNames).
func fileWords(reason string) string { return goNames.Replace(reason) }

// specField maps a field of *Error to the file's field name.
func specField(field string) string {
	switch field {
	case "Spec.Algorithm":
		return "algorithm"
	case "Spec.Limit":
		return "limit"
	case "Spec.Window":
		return "window"
	case "Spec.Burst":
		return "burst"
	case "Spec.Buckets":
		return "buckets"
	case "Spec.MaxDelay":
		return "max_delay"
	case "Methods":
		return "methods"
	case "Routes":
		return "routes"
	case "Name":
		return "name"
	}
	return strings.ToLower(field)
}

func (d *decoder) str(n *cnode, field string) (string, bool) {
	if n.kind == mapNode && len(n.keys) == 1 && n.vals[0].kind == scalarNode &&
		(n.keys[0].text == "header" || n.keys[0].text == "cookie") {
		// A key part "header: X" in any YAML, and "header:X" inside a
		// policy written as a {...} mapping, read as a one-entry mapping:
		// say how to write the string meant.
		k, v := n.keys[0].text, n.vals[0].text
		d.fail(n, field, "must be a string, not a mapping (%s: %s); write %q, quoted", errtext.Cut(k), errtext.Cut(v), k+":"+v)
		return "", false
	}
	if n.kind != scalarNode || n.tag != strTag {
		d.fail(n, field, "must be a string, not %s", n.describe())
		return "", false
	}
	if n.halfPair != "" {
		d.fail(n, field, "the escape %s writes half of a UTF-16 surrogate pair alone, which is no character (a byte that was not text, perhaps): write the character itself", n.halfPair)
		return "", false
	}
	return n.text, true
}

func (d *decoder) enum(n *cnode, field string, allowed []string) (string, bool) {
	s, ok := d.str(n, field)
	if !ok {
		return "", false
	}
	if !containsStr(allowed, s) {
		d.fail(n, field, "unknown value %q; want one of %s%s", s, strings.Join(allowed, ", "), didYouMean(s, allowed))
		return "", false
	}
	return s, true
}

func (d *decoder) integer(n *cnode, field string) (int64, bool) {
	if n.kind == scalarNode && n.tag == floatTag {
		// "not a number" would read oddly of 1.5: say what is wrong with it.
		d.fail(n, field, "must be an integer, not a number with a fraction or an exponent (%s)", n.text)
		return 0, false
	}
	if n.kind != scalarNode || n.tag != intTag {
		d.fail(n, field, "must be an integer, not %s", n.describe())
		return 0, false
	}
	if strayUnderscore(n.text) {
		// YAML 1.1 readers drop every underscore (10_ is 10), others
		// read a string; an underscore that groups no digits is most
		// likely a slip (10_ for 10_000).
		d.fail(n, field, "%s has an underscore that separates no two digits, which YAML 1.1 readers drop (%s) and others read as a string: write %s, or the digits meant (an underscore may group digits, as 1_000)",
			n.text, strings.ReplaceAll(n.text, "_", ""), strings.ReplaceAll(n.text, "_", ""))
		return 0, false
	}
	text := strings.ReplaceAll(n.text, "_", "")
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		d.fail(n, field, "must be a decimal integer that fits in 64 bits, got %s", n.text)
		return 0, false
	}
	if digits := strings.TrimLeft(text, "+-"); len(digits) > 1 && digits[0] == '0' {
		// YAML 1.1 reads it as octal (the parser too: 017 is 15), YAML
		// 1.2 as decimal, and 08 is a string to some: refused rather
		// than read one way silently.
		dec := strconv.FormatInt(v, 10)
		if o, err := strconv.ParseInt(text, 8, 64); err == nil {
			oct := strconv.FormatInt(o, 10)
			d.fail(n, field, "%s has a leading zero, which YAML readers take for octal (%s) or decimal (%s); write %s, or %s", n.text, oct, dec, dec, oct)
		} else {
			d.fail(n, field, "%s has a leading zero, which YAML readers take for a string or decimal (%s); write %s", n.text, dec, dec)
		}
		return 0, false
	}
	return v, true
}

// strayUnderscore reports whether s, an integer as written, holds an
// underscore that is not between two digits ("10_", "1__0", "_1").
func strayUnderscore(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '_' && (i == 0 || i == len(s)-1 || !isDigit(s[i-1]) || !isDigit(s[i+1])) {
			return true
		}
	}
	return false
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// yaml11Bools are the plain scalars YAML 1.1 reads as booleans, with
// their value; YAML 1.2, this loader's, reads them as strings (its
// booleans, true and false, are booleans to both).
var yaml11Bools = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "on": true, "On": true, "ON": true,
	"n": false, "N": false, "no": false, "No": false, "NO": false, "off": false, "Off": false, "OFF": false,
}

// yaml11Date matches the plain scalars YAML 1.1 reads as dates (its
// timestamp type, date alone: the forms with a time hold a ':', which
// no value read as a name or a method holds).
var yaml11Date = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// yaml11Sexagesimal matches the plain scalars YAML 1.1 reads as numbers
// in base 60 (its int and float types: 1:30 is 90, 1:30.5 is 90.5), which
// an IPv6 address written out in decimal groups is (1:2:3:4:5:6:7:8).
var yaml11Sexagesimal = regexp.MustCompile(`^[-+]?([1-9][0-9_]*(:[0-5]?[0-9])+|[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*)$`)

// yaml11Reading returns what YAML 1.1 readers read n, a plain string
// scalar, as, when it is not that string ("the boolean false"), or "".
func yaml11Reading(n *cnode) string {
	if !n.plain || n.tag != strTag {
		return ""
	}
	if b, ok := yaml11Bools[n.text]; ok {
		return fmt.Sprintf("the boolean %t", b)
	}
	if yaml11Date.MatchString(n.text) {
		return "a date"
	}
	if yaml11Sexagesimal.MatchString(n.text) {
		return "a number in base 60"
	}
	return ""
}

// sameInYAML11 reports whether n, a string the loader takes as it is (a
// policy's name, a method, a trusted proxy), is that string to YAML 1.1
// readers too, and
// reports it at field when it is not: name: no is the string "no" to
// this loader and false to PyYAML, go-yaml v2 and the tools built on them
// (a linter, a template, a Kubernetes manifest's tooling), which would
// see another file. Quoted, it is the string to every reader.
func (d *decoder) sameInYAML11(n *cnode, field string) bool {
	r := yaml11Reading(n)
	if r == "" {
		return true
	}
	d.fail(n, field, "%s is %s to YAML 1.1 readers and a string to this one: quote it, %q, to mean the string", n.text, r, n.text)
	return false
}

// duration parses a Go duration ("1s", "1m30s", "24h") or whole days
// ("1d"), exactly. A bare number is refused: its unit would be a guess;
// so is a fraction of a nanosecond, which time.ParseDuration drops.
func (d *decoder) duration(n *cnode, field string) (time.Duration, bool) {
	if n.kind == scalarNode && (n.tag == intTag || n.tag == floatTag) {
		d.fail(n, field, "%s has no unit; write it as 1s, 500ms, 1m or 24h", n.text)
		return 0, false
	}
	s, ok := d.str(n, field)
	if !ok {
		return 0, false
	}
	const day = 24 * time.Hour
	if days, found := strings.CutSuffix(s, "d"); found && days != "" && strings.Trim(days, "+-0123456789") == "" {
		k, err := strconv.ParseInt(days, 10, 64)
		if err == nil && k >= -int64(math.MaxInt64/day) && k <= int64(math.MaxInt64/day) {
			return time.Duration(k) * day, true
		}
		if err == nil || errors.Is(err, strconv.ErrRange) {
			d.fail(n, field, "%q is out of range: a duration is at most %s", s, time.Duration(math.MaxInt64))
			return 0, false
		}
	}
	if _, err := time.ParseDuration(s); err != nil {
		if durationSyntax(s) {
			// Written as a duration, too long for one.
			d.fail(n, field, "%q is out of range: a duration is at most %s", s, time.Duration(math.MaxInt64))
			return 0, false
		}
		hint := ""
		if w := spelledDuration(s); w != "" {
			hint = "; write " + w
		} else if strings.Contains(s, "d") {
			// Days, which Go's durations lack, are read whole and alone.
			hint = " (days only whole and alone, as 1d: write 36h for a day and a half)"
		}
		d.fail(n, field, "%q is not a duration such as 1s, 500ms, 1m or 24h%s", s, hint)
		return 0, false
	}
	// ParseDuration drops a fraction of a nanosecond and may miss by one
	// nanosecond: the value is computed exactly.
	t, whole, inRange := exactDuration(s)
	if !whole {
		d.fail(n, field, "%q has a fraction below a nanosecond, which a duration cannot hold", s)
		return 0, false
	}
	if !inRange {
		d.fail(n, field, "%q is out of range: a duration is at most %s", s, time.Duration(math.MaxInt64))
		return 0, false
	}
	return t, true
}

// spelledUnits maps the units a duration may spell out, in lower case,
// to the loader's. A lone m or M is not among them: written 1M, it may
// mean a month.
var spelledUnits = map[string]string{
	"ms": "ms", "msec": "ms", "msecs": "ms", "millisecond": "ms", "milliseconds": "ms",
	"s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
	"min": "m", "mins": "m", "minute": "m", "minutes": "m",
	"h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
	"d": "d", "day": "d", "days": "d",
}

// spelledDuration returns s, a number and a unit that the loader does not
// read ("60 seconds", "1min", "2 Hours", "1 s"), written as it reads
// them ("60s", "1m", "2h", "1s"), or "" when s is no such thing or the
// result would not load either (days are read whole).
func spelledDuration(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i <= 0 {
		return ""
	}
	unit, ok := spelledUnits[strings.ToLower(strings.TrimLeft(s[i:], " "))]
	if !ok {
		return ""
	}
	w := s[:i] + unit
	if unit == "d" {
		if _, err := strconv.ParseUint(s[:i], 10, 32); err != nil {
			return ""
		}
	} else if _, err := time.ParseDuration(w); err != nil {
		return ""
	}
	return w
}

// durationSyntax reports whether s is written as time.ParseDuration reads
// a duration: an optional sign, then numbers (digits, a decimal point
// allowed), each followed by a unit.
func durationSyntax(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for s != "" {
		i, digits := 0, 0
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
			if s[i] != '.' {
				digits++
			}
			i++
		}
		if digits == 0 || strings.Count(s[:i], ".") > 1 {
			return false
		}
		s = s[i:]
		unit := ""
		for _, u := range []string{"ns", "us", "µs", "μs", "ms", "s", "m", "h"} {
			if strings.HasPrefix(s, u) {
				unit = u
				break
			}
		}
		if unit == "" {
			return false
		}
		s = s[len(unit):]
	}
	return true
}

// A stringItem is one string of a list, with where it is: its node and its
// field path (the list's, with the index when n is a list).
type stringItem struct {
	node  *cnode
	field string
}

// nat64Prefixes reads nat64_prefixes, the network-specific prefixes of
// NAT64 translators (keyfunc.NAT64Prefixes), reporting each entry
// keyfunc.IP would refuse at the entry, and each entry overlapping an
// earlier one at the later entry, both named by their places in the
// file.
func (d *decoder) nat64Prefixes(n *cnode, field string) []netip.Prefix {
	if n.kind == seqNode && len(n.vals) == 0 {
		d.fail(n, field, "is empty; list the translators' prefixes (64:ff9b:1::/48), or leave nat64_prefixes out")
		return nil
	}
	list, items := d.stringItems(n, field)
	out := make([]netip.Prefix, 0, len(list))
	at := make([]stringItem, 0, len(list)) // at[k] locates out[k]
	for i, s := range list {
		item := items[i]
		p, err := netip.ParsePrefix(s)
		if err != nil {
			d.fail(item.node, item.field, "%q is not an IPv6 prefix (64:ff9b:1::/48)", s)
			continue
		}
		if _, err := keyfunc.IP(keyfunc.NAT64Prefixes(p)); err != nil {
			// keyfunc's reason, of the entry alone ("prefix 0, P, is not
			// 32, 40, 48, 56, 64 or 96 bits long (RFC 6052)").
			why := strings.TrimPrefix(err.Error(), "keyfunc: IP: NAT64Prefixes: ")
			why = strings.TrimPrefix(why, fmt.Sprintf("prefix 0, %s, ", p))
			d.fail(item.node, item.field, "%q %s", s, why)
			continue
		}
		// Two entries each valid alone that keyfunc.IP refuses together
		// overlap (keyfunc's rule; its message would name them by their
		// places in out, not in the file).
		for k, q := range out {
			if _, err := keyfunc.IP(keyfunc.NAT64Prefixes(q, p)); err != nil {
				d.fail(item.node, item.field, "%q overlaps %s, %q: which one embeds the address would be ambiguous", s, at[k].field, q)
			}
		}
		out = append(out, p)
		at = append(at, item)
	}
	return out
}

// stringItems reads one string or a list of strings, reporting entries
// that are not strings; items[i] locates out[i] (the entries that are
// strings keep their own index and position).
func (d *decoder) stringItems(n *cnode, field string) (out []string, items []stringItem) {
	if n.kind == scalarNode && n.tag == strTag {
		s, ok := d.str(n, field)
		if !ok {
			return nil, nil
		}
		return []string{s}, []stringItem{{n, field}}
	}
	if n.kind != seqNode {
		d.fail(n, field, "must be a list of strings, not %s", n.describe())
		return nil, nil
	}
	out = make([]string, 0, len(n.vals))
	items = make([]stringItem, 0, len(n.vals))
	for i, v := range n.vals {
		f := fmt.Sprintf("%s[%d]", field, i)
		if s, ok := d.str(v, f); ok {
			out = append(out, s)
			items = append(items, stringItem{v, f})
		}
	}
	return out, items
}

func (d *decoder) prefixes(n *cnode, field string) []netip.Prefix {
	list, items := d.stringItems(n, field)
	out := make([]netip.Prefix, 0, len(list))
	for i, s := range list {
		item := items[i]
		if !d.sameInYAML11(item.node, item.field) {
			continue // an address written out, 1:2:3:4:5:6:7:8, a number to YAML 1.1
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				d.fail(item.node, item.field, "%q is neither a CIDR prefix (10.0.0.0/8) nor an address", s)
				continue
			}
			if a.Zone() != "" {
				// PrefixFrom would drop it, trusting the address on
				// every interface; prefixes cannot hold one.
				d.fail(item.node, item.field, "%q has a zone", s)
				continue
			}
			p = netip.PrefixFrom(a, a.BitLen())
		} else if m := p.Masked(); m != p {
			// "10.0.0.5/16", an interface's address as `ip addr` shows
			// it: the proxy, or its network? Masked, it would trust the
			// whole network to name clients, silently.
			d.fail(item.node, item.field, "%q has bits set past its /%d, trusting the whole network %s; write %s for the proxy alone, or %s for its network",
				s, p.Bits(), m, p.Addr(), m)
			continue
		}
		if why := noPeer(keyfunc.NormalizePrefix(p)); why != "" {
			// Trusting no proxy, silently: every client behind the one
			// meant would share its address's allowance.
			d.fail(item.node, item.field, "%q is %s, which no peer connects from: it would trust no proxy; list the proxies' own addresses or prefixes", s, why)
			continue
		}
		if keyfunc.NormalizePrefix(p).Bits() == 0 {
			// keyfunc.IP refuses it too; said here of the entry.
			d.fail(item.node, item.field, "%q trusts every address as a proxy, so a client could name any other address; list the proxies' own prefixes, or count them with trusted_hops", s)
			continue
		}
		out = append(out, p.Masked())
	}
	return out
}

// noPeer returns what p, a normalized trusted_proxies entry, is when no
// peer connects from it: the unspecified address alone (0.0.0.0, ::), a
// likely spelling of "any"; or "". (A list of prefixes may hold others no
// peer connects from, multicast ones, as part of a wider range.)
func noPeer(p netip.Prefix) string {
	if p.Addr().IsUnspecified() && p.Bits() == p.Addr().BitLen() {
		return `the unspecified address ("any" where a server listens)`
	}
	return ""
}

// coverage reports each address family every address of which the
// trusted_proxies entries ps, each already accepted alone, hold together
// (0.0.0.0/1 and 128.0.0.0/1; every /8): every peer of that family would
// be a proxy, as with 0.0.0.0/0. keyfunc.IP refuses such prefixes with a
// *keyfunc.TrustAllError naming the families; any other error it gives (an
// entry that holds a family alone was refused before) is reported as it is.
func (d *decoder) coverage(n *cnode, field string, ps []netip.Prefix) {
	if len(ps) == 0 {
		return
	}
	_, err := keyfunc.IP(keyfunc.TrustedProxies(ps...))
	if err == nil {
		return
	}
	var te *keyfunc.TrustAllError
	if !errors.As(err, &te) || te.Index >= 0 {
		// Not reached: each entry was judged alone (prefixes).
		d.fail(n, field, "%v is refused: %s", ps, strings.TrimPrefix(err.Error(), "keyfunc: "))
		return
	}
	for _, fam := range te.Families {
		d.fail(n, field, "the entries together hold every %s address, so every %s peer is trusted as a proxy and a client could name any other address; list the proxies' own prefixes, or count them with trusted_hops", fam, fam)
	}
}

// sortedErrors returns the problems d found in the file's order (by line
// and column; one without a position after those with one, in the order
// found), the first maxConfigErrors of them, and then, when there are
// more, an entry saying there are too many.
func (d *decoder) sortedErrors() []error {
	pos := func(e error) (line, col int) {
		if ce, ok := e.(*ConfigError); ok && ce.Line > 0 {
			return ce.Line, ce.Column
		}
		return math.MaxInt, 0
	}
	slices.SortStableFunc(d.errs, func(a, b error) int {
		la, ca := pos(a)
		lb, cb := pos(b)
		if la != lb {
			return cmp.Compare(la, lb)
		}
		return cmp.Compare(ca, cb)
	})
	if len(d.errs) > maxConfigErrors {
		d.errs = append(d.errs[:maxConfigErrors], &ConfigError{File: d.file, Reason: "too many errors", stop: true})
	}
	return d.errs
}
