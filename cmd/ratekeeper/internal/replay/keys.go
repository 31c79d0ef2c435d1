package replay

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// displayKey makes a policy's key readable: it removes the policy's
// namespace, the index keyfunc.FirstOf puts before a fallback key, and the
// length prefixes keyfunc.Join puts before each part, so that
// "login:0:12:203.0.113.665:user1" reads "203.0.113.66 + user1" (and a
// fallback "(fallback 1) 203.0.113.66"). A part keyfunc.Join wrote as a
// digest that is one of routes (a ServeMux pattern with its method holds
// a space, which Join does not write as it is) reads as that route. Keys
// it cannot decode are shown as they are.
func displayKey(key, name string, alternatives int, joined []bool, routes map[string]string) string {
	key = strings.TrimPrefix(key, name+":")
	prefix := ""
	alt := 0
	if alternatives > 1 {
		i, rest, ok := strings.Cut(key, ":")
		n, err := strconv.Atoi(i)
		if !ok || err != nil || n < 0 || n >= alternatives {
			return key
		}
		alt, key = n, rest
		if n > 0 {
			prefix = "(fallback " + i + ") "
		}
	}
	if alt < len(joined) && joined[alt] {
		if parts, ok := splitJoined(key); ok {
			for i, p := range parts {
				if route, ok := routes[p]; ok {
					parts[i] = route
				}
			}
			key = strings.Join(parts, " + ")
		}
	}
	return prefix + key
}

// splitJoined decodes keyfunc.Join's encoding: each part is
// "<len>:<bytes>", or "#<hash>" for a hashed part (kept as is).
func splitJoined(key string) ([]string, bool) {
	var parts []string
	for key != "" {
		if key[0] == '#' {
			// A hashed part is '#' and a fixed-length base64url hash.
			if len(key) < 1+keyfunc.HashLen {
				return nil, false
			}
			parts = append(parts, key[:1+keyfunc.HashLen])
			key = key[1+keyfunc.HashLen:]
			continue
		}
		l, rest, ok := strings.Cut(key, ":")
		n, err := strconv.Atoi(l)
		if !ok || err != nil || n < 0 || n > len(rest) {
			return nil, false
		}
		parts = append(parts, rest[:n])
		key = rest[n:]
	}
	return parts, len(parts) > 0
}

// routeDigests returns the route patterns that keyfunc.Join writes as a
// digest (those with a method, holding a space), by their digest ("#"
// and keyfunc.HashLen characters), for displayKey.
func routeDigests(patterns []string) map[string]string {
	out := map[string]string{}
	for _, p := range patterns {
		if !strings.Contains(p, " ") {
			continue
		}
		d, err := keyfunc.Secret(func(*http.Request) (string, error) { return p, nil })(nil)
		if err == nil {
			out["#"+d] = p
		}
	}
	return out
}
