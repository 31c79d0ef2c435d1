package policy

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// keyPart names every key part the loader knows; header: and cookie: take
// a name.
var keyPartNames = []string{"ip", "user", "route", "method", "global", "header:NAME", "cookie:NAME"}

// keyParts reads a key: one part or a list of parts joined.
func (d *decoder) keyParts(n *cnode, field string) ([]string, bool) {
	parts, items := d.stringItems(n, field)
	if len(parts) == 0 {
		if n.kind == seqNode && len(n.vals) == 0 {
			d.fail(n, field, "is empty; want one of %s, or a list of them", strings.Join(keyPartNames, ", "))
		}
		return nil, false
	}
	ok := true
	for i, p := range parts {
		if _, err := keyPart(p, keyfunc.Global()); err != nil {
			d.fail(items[i].node, field, "%s", strings.TrimPrefix(err.Error(), "keyfunc: "))
			ok = false
			continue
		}
		if j := slices.IndexFunc(parts[:i], samePart(p)); j >= 0 {
			// Harmless, but most likely a slip for another part.
			short := items[j].field[strings.LastIndexByte(field, '.')+1:]
			d.fail(items[i].node, items[i].field, "repeats %s (%s): a part read twice adds nothing to the key", short, parts[j])
			ok = false
		}
	}
	return parts, ok
}

// fallback reads the keys tried after the first: one part, a list of
// parts (each one key) or a list of lists (each a joined key).
func (d *decoder) fallback(n *cnode, field string) [][]string {
	if n.kind == scalarNode && n.tag == strTag {
		if parts, ok := d.keyParts(n, field); ok {
			return [][]string{parts}
		}
		return nil
	}
	if n.kind == seqNode && len(n.vals) == 0 {
		d.fail(n, field, "is empty; want a key part or a list of keys")
		return nil
	}
	if n.kind != seqNode {
		d.fail(n, field, "must be a key part or a non-empty list of keys, not %s", n.describe())
		return nil
	}
	var out [][]string
	for i, v := range n.vals {
		if parts, ok := d.keyParts(v, fmt.Sprintf("%s[%d]", field, i)); ok {
			out = append(out, parts)
		}
	}
	return out
}

// neverMissing are the key parts that find a key for every request
// (keyfunc.Global, keyfunc.Method).
var neverMissing = []string{"global", "method"}

// checkFallbacks reports each fallback of rp that is never used, and
// reports whether there was none. keyfunc.FirstOf tries a key only when
// the one before it is missing, and keyfunc.Join misses a key when one of
// its parts does; so a key never falls back when its parts all find a key
// (neverMissing), and a key that needs every part which may be missing
// from one tried before it is missing whenever that one is. A key whose
// only part that may be missing is a route never falls back either:
// keyfunc.FirstOf returns keyfunc.ErrNoRoute rather than fall back past
// it. Header parts are compared by their names' canonical form (see
// samePart).
func (d *decoder) checkFallbacks(rp *rawPolicy) bool {
	keys, fb := rp.def.Key, rp.nodes["fallback"]
	if len(keys) < 2 || fb == nil || rp.bad["key"] || rp.bad["fallback"] {
		return true // no fallback, or a problem reported already
	}
	// at returns the node and field of keys[i], a fallback (i >= 1).
	at := func(i int) (*cnode, string) {
		if fb.kind != seqNode {
			return fb, rp.path + ".fallback"
		}
		return fb.vals[i-1], fmt.Sprintf("%s.fallback[%d]", rp.path, i-1)
	}
	name := func(i int) string { return keyName(keys, i) }
	ok := true
	for i := 1; i < len(keys); i++ {
		for j := range i {
			var missable []string
			for _, p := range keys[j] {
				if !containsStr(neverMissing, p) && !slices.ContainsFunc(missable, samePart(p)) {
					missable = append(missable, p)
				}
			}
			if len(missable) == 0 || slices.Equal(missable, []string{"route"}) {
				// keys[j] always has a key, or misses only its route,
				// which keyfunc.FirstOf never falls back past (this is the
				// first i after it): none of the keys after it is tried.
				why := "finds a key for every request"
				if len(missable) > 0 {
					why = "misses a key only when the request has no route, and a missing route is never fallen back past (on_missing_key decides then)"
				}
				if j == 0 {
					d.fail(fb, rp.path+".fallback", "is never used: %s %s", name(0), why)
					return false
				}
				n, field := at(i)
				more := ""
				if i+1 < len(keys) {
					more = ", nor are the keys after it"
				}
				d.fail(n, field, "is never used%s: %s %s", more, name(j), why)
				return false
			}
			if !slices.ContainsFunc(missable, func(p string) bool { return !slices.ContainsFunc(keys[i], samePart(p)) }) {
				n, field := at(i)
				d.fail(n, field, "is never used: it needs %s too, so it is missing whenever %s is", andList(missable), name(j))
				ok = false
				break
			}
		}
	}
	return ok
}

// keyName names keys[i] of a Definition's Key in an error: "key user",
// "fallback[0] ip+user".
func keyName(keys [][]string, i int) string {
	if i == 0 {
		return "key " + strings.Join(keys[0], "+")
	}
	return fmt.Sprintf("fallback[%d] %s", i-1, strings.Join(keys[i], "+"))
}

// checkKeyAction reports rp's on_missing_key when no request is ever
// without a key, and reports whether it was not. The action decides when
// the key function fails: every key of keyfunc.FirstOf missing, or one
// missing its route part (keyfunc.ErrNoRoute, which FirstOf does not fall
// back past). So it is never used when a key whose parts are never
// missing (neverMissing) is reached through keys without a route part:
// those only ever fall back. When a fallback entry was refused, the
// fallbacks read may not be all the file means, and only the key is
// judged.
func (d *decoder) checkKeyAction(rp *rawPolicy) bool {
	n := rp.nodes["on_missing_key"]
	if n == nil || rp.bad["on_missing_key"] || rp.bad["key"] {
		return true
	}
	keys := rp.def.Key
	if rp.bad["fallback"] {
		keys = keys[:1]
	}
	for i, parts := range keys {
		if !slices.ContainsFunc(parts, func(p string) bool { return !containsStr(neverMissing, p) }) {
			d.fail(n, rp.path+".on_missing_key", "is never used: %s finds a key for every request", keyName(keys, i))
			return false
		}
		if hasRoute(parts) {
			return true
		}
	}
	return true
}

// samePart returns a function reporting whether a key part reads what p
// reads: the same part, or a header of the same name in another case
// (header names are case-insensitive; keyfunc.Header reads the canonical
// one). Cookie names are case-sensitive, as net/http matches them.
func samePart(p string) func(string) bool {
	name, isHeader := strings.CutPrefix(p, "header:")
	return func(q string) bool {
		if q == p {
			return true
		}
		other, ok := strings.CutPrefix(q, "header:")
		return isHeader && ok && http.CanonicalHeaderKey(name) == http.CanonicalHeaderKey(other)
	}
}

// andList writes words as "a", "a and b", "a, b and c".
func andList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// keyPart returns the keyfunc.Func of one part; ip is the configured
// client-address part.
func keyPart(part string, ip keyfunc.Func) (keyfunc.Func, error) {
	switch part {
	case "ip":
		return ip, nil
	case "user":
		return keyfunc.User(), nil
	case "route":
		return keyfunc.Route(), nil
	case "method":
		return keyfunc.Method(), nil
	case "global":
		return keyfunc.Global(), nil
	}
	kind, name, found := strings.Cut(part, ":")
	if found && name == "" && (kind == "header" || kind == "cookie") {
		return nil, fmt.Errorf("key part %q needs a %s name: %s:NAME", part, kind, kind)
	}
	if found && name != "" && (kind == "header" || kind == "cookie") {
		if why := nameProblem(kind, name); why != "" {
			return nil, fmt.Errorf("key part %q: %s", part, why)
		}
		var f keyfunc.Func
		var err error
		if kind == "header" {
			f, err = keyfunc.Header(name)
		} else {
			f, err = keyfunc.Cookie(name)
		}
		if err != nil {
			// nameProblem judges names as keyfunc does
			// (TestNameProblemAgreesWithKeyfunc): not reached.
			return nil, fmt.Errorf("key part %q is refused: %s", part, strings.TrimPrefix(err.Error(), "keyfunc: "))
		}
		return f, nil
	}
	known := append([]string(nil), keyPartNames...)
	sort.Strings(known)
	return nil, fmt.Errorf("unknown key part %q; want one of %s%s%s", part, strings.Join(known, ", "), suggestPart(part), listHint(part, ip))
}

// nameProblem returns why name is no header name (kind "header") or
// cookie name (kind "cookie"), naming its first character that a name
// may not hold, or "" when it is one: a token of RFC 9110, as
// keyfunc.Header, keyfunc.Cookie and keyfunc.FromHeader require, said in
// the file's words rather than in theirs.
func nameProblem(kind, name string) string {
	for _, r := range name {
		if r < utf8.RuneSelf && isToken(string(r)) {
			continue
		}
		return fmt.Sprintf("%q is not a %s name: it holds %s (a %s name is letters, digits and !#$%%&'*+-.^_`|~)",
			name, kind, strconv.QuoteRune(r), kind)
	}
	return ""
}

// listHint returns "; write several parts as a list: [a, b]" when part,
// unknown, is several known parts joined into one string by commas, plus
// signs or spaces (key: ip,user is the string "ip,user", where [ip, user]
// was meant), or "".
func listHint(part string, ip keyfunc.Func) string {
	pieces := strings.FieldsFunc(part, func(r rune) bool { return r == ',' || r == '+' || r == ' ' || r == '\t' })
	if len(pieces) < 2 {
		return ""
	}
	for _, p := range pieces {
		if _, err := keyPart(p, ip); err != nil {
			return ""
		}
	}
	return "; write several parts as a list: [" + strings.Join(pieces, ", ") + "]"
}

// suggestPart returns "; did you mean %q?" naming the key part that part,
// unknown, most likely misspells (see nearestField), or "": a part of its
// own (usr for user), or a header or cookie part whose kind is misspelt
// (headers:X-Api-Key), the name kept as written.
func suggestPart(part string) string {
	if kind, name, found := strings.Cut(part, ":"); found && name != "" {
		if near := nearestField(kind, []string{"header", "cookie"}); near != "" {
			return fmt.Sprintf("; did you mean %q?", near+":"+name)
		}
		return ""
	}
	return didYouMean(part, []string{"ip", "user", "route", "method", "global"})
}

// keyFunc composes the keys of a Definition; on error it names the field
// at fault ("key" or "fallback").
func keyFunc(keys [][]string, ip keyfunc.Func) (keyfunc.Func, string, error) {
	alts := make([]keyfunc.Func, 0, len(keys))
	for i, parts := range keys {
		field := "key"
		if i > 0 {
			field = "fallback"
		}
		fs := make([]keyfunc.Func, 0, len(parts))
		for _, p := range parts {
			f, err := keyPart(p, ip)
			if err != nil {
				return nil, field, err
			}
			fs = append(fs, f)
		}
		f := fs[0]
		if len(fs) == 1 && clientChosen(parts[0]) {
			// A credential's part is a digest already (keyfunc.Header
			// and keyfunc.Cookie hash it): bounded keeps it as it is.
			f = bounded(f)
		} else if len(fs) > 1 {
			var err error
			if f, err = keyfunc.Join(fs...); err != nil {
				return nil, field, err
			}
		}
		alts = append(alts, f)
	}
	if len(alts) == 1 {
		return alts[0], "key", nil
	}
	f, err := keyfunc.FirstOf(alts...)
	return f, "fallback", err
}

// clientChosen reports whether a key part is a value the client picks at
// will and of any length (a header or a cookie).
func clientChosen(part string) bool {
	return strings.HasPrefix(part, "header:") || strings.HasPrefix(part, "cookie:")
}

// bounded returns a Func whose key is f's, bounded in length, for a key of
// one client-chosen part (keyfunc.Join bounds the parts of a list): a value
// of at most keyfunc.MaxKeyLen bytes of printable ASCII (spaces included,
// so that a User-Agent stays readable in replay reports) not starting with
// '#' is kept as it is; any other is written "#" and the first 16 bytes of
// its SHA-256 in unpadded base64url, as keyfunc.Secret does. Kept values
// never start with '#', so no value a client sends meets another's digest.
func bounded(f keyfunc.Func) keyfunc.Func {
	return func(r *http.Request) (string, error) {
		v, err := f(r)
		if err != nil || !needsDigest(v) {
			return v, err
		}
		return digestKey(v), nil
	}
}

// digestKey returns v written "#" and the first 16 bytes of its SHA-256 in
// unpadded base64url (keyfunc.Secret's digest).
func digestKey(v string) string {
	sum := sha256.Sum256([]byte(v))
	return "#" + base64.RawURLEncoding.EncodeToString(sum[:16])
}

// needsDigest reports whether bounded writes v as a digest.
func needsDigest(v string) bool {
	if len(v) > keyfunc.MaxKeyLen || strings.HasPrefix(v, "#") {
		return true
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return true
		}
	}
	return false
}
