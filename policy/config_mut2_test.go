package policy_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigErrorFormatMultiDigit: lines and columns are written in
// decimal, past the single digits too (a position of one digit reads the
// same in most bases).
func TestConfigErrorFormatMultiDigit(t *testing.T) {
	e := policy.ConfigError{File: "a.yaml", Line: 12, Column: 34, Field: "policies[0].limit", Reason: "must be positive"}
	if got, want := e.Error(), "policy: a.yaml:12:34: policies[0].limit: must be positive"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// TestConfigAliasOfMappingsBounded: an alias of a mapping counts its keys
// as well as its values: an anchor of 100 entries aliased 200 times stands
// for over 40,000 nodes, and is refused where the aliases are, as too
// large, before the schema looks at it.
func TestConfigAliasOfMappingsBounded(t *testing.T) {
	var entries []string
	for i := range 100 {
		entries = append(entries, "k"+strconv.Itoa(i)+": 1")
	}
	aliases := strings.TrimSuffix(strings.Repeat("*a, ", 200), ", ")
	doc := "policies:\n  - name: p\n    limit: 1\n    window: 1s\n    key: ip\n    x: &a {" + strings.Join(entries, ", ") + "}\n    y: [" + aliases + "]\n"
	_, err := policy.ParseConfig([]byte(doc), "maps.yaml")
	if errs := policy.ConfigErrors(err); len(errs) != 1 || !strings.Contains(errs[0].Reason, "too large") || errs[0].Line != 7 {
		t.Errorf("aliases of a 100-entry mapping, 200 times: %.300v; want one error at line 7, too large", err)
	}
}

// TestConfigNestingAfterClosedCollections: the nesting bound counts the
// collections open at a point, so a flow collection closed before does not
// count against one nested 64 levels deep later in the file (the most
// allowed); 65 levels are refused. A list closed inside one still open
// leaves that one counted: 64 levels nested after it, inside the outer
// list, are 65 open at once and refused; 63 are not.
func TestConfigNestingAfterClosedCollections(t *testing.T) {
	nested := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, tc := range []struct {
		where   string
		x       func(levels int) string
		levels  int
		refused bool
	}{
		{"after a closed mapping and list", nested, 64, false},
		{"after a closed mapping and list", nested, 65, true},
		{"inside the outer list after [[]", func(n int) string { return "[[], " + nested(n) + "]" }, 63, false},
		{"inside the outer list after [[]", func(n int) string { return "[[], " + nested(n) + "]" }, 64, true},
	} {
		doc := "policies:\n  - {name: a, limit: 1, window: 1s, methods: [GET]}\nx: " + tc.x(tc.levels) + "\n"
		_, err := policy.ParseConfig([]byte(doc), "n.yaml")
		nests := false
		for _, ce := range policy.ConfigErrors(err) {
			nests = nests || strings.Contains(ce.Reason, "nests more than 64 levels")
		}
		if err == nil || nests != tc.refused {
			t.Errorf("%d levels %s: %v; want refused for its nesting: %v (and an error about x either way)", tc.levels, tc.where, err, tc.refused)
		}
	}
}

// TestConfigAliasOfScalarsBounded: an alias counts every scalar its
// anchor holds as one node, whatever its type: a list of 200 nulls,
// booleans, integers, floats, strings or block literals, aliased 200
// times, stands for 40,000 nodes and is refused as too large where the
// aliases are; a list of 100 aliased 150 times, about 15,000 nodes, is
// within the bound of 20,000 and not refused as too large (whatever the
// schema makes of the fields).
func TestConfigAliasOfScalarsBounded(t *testing.T) {
	head := "policies:\n  - name: p\n    limit: 1\n    window: 1s\n"
	for _, size := range []struct {
		n, aliased int
		refused    bool
	}{{200, 200, true}, {100, 150, false}} {
		n := size.n
		aliases := "    fallback: [" + strings.TrimSuffix(strings.Repeat("*a, ", size.aliased), ", ") + "]\n"
		flow := func(s string) string {
			return "    key: &a [" + strings.TrimSuffix(strings.Repeat(s+", ", n), ", ") + "]\n"
		}
		for _, tc := range []struct{ name, anchor string }{
			{"nulls", flow("~")},
			{"booleans", flow("true")},
			{"integers", flow("7")},
			{"floats", flow("1.5")},
			{"strings", flow("ip")},
			{"block literals", "    key: &a\n" + strings.Repeat("      - |\n        ip\n", n)},
		} {
			_, err := policy.ParseConfig([]byte(head+tc.anchor+aliases), "scalars.yaml")
			errs := policy.ConfigErrors(err)
			if !size.refused {
				for _, ce := range errs {
					if strings.Contains(ce.Reason, "too large") {
						t.Errorf("%s: %d aliases of %d: %v; want it within the bound", tc.name, size.aliased, n, ce)
					}
				}
				continue
			}
			line := strings.Count(head+tc.anchor, "\n") + 1
			if len(errs) != 1 || !strings.Contains(errs[0].Reason, "too large") || errs[0].Line != line {
				t.Errorf("%s: %d aliases of %d: %.200v; want one error at line %d, too large", tc.name, size.aliased, n, err, line)
			}
		}
	}
}

// TestConfigJSONManyCollections: a JSON configuration of the most policies,
// each with lists, holds well over a hundred objects and arrays, none
// nested deeper than three: it is read (the depth bound counts the
// collections open at a point, not every one met).
func TestConfigJSONManyCollections(t *testing.T) {
	var ps []string
	for i := range policy.MaxPolicies {
		ps = append(ps, `{"name": "p`+strconv.Itoa(i)+`", "limit": 5, "window": "1m", "key": ["ip"], "methods": ["POST"]}`)
	}
	doc := `{"policies": [` + strings.Join(ps, ", ") + `]}`
	cfg, err := policy.ParseConfig([]byte(doc), "many.json")
	if err != nil || len(cfg.Policies) != policy.MaxPolicies {
		t.Fatalf("ParseConfig of %d JSON policies with lists: %.300v", policy.MaxPolicies, err)
	}
}

// TestConfigListFieldsOfWrongShape: a field that holds one string or a
// list of strings (methods, routes, key, trusted_proxies; fallback, one
// key or a list of keys) given a number, a boolean or a mapping is one
// error, at that field, saying what it holds.
func TestConfigListFieldsOfWrongShape(t *testing.T) {
	const pol = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	for _, tc := range []struct{ doc, field, reason string }{
		{pol + "    methods: 5\n", "policies[0].methods", "must be a list of strings, not an integer"},
		{pol + "    routes: {a: 1}\n", "policies[0].routes", "must be a list of strings, not a mapping"},
		{pol + "    key: 5\n", "policies[0].key", "must be a list of strings, not an integer"},
		{pol + "    key: ip\n    fallback: {a: 1}\n", "policies[0].fallback", "must be a key part or a non-empty list of keys, not a mapping"},
		{"trusted_proxies: true\n" + pol, "trusted_proxies", "must be a list of strings, not a boolean"},
	} {
		_, err := policy.ParseConfig([]byte(tc.doc), "l.yaml")
		ces := policy.ConfigErrors(err)
		if len(ces) != 1 || ces[0].Field != tc.field || ces[0].Reason != tc.reason || ces[0].Line == 0 {
			t.Errorf("%q: %v; want one error at %s: %s", tc.doc, err, tc.field, tc.reason)
		}
	}
}

// TestConfigHeaderProfiles: every header profile is read by the name the
// documentation gives it.
func TestConfigHeaderProfiles(t *testing.T) {
	for name, want := range map[string]policy.HeaderProfile{
		"ietf": policy.HeadersIETF, "draft-7": policy.HeadersDraft7, "draft-6": policy.HeadersDraft6,
		"legacy": policy.HeadersLegacy, "legacy-unix": policy.HeadersLegacyUnix, "none": policy.HeadersNone,
		"ietf-most-constraining": policy.HeadersIETFMostConstraining,
	} {
		cfg, err := policy.ParseConfig([]byte("headers: "+name+"\npolicies:\n  - {name: a, limit: 1, window: 1s}\n"), "h.yaml")
		if err != nil || cfg.Headers != want {
			t.Errorf("headers: %s: %v, %v; want %q", name, cfg, err, want)
		}
	}
}
