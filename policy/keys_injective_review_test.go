package policy_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigKeysInjective checks, end to end, what DESIGN.md and the
// package docs promise of composite keys: the store key a configuration's
// policy prepares ("name:" and the key) tells every client apart, however
// its parts are spelt. Users that look like addresses, like another
// part's encoding ("9:192.0.2.1", "0:alice"), like a digest ("#..."), at
// and past the bounds where a part or a key is hashed, with spaces,
// separators, control and non-ASCII bytes, under [ip, user], under user
// with an ip fallback and under a lone header: two different (ip, user)
// inputs must never share a store key, and one input always gets the same.
func TestConfigKeysInjective(t *testing.T) {
	users := []string{
		"", "alice", "alice ", " alice", "192.0.2.1", "9:192.0.2.1", "0:alice", "1:192.0.2.1",
		"5:alice", "#", "#alice", "a:b", "a", "b:c", "a:b:c", "a|b", "a+b", "a b",
		strings.Repeat("a", keyfunc.MaxPartLen), strings.Repeat("a", keyfunc.MaxPartLen+1),
		strings.Repeat("a", keyfunc.MaxKeyLen-2), strings.Repeat("a", keyfunc.MaxKeyLen-1),
		strings.Repeat("a", keyfunc.MaxKeyLen), strings.Repeat("a", keyfunc.MaxKeyLen+1),
		"\x00", "a\tb", "jürgen", "\xff", "2001:db8::1", "[2001:db8::1]:80",
	}
	// The digest a key too long to keep is written as, spelt by a user.
	long := strings.Repeat("a", keyfunc.MaxKeyLen+1)
	digest, err := keyfunc.Secret(keyfunc.Must(keyfunc.Const(long)))(nil)
	if err != nil {
		t.Fatal(err)
	}
	users = append(users, "#"+digest)
	addrs := []string{"192.0.2.1:1", "192.0.2.10:1", "19.2.0.21:1", "[2001:db8::1]:1", "[2001:db8:0:1::1]:1", "[::ffff:192.0.2.2]:1"}
	user := func(u string) func(*http.Request) *http.Request {
		return func(r *http.Request) *http.Request {
			if u == "" {
				return r
			}
			return r.WithContext(keyfunc.WithUser(r.Context(), u))
		}
	}
	header := func(u string) func(*http.Request) *http.Request {
		return func(r *http.Request) *http.Request {
			if u != "" {
				r.Header["X-User"] = []string{u}
			}
			return r
		}
	}
	for _, tt := range []struct {
		name, key string
		set       func(u string) func(*http.Request) *http.Request
		// input returns what tells clients apart, for user u at address
		// a; ok is false where the policy has no key for the request.
		input func(u, a string) (in string, ok bool)
	}{
		{"user", "key: user", user, func(u, a string) (string, bool) { return u, u != "" }},
		{"[ip, user]", "key: [ip, user]", user, func(u, a string) (string, bool) { return ipOf(t, a) + "\x00" + u, u != "" }},
		{"user | ip", "{key: user, fallback: ip}", user, func(u, a string) (string, bool) {
			if u == "" {
				return "ip\x00" + ipOf(t, a), true
			}
			return "user\x00" + u, true
		}},
		// A header's value is what it holds less the white space around
		// it (RFC 9110, 5.5), which HTTP/2 passes on.
		{"[ip, header]", `key: [ip, "header:X-User"]`, header, func(u, a string) (string, bool) {
			u = strings.Trim(u, " \t")
			return ipOf(t, a) + "\x00" + u, u != ""
		}},
		{"header", `key: "header:X-User"`, header, func(u, a string) (string, bool) { u = strings.Trim(u, " \t"); return u, u != "" }},
		{"header | ip", `{key: "header:X-User", fallback: ip}`, header, func(u, a string) (string, bool) {
			if u = strings.Trim(u, " \t"); u == "" {
				return "ip\x00" + ipOf(t, a), true
			}
			return "user\x00" + u, true
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := "policies:\n  - {name: p, limit: 5, window: 1m, on_missing_key: skip, " + strings.Trim(tt.key, "{}") + "}\n"
			cfg := mustParse(t, doc, "k.yaml")
			set, err := policy.NewSet(cfg.Policies)
			if err != nil {
				t.Fatal(err)
			}
			owner := map[string]string{} // store key -> input
			seen := map[string]string{}  // input -> store key
			for _, u := range users {
				for _, a := range addrs {
					// Header values cannot hold control bytes but a tab.
					if strings.Contains(tt.name, "header") && strings.ContainsFunc(u, func(c rune) bool { return c < 0x20 && c != '\t' }) {
						continue
					}
					r := httptest.NewRequest("GET", "/", nil)
					r.RemoteAddr = a
					r = tt.set(u)(r)
					var res policy.Result
					if err := set.Prepare(r, set.Match(r), &res); err != nil {
						t.Fatalf("user %q at %s: %v", u, a, err)
					}
					in, ok := tt.input(u, a)
					if !ok {
						if res.Len() != 0 {
							t.Errorf("user %q at %s: key %q, want none", u, a, res.Key(0))
						}
						continue
					}
					if res.Len() != 1 {
						t.Fatalf("user %q at %s: %d keys, want 1", u, a, res.Len())
					}
					k := strings.Clone(res.Key(0))
					if !strings.HasPrefix(k, "p:") || len(k) > len("p:")+keyfunc.MaxKeyLen {
						t.Errorf("user %q at %s: key %q is not \"p:\" and at most %d bytes", u, a, k, keyfunc.MaxKeyLen)
					}
					if prev, dup := owner[k]; dup && prev != in {
						t.Errorf("inputs %q and %q share the key %q", prev, in, k)
					}
					if prev, dup := seen[in]; dup && prev != k {
						t.Errorf("input %q got the keys %q and %q", in, prev, k)
					}
					owner[k], seen[in] = in, k
				}
			}
			// Fewer than the users: "" (no key), a control byte a header
			// cannot hold, and, in a header, "alice " and " alice", which
			// are "alice".
			if len(owner) != len(seen) || len(seen) < len(users)-5 {
				t.Errorf("%d keys for %d inputs", len(owner), len(seen))
			}
		})
	}
}

// TestConfigTwoChosenPartsInjective: a key of two parts the client
// chooses, [user, header], where one part's text can end like the
// other's starts ("a:b"+"c" and "a"+"b:c"), gives every pair of values a
// store key of its own.
func TestConfigTwoChosenPartsInjective(t *testing.T) {
	vals := []string{"a", "c", "a:b", "b:c", "1:a", "1:", ":", "#", "#a", "3:a:b",
		strings.Repeat("x", keyfunc.MaxPartLen), strings.Repeat("x", keyfunc.MaxPartLen+1)}
	cfg := mustParse(t, "policies:\n  - {name: p, limit: 5, window: 1m, key: [user, \"header:X-User\"]}\n", "k.yaml")
	owner := map[string][2]string{}
	for _, u := range vals {
		for _, h := range vals {
			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set("X-User", h)
			r = r.WithContext(keyfunc.WithUser(r.Context(), u))
			k := strings.Clone(preparedKey(t, cfg, r))
			if prev, dup := owner[k]; dup {
				t.Errorf("user %q, header %q and user %q, header %q share the key %q", prev[0], prev[1], u, h, k)
			}
			owner[k] = [2]string{u, h}
		}
	}
}

// ipOf returns the ip key part's key of a client at addr.
func ipOf(t *testing.T, addr string) string {
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = addr
	k, err := keyfunc.Must(keyfunc.IP())(r)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
