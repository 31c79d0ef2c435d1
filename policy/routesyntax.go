package policy

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// routePathError returns why path, the path of a route on method ("" for
// any), is not one a router can register as written, or "": it must be a
// Go 1.22 ServeMux path (see [muxPathError]) or a chi one (see
// [chiPathError]), and it must hold no blank nor control character
// outside a chi regexp's braces, nor a '?' or '#' there (a query or a
// fragment: the routers match a pattern against the path, which holds
// them only escaped, so that a policy on "/search?q=1" would never apply
// to a request for /search?q=1). Both routers take the first blank of
// "METHOD /path" for the end of the method: a path such as "/login POST"
// is refused by both as the method "/login", and one with a blank further
// on ("POST /login ", whose trailing space ServeMux keeps) names a route
// that is not the one meant (it matches only /login%20), so that the
// policy never applies to it. A path holding a space writes it %20.
// Nor may it hold, outside the braces, a character that prints as nothing
// or as a blank (a non-breaking or other Unicode space, a zero-width or
// other format character such as a direction override) or a typographic
// double quote: text pasted from a page or a chat brings them along, the
// route then looks right where it is printed ("/login\u200b" as /login)
// and matches no request a client sends for it.
func routePathError(method, path string) string {
	if reason := pastedRune(path); reason != "" {
		return reason
	}
	depth := 0
	for i := 0; i < len(path); i++ {
		switch c := path[i]; {
		case c == '{':
			depth++
		case c == '}' && depth > 0:
			depth--
		case depth == 0 && (c <= ' ' || c == 0x7f):
			return `holds a blank or a control character in its path (outside a chi regexp): ` +
				`the method goes first ("POST /login"), and a space in a path is written %20`
		case depth == 0 && (c == '?' || c == '#'):
			// Both routers register it, as a literal matched against
			// the path, which holds '?' and '#' only escaped.
			if c == '?' {
				return "holds a query: a route pattern matches the path alone, which holds a '?' only escaped (%3F); " + mend(method, path[:i])
			}
			return "holds a fragment: a client never sends one, and the path holds a '#' only escaped (%23); " + mend(method, path[:i])
		}
	}
	muxErr := muxPathError(method, path)
	if muxErr == "" {
		return ""
	}
	chiErr := chiPathError(path)
	if chiErr == "" {
		return ""
	}
	return "is neither a ServeMux pattern (" + muxErr + ") nor a chi one (" + chiErr + ")"
}

// joinRoute returns the route on method ("" for any) with path.
func joinRoute(method, path string) string {
	if method == "" {
		return path
	}
	return method + " " + path
}

// pathProblem returns why path, the path of a route on method ("" for
// any), is refused, to follow the route quoted (": the path must start
// with '/'", " names a host ...", " holds a query ..."), or "".
func pathProblem(method, path string) string {
	if !strings.HasPrefix(path, "/") {
		return notAPath(method, path)
	}
	if reason := routePathError(method, path); reason != "" {
		return " " + reason
	}
	return ""
}

// mend ends the reason a route is refused for one fault with the route
// that fault mended, on method with path: "write" it when it loads, or
// else say why it would still be refused (which mends the next fault in
// turn), so that the route an error tells to write always loads. Each
// fault mended is one fewer in path, so that the reasons end.
func mend(method, path string) string {
	if why := pathProblem(method, path); why != "" {
		return "and " + strconv.Quote(joinRoute(method, path)) + why
	}
	return "write " + strconv.Quote(joinRoute(method, path))
}

// muxPathError returns why path, on method, is not the path of a pattern
// http.ServeMux registers (Handle panics on it), or "". As ServeMux
// parses it: segments between '/', each a literal or, starting with '{'
// and ending with '}', a wildcard "{name}", "{name...}" (last only) or
// "{$}" (last only), names being distinct Go identifiers; and with a
// method other than CONNECT the path must be clean, since ServeMux cleans
// the request's (redirecting it) before it matches.
func muxPathError(method, path string) string {
	if method != "" && method != "CONNECT" && canonicalPath(path) != path {
		return "a path with . or .. or empty segments never matches, for requests are redirected to the cleaned path"
	}
	var names []string
	for rest := path; rest != ""; {
		rest = rest[1:] // rest starts with the '/' before a segment
		if rest == "" {
			break // a trailing slash
		}
		seg := rest
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			seg, rest = rest[:i], rest[i:]
		} else {
			rest = ""
		}
		if !strings.Contains(seg, "{") {
			continue // a literal
		}
		if seg[0] != '{' || seg[len(seg)-1] != '}' {
			return "a wildcard {name} must be a whole segment"
		}
		name := seg[1 : len(seg)-1]
		if name == "$" {
			if rest != "" {
				return "{$} must end the path"
			}
			break
		}
		name, multi := strings.CutSuffix(name, "...")
		if multi && rest != "" {
			return "{" + name + "...} must end the path"
		}
		if name == "" {
			return "a wildcard has no name"
		}
		if !goIdentifier(name) {
			return "the wildcard name " + strconv.Quote(name) + " is not a Go identifier"
		}
		if slices.Contains(names, name) {
			return "the wildcard name " + strconv.Quote(name) + " is used twice"
		}
		names = append(names, name)
	}
	return ""
}

// chiPathError returns why path is not a pattern chi's router registers
// (it panics on it), or "". As chi parses it: each '{' closed by its '}'
// (braces nest within, for a regexp's "{3}"), "{key}" or
// "{key:regexp}" with a regexp that compiles (anchored as chi anchors it)
// and keys distinct, and '*' only as the last character, but within
// braces.
func chiPathError(path string) string {
	var keys []string
	for rest := path; ; {
		open, star := strings.IndexByte(rest, '{'), strings.IndexByte(rest, '*')
		if open < 0 && star < 0 {
			return ""
		}
		if star >= 0 && (open < 0 || star < open) {
			if star != len(rest)-1 {
				return "'*' must end the path"
			}
			return ""
		}
		end, depth := -1, 0
		for i := open; i < len(rest) && end < 0; i++ {
			switch rest[i] {
			case '{':
				depth++
			case '}':
				depth--
				if depth == 0 {
					end = i
				}
			}
		}
		if end < 0 {
			return "a '{' is not closed"
		}
		key, re, isRegexp := strings.Cut(rest[open+1:end], ":")
		if isRegexp && re != "" {
			if !strings.HasPrefix(re, "^") {
				re = "^" + re
			}
			if !strings.HasSuffix(re, "$") {
				re += "$"
			}
			if _, err := regexp.Compile(re); err != nil {
				return "the regexp of {" + key + "} does not compile: " + err.Error()
			}
		}
		if slices.Contains(keys, key) {
			return "the key " + strconv.Quote(key) + " is used twice"
		}
		keys = append(keys, key)
		rest = rest[end+1:]
	}
}

// goIdentifier reports whether s is a Go identifier, as ServeMux requires
// of a wildcard's name.
func goIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !unicode.IsLetter(c) && c != '_' && (i == 0 || !unicode.IsDigit(c)) {
			return false
		}
	}
	return true
}

// pastedRune returns why path, outside a chi regexp's braces, holds a
// rune that routePathError refuses as pasted along with it (a Unicode
// space, a format character, a typographic double quote), or "".
func pastedRune(path string) string {
	depth := 0
	for _, r := range path {
		switch {
		case r == '{':
			depth++
		case r == '}' && depth > 0:
			depth--
		case depth > 0 || r < 0x80:
		case r == '\u201c' || r == '\u201d' || r == '\u201e' || r == '\u201f':
			return fmt.Sprintf("holds a typographic quote (%U) in its path: a route is written between straight quotes, or none", r)
		case unicode.Is(unicode.Zs, r) || unicode.Is(unicode.Cf, r):
			return fmt.Sprintf("holds %U in its path, which prints as nothing or as a blank (pasted along with the route?), so that the route would look right and match no request a client sends for it: write it without", r)
		}
	}
	return ""
}
