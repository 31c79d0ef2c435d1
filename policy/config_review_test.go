package policy_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// preparedKey returns the key the first policy of cfg gives r, as the
// store would see it ("name:key").
func preparedKey(t *testing.T, cfg *policy.Config, r *http.Request) string {
	t.Helper()
	set, err := policy.NewSet(cfg.Policies)
	if err != nil {
		t.Fatal(err)
	}
	var res policy.Result
	if err := set.Prepare(r, set.Match(r), &res); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if res.Len() != 1 {
		t.Fatalf("Prepare gave %d checks, want 1", res.Len())
	}
	return res.Key(0)
}

// TestConfigClientChosenKeyBounded checks that a key made of one header or
// cookie, whose value the client chooses, is bounded in length like a
// joined one: a client sending a 100 KB X-Client-Name must not make a 100 KB
// store key (a Redis key per request, a log line), and a value a client
// crafts cannot meet the digest another value was given.
func TestConfigClientChosenKeyBounded(t *testing.T) {
	long1 := strings.Repeat("a", 100<<10)
	long2 := strings.Repeat("a", 100<<10-1) + "b"
	const limit = len("p:") + 2 + keyfunc.MaxKeyLen // "p:" + "0:" (FirstOf) + the part
	for _, tc := range []struct {
		name, key string
		set       func(r *http.Request, v string)
	}{
		{"header", `key: "header:X-Client-Name"`, func(r *http.Request, v string) { r.Header.Set("X-Client-Name", v) }},
		{"header with fallback", `{key: "header:X-Client-Name", fallback: ip}`, func(r *http.Request, v string) { r.Header.Set("X-Client-Name", v) }},
		{"cookie", `key: "cookie:tenant"`, func(r *http.Request, v string) { r.Header.Set("Cookie", "tenant="+v) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := "policies:\n  - name: p\n    limit: 5\n    window: 1m\n"
			if strings.HasPrefix(tc.key, "{") {
				doc = "policies:\n  - {name: p, limit: 5, window: 1m, " + strings.Trim(tc.key, "{}") + "}\n"
			} else {
				doc += "    " + tc.key + "\n"
			}
			cfg := mustParse(t, doc, "k.yaml")
			keyOf := func(v string) string {
				r := httptest.NewRequest("GET", "/", nil)
				tc.set(r, v)
				return preparedKey(t, cfg, r)
			}
			k1, k2 := keyOf(long1), keyOf(long2)
			if len(k1) > limit || len(k2) > limit {
				t.Fatalf("keys of 100 KB values are %d and %d bytes long, want at most %d", len(k1), len(k2), limit)
			}
			if k1 == k2 {
				t.Errorf("two long values share the key %q", k1)
			}
			// A short, printable value stays readable (replay reports show it).
			if k := keyOf("bot"); !strings.HasSuffix(k, ":bot") {
				t.Errorf("key of %q = %q, want it as it is", "bot", k)
			}
			// Printable ASCII (spaces and '~' included) up to MaxKeyLen
			// bytes is kept; DEL and control bytes, the first one
			// included, are not, nor is a value starting with '#', the
			// mark of a digest.
			if tc.name == "header" {
				for _, v := range []string{strings.Repeat("a", keyfunc.MaxKeyLen), "a b~", "~ ~"} {
					if k := keyOf(v); k != "p:"+v {
						t.Errorf("key of %q = %q, want it as it is", v, k)
					}
				}
				// The white space around a value is no part of it
				// (RFC 9110, 5.5; HTTP/2 passes it on).
				if k := keyOf(" ~\t"); k != "p:~" {
					t.Errorf("key of %q = %q, want %q", " ~\t", k, "p:~")
				}
				for _, v := range []string{"a\x7fb", "a\x1fb", "\x1fab", "#abc"} {
					if k := keyOf(v); !strings.HasPrefix(k, "p:#") || k == "p:"+v {
						t.Errorf("key of %q = %q, want a digest", v, k)
					}
				}
			}
			// A value that spells another one's digest gets a key of its own.
			_, digest, _ := strings.Cut(k1, "#")
			if digest != "" {
				if k := keyOf("#" + digest); k == k1 {
					t.Errorf("value %q shares the key %q of a 100 KB value", "#"+digest, k)
				}
			}
		})
	}
}

// TestConfigBadPrefixReportedOnce: an ipv4_prefix or ipv6_prefix out of
// range is one error, at its field. It was reported a second time as an
// ip_source error without a position, in a file with no ip_source.
func TestConfigBadPrefixReportedOnce(t *testing.T) {
	for _, tc := range []struct{ doc, field string }{
		{"ipv6_prefix: 0\n", "ipv6_prefix"},
		{"ipv4_prefix: 33\n", "ipv4_prefix"},
		{"trusted_proxies: [10.0.0.0/8]\nip_source: forwarded\nipv6_prefix: 129\n", "ipv6_prefix"},
	} {
		_, err := policy.ParseConfig([]byte(tc.doc+"policies:\n  - {name: a, limit: 1, window: 1s}\n"), "p.yaml")
		errs := policy.ConfigErrors(err)
		if len(errs) != 1 || errs[0].Field != tc.field || errs[0].Line == 0 {
			t.Errorf("ParseConfig(%q) = %v; want one error at %s, with its position", tc.doc, err, tc.field)
		}
	}
}

// TestConfigYAMLDirective: a YAML file may start with a %YAML directive
// before its one document; the parser reports the directive as a document
// of its own, and the loader refused the file as holding two documents.
func TestConfigYAMLDirective(t *testing.T) {
	const pol = "policies:\n  - {name: a, limit: 1, window: 1s}\n"
	cfg := mustParse(t, "%YAML 1.2\n---\n"+pol, "d.yaml")
	if len(cfg.Policies) != 1 {
		t.Errorf("%d policies, want 1", len(cfg.Policies))
	}
	_, err := policy.ParseConfig([]byte("%YAML 1.2\n---\n"+pol+"---\n"+pol), "d.yaml")
	if errs := policy.ConfigErrors(err); len(errs) != 1 || !strings.Contains(errs[0].Reason, "more than one YAML document") || errs[0].Line != 6 {
		t.Errorf("two documents after a directive: %v; want one error at line 6 saying so", err)
	}
}

// TestConfigTrustedProxyZone: a trusted proxy written with a zone
// ("fe80::1%eth0") is refused, as the loader means to: the zone was
// dropped without a word, trusting that address on every interface.
func TestConfigTrustedProxyZone(t *testing.T) {
	_, err := policy.ParseConfig([]byte("trusted_proxies: [10.0.0.1, \"fe80::1%eth0\"]\npolicies:\n  - {name: a, limit: 1, window: 1s}\n"), "z.yaml")
	if errs := policy.ConfigErrors(err); len(errs) != 1 || errs[0].Field != "trusted_proxies[1]" || !strings.Contains(errs[0].Reason, "zone") {
		t.Errorf("zoned trusted proxy: %v; want one error at trusted_proxies[1] about the zone", err)
	}
}

// TestConfigAliasExpansionBounded: YAML aliases share their anchor's
// nodes, so a file of a few kilobytes can stand for millions of entries (a
// list of n parts, aliased n times as fallbacks): the node bound of the
// loader did not see them, and a 35 KB file took seconds and gigabytes to
// decode. Aliases count what they stand for now. A document of as many
// plain nodes is refused too.
func TestConfigAliasExpansionBounded(t *testing.T) {
	const n = 2000
	parts := strings.TrimSuffix(strings.Repeat("ip, ", n), ", ")
	aliases := strings.TrimSuffix(strings.Repeat("*a, ", n), ", ")
	doc := "policies:\n  - name: p\n    limit: 1\n    window: 1s\n    key: &a [" + parts + "]\n    fallback: [" + aliases + "]\n"
	_, err := policy.ParseConfig([]byte(doc), "bomb.yaml")
	if errs := policy.ConfigErrors(err); len(errs) != 1 || !strings.Contains(errs[0].Reason, "too large") || errs[0].Line != 6 {
		t.Errorf("%d KB file whose aliases stand for %d key parts: %.200v; want one error at line 6, too large", len(doc)>>10, n*n, err)
	}
	// So do plain nodes: a list of 25,000 methods, in 125 KB, is refused
	// for its nodes, not decoded.
	doc = "policies:\n  - name: p\n    limit: 1\n    window: 1s\n    methods: [" + strings.TrimSuffix(strings.Repeat("GET, ", 25000), ", ") + "]\n"
	_, err = policy.ParseConfig([]byte(doc), "long.yaml")
	if errs := policy.ConfigErrors(err); len(errs) != 1 || !strings.Contains(errs[0].Reason, "too large") {
		t.Errorf("%d KB file of 25000 methods: %.200v; want one error, too large", len(doc)>>10, err)
	}
	// A template merged into each policy is fine.
	doc = "policies:\n  - &base {name: a, limit: 1, window: 1s, key: [ip, user], fallback: [ip], methods: [GET, POST]}\n"
	for i := range policy.MaxPolicies - 1 {
		doc += "  - {<<: *base, name: p" + strconv.Itoa(i) + "}\n"
	}
	if cfg, err := policy.ParseConfig([]byte(doc), "tmpl.yaml"); err != nil || len(cfg.Policies) != policy.MaxPolicies {
		t.Errorf("%d policies merging one template: %v", policy.MaxPolicies, err)
	}
}

// TestConfigAliasOfCollectionsBounded: an alias counts every node its
// anchor stands for, collections included, not only the scalars: an
// anchor of 50 nested empty lists (no scalar at all) aliased 500 times
// stands for 25,000 nodes, and is refused where the alias is.
func TestConfigAliasOfCollectionsBounded(t *testing.T) {
	nested := strings.Repeat("[", 50) + strings.Repeat("]", 50)
	aliases := strings.TrimSuffix(strings.Repeat("*a, ", 500), ", ")
	doc := "policies:\n  - name: p\n    limit: 1\n    window: 1s\n    key: &a " + nested + "\n    fallback: [" + aliases + "]\n"
	_, err := policy.ParseConfig([]byte(doc), "lists.yaml")
	if errs := policy.ConfigErrors(err); len(errs) != 1 || !strings.Contains(errs[0].Reason, "too large") || errs[0].Line != 6 {
		t.Errorf("aliases of 50 nested lists, 500 times: %.200v; want one error at line 6, too large", err)
	}
}

// TestConfigBadTrustedProxyReportedOnce: a trusted_proxies entry that does
// not parse is one error, at it; with an ip_source, the loader also said
// that ip_source "needs trusted_proxies", which the file does have.
func TestConfigBadTrustedProxyReportedOnce(t *testing.T) {
	_, err := policy.ParseConfig([]byte("trusted_proxies: [proxy.internal]\nip_source: forwarded\npolicies:\n  - {name: a, limit: 1, window: 1s}\n"), "t.yaml")
	if errs := policy.ConfigErrors(err); len(errs) != 1 || errs[0].Field != "trusted_proxies[0]" {
		t.Errorf("bad trusted proxy with ip_source: %v; want one error, at trusted_proxies[0]", err)
	}
}

// TestConfigBadIPSettingsHideNoPolicyError: every problem of a file is
// reported; with an ip_source or trusted proxy refused, the policies were
// not built, so their own errors (a limit of 0) went unsaid until the ip
// settings were fixed.
func TestConfigBadIPSettingsHideNoPolicyError(t *testing.T) {
	for _, top := range []string{
		"trusted_proxies: [10.0.0.0/8]\nip_source: header:Bad Name\n",
		"trusted_proxies: [bogus]\n",
		"ip_source: forwarded\n",
		"trusted_hops: 1\nip_source: header:X-Real-IP\n",
		"trusted_hops: 40\n",
		"trusted_proxies: [10.0.0.0/8]\ntrusted_hops: 1\n",
	} {
		_, err := policy.ParseConfig([]byte(top+"policies:\n  - {name: a, limit: 0, window: 1s}\n"), "h.yaml")
		var fields []string
		for _, ce := range policy.ConfigErrors(err) {
			fields = append(fields, ce.Field)
		}
		if len(fields) != 2 || fields[1] != "policies[0].limit" {
			t.Errorf("%q with a limit of 0: errors at %q; want the ip setting's and policies[0].limit", top, fields)
		}
	}
}

// TestConfigIntegerOutOfRange: an unquoted integer too large for 64 bits
// is reported as out of range (the YAML parser reads it as a string, and
// the error said "must be an integer, not a string"); a quoted one is
// still a string.
func TestConfigIntegerOutOfRange(t *testing.T) {
	for _, tc := range []struct{ src, field, reason string }{
		{"policies:\n  - {name: a, limit: 99999999999999999999, window: 1s}\n", "policies[0].limit", "fits in 64 bits, got 99999999999999999999"},
		{"policies:\n  - {name: a, limit: -99999999999999999999, window: 1s}\n", "policies[0].limit", "fits in 64 bits, got -99999999999999999999"},
		{"trusted_hops: 1_000_000_000_000_000_000_000\npolicies:\n  - {name: a, limit: 1, window: 1s}\n", "trusted_hops", "fits in 64 bits"},
		{"policies:\n  - {name: a, limit: \"99999999999999999999\", window: 1s}\n", "policies[0].limit", "not a string"},
		{"policies:\n  - {name: a, limit: 12abc, window: 1s}\n", "policies[0].limit", "not a string"},
	} {
		_, err := policy.ParseConfig([]byte(tc.src), "big.yaml")
		errs := policy.ConfigErrors(err)
		if len(errs) != 1 || errs[0].Field != tc.field || !strings.Contains(errs[0].Reason, tc.reason) {
			t.Errorf("%q: %v; want one error at %s saying %q", tc.src, err, tc.field, tc.reason)
		}
	}
}

// TestConfigJoinedKeyStartingWithHeader: a key of several parts, the
// first a header, is all of them joined, not the header's alone.
func TestConfigJoinedKeyStartingWithHeader(t *testing.T) {
	cfg := mustParse(t, "policies:\n  - {name: p, limit: 5, window: 1m, key: [\"header:X-Tenant\", method]}\n", "k.yaml")
	keys := map[string]bool{}
	for _, method := range []string{"GET", "POST"} {
		r := httptest.NewRequest(method, "/", nil)
		r.Header.Set("X-Tenant", "acme")
		k := preparedKey(t, cfg, r)
		if !strings.Contains(k, "acme") || !strings.Contains(k, method) {
			t.Errorf("key of %s with X-Tenant acme = %q, want both parts in it", method, k)
		}
		keys[k] = true
	}
	if len(keys) != 2 {
		t.Errorf("GET and POST of one tenant share a key: %v", keys)
	}
}
