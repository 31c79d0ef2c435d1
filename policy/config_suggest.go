package policy

import (
	"fmt"
	"strings"

	"github.com/ratekeeper/ratekeeper/internal/editdist"
)

// nearestField returns the one field of known that name most likely
// misspells, or "" when none is clearly it. Names are compared with case
// ignored and '-' read as '_' (Window, max-delay). A name whose plural is
// a field (policy for policies) is taken for it, as the edits between the
// two forms may be more than the rule below allows. Otherwise the nearest
// must be within maxSuggestDistance(name) edits (a letter inserted,
// deleted, replaced, or two neighbours swapped), and no other field as
// near. Values of a fixed set are judged the same way (see didYouMean).
func nearestField(name string, known []string) string {
	n := foldField(name)
	if n != "" {
		for _, k := range known {
			if fk := foldField(k); fk == n+"s" || strings.HasSuffix(n, "y") && fk == n[:len(n)-1]+"ies" {
				return k
			}
		}
	}
	maxD := maxSuggestDistance(n)
	best, bestD, tie := "", maxD+1, false
	for _, k := range known {
		if len(n) > len(k)+maxD || len(k) > len(n)+maxD {
			continue // more edits apart than allowed: not worth the table
		}
		switch d := editdist.Distance(n, foldField(k)); {
		case d < bestD:
			best, bestD, tie = k, d, false
		case d == bestD:
			tie = true
		}
	}
	if tie {
		return ""
	}
	return best
}

// synonyms maps names that other rate limiters and their configuration
// files give the fields (folded, see foldField) to the loader's.
var synonyms = map[string]string{
	"period": "window", "interval": "window", "per": "window", "duration": "window", "time_window": "window",
	"rate": "limit", "requests": "limit", "max_requests": "limit", "quota": "limit",
	"capacity": "burst", "burst_size": "burst",
	"type": "algorithm", "strategy": "algorithm",
	"path": "routes", "paths": "routes", "patterns": "routes",
	"verbs":  "methods",
	"key_by": "key",
	"rules":  "policies", "limits": "policies",
	"proxies": "trusted_proxies",
	"hops":    "trusted_hops",
}

// synonym returns the field of known that name, unknown, names as other
// rate limiters do (period for window, capacity for burst), or "".
func synonym(name string, known []string) string {
	if f := synonyms[foldField(name)]; containsStr(known, f) {
		return f
	}
	return ""
}

// maxSuggestDistance is the most edits nearestField allows for a name of
// this length: one up to 7 bytes (limt, polices), then one per 4 bytes, at
// most 3 (trusted_proxy), so that a short name of its own (cost, algo) is
// not taken for a field it merely resembles.
func maxSuggestDistance(name string) int {
	return min(3, max(1, len(name)/4))
}

func foldField(s string) string {
	return strings.ReplaceAll(strings.ToLower(s), "-", "_")
}

// didYouMean returns "; did you mean %q?" naming the value of allowed that
// s most likely misspells (as nearestField finds a field), to end the
// message that refuses s, or "" when none is clearly it.
func didYouMean(s string, allowed []string) string {
	if near := nearestField(s, allowed); near != "" {
		return fmt.Sprintf("; did you mean %q?", near)
	}
	return ""
}

// suggestSource returns "; did you mean %q?" naming the ip_source that s,
// unknown, most likely misspells (see nearestField), or "": a source of
// its own (x_forwarded_for), header:NAME with its prefix misspelt
// (Header:X-Real-IP), the name kept as written, or header:NAME for a
// header name written alone (X-Real-IP, CF-Connecting-IP) that names an
// address by its words (ip, addr, client, forwarded).
func suggestSource(s string) string {
	if kind, name, found := strings.Cut(s, ":"); found && name != "" {
		if nearestField(kind, []string{"header"}) != "" {
			return fmt.Sprintf("; did you mean %q?", "header:"+name)
		}
		return ""
	}
	if near := didYouMean(s, []string{"x-forwarded-for", "forwarded"}); near != "" {
		return near
	}
	if isToken(s) && namesAnAddress(s) {
		return fmt.Sprintf("; did you mean %q?", "header:"+s)
	}
	return ""
}

// namesAnAddress reports whether the header name h has, among the words
// its '-' separate, one that says it carries a client's address:
// X-Real-IP, True-Client-IP, X-Client-Addr, X-Original-Forwarded-For (not
// remote_addr, a variable of nginx's, whose address is the peer's).
func namesAnAddress(h string) bool {
	for w := range strings.SplitSeq(strings.ToLower(h), "-") {
		switch w {
		case "ip", "addr", "address", "client", "forwarded":
			return true
		}
	}
	return false
}
