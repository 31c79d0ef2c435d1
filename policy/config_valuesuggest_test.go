package policy_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigUnknownValueSuggests: a misspelt value of a field that takes
// one of a fixed set (token-bucket, usr, reject-400, policy for policies)
// was answered with the list alone. When one allowed value is clearly the
// nearest (case and - for _ aside, within the field rule's distance), the
// error, still at the file, line, policy and field, now ends with
// `; did you mean "…"?`; each case is loaded from a file with policy.Load.
func TestConfigUnknownValueSuggests(t *testing.T) {
	const pol = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	const kinds = "fixed_window, sliding_log, sliding_window, sliding_buckets, token_bucket, leaky_bucket, leaky_queue"
	const parts = "cookie:NAME, global, header:NAME, ip, method, route, user"
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"algorithm dashed", pol + "    algorithm: token-bucket\n",
			`f.yaml:5:16: policies[0].algorithm: unknown kind "token-bucket"; want one of ` + kinds + `; did you mean "token_bucket"?`},
		{"algorithm run together", pol + "    algorithm: tokenbucket\n",
			`f.yaml:5:16: policies[0].algorithm: unknown kind "tokenbucket"; want one of ` + kinds + `; did you mean "token_bucket"?`},
		{"algorithm sliding-window", pol + "    algorithm: sliding-window\n",
			`f.yaml:5:16: policies[0].algorithm: unknown kind "sliding-window"; want one of ` + kinds + `; did you mean "sliding_window"?`},
		{"algorithm capitalised", pol + "    algorithm: Leaky_Queue\n",
			`f.yaml:5:16: policies[0].algorithm: unknown kind "Leaky_Queue"; want one of ` + kinds + `; did you mean "leaky_queue"?`},
		{"key part", pol + "    key: usr\n",
			`f.yaml:5:10: policies[0].key: unknown key part "usr"; want one of ` + parts + `; did you mean "user"?`},
		{"key part in a list", pol + "    key: [ip, rout]\n",
			`f.yaml:5:15: policies[0].key: unknown key part "rout"; want one of ` + parts + `; did you mean "route"?`},
		{"fallback part", pol + "    key: user\n    fallback: IP\n",
			`f.yaml:6:15: policies[0].fallback: unknown key part "IP"; want one of ` + parts + `; did you mean "ip"?`},
		{"header part misspelt", pol + "    key: 'headers:X-Api-Key'\n",
			`f.yaml:5:10: policies[0].key: unknown key part "headers:X-Api-Key"; want one of ` + parts + `; did you mean "header:X-Api-Key"?`},
		{"on_missing_key", pol + "    on_missing_key: reject-400\n",
			`f.yaml:5:21: policies[0].on_missing_key: unknown value "reject-400"; want one of reject_400, reject_403, skip; did you mean "reject_400"?`},
		{"on_missing_key short", pol + "    on_missing_key: skp\n",
			`f.yaml:5:21: policies[0].on_missing_key: unknown value "skp"; want one of reject_400, reject_403, skip; did you mean "skip"?`},
		{"count", pol + "    count: succeded\n",
			`f.yaml:5:12: policies[0].count: unknown value "succeded"; want one of all, failed, succeeded; did you mean "succeeded"?`},
		{"count capitalised", pol + "    count: Failed\n",
			`f.yaml:5:12: policies[0].count: unknown value "Failed"; want one of all, failed, succeeded; did you mean "failed"?`},
		{"failure_mode", "failure_mode: cloesd\n" + pol,
			`f.yaml:1:15: failure_mode: unknown value "cloesd"; want one of open, closed, fallback; did you mean "closed"?`},
		{"headers", "headers: legacy_unix\n" + pol,
			`f.yaml:1:10: headers: unknown value "legacy_unix"; want one of ietf, draft-7, draft-6, legacy, legacy-unix, none, ietf-most-constraining; did you mean "legacy-unix"?`},
		{"ip_source underscored", "trusted_hops: 1\nip_source: x_forwarded_for\n" + pol,
			`f.yaml:2:12: ip_source: unknown source "x_forwarded_for"; want x-forwarded-for, forwarded or header:NAME; did you mean "x-forwarded-for"?`},
		{"ip_source header capitalised", "trusted_proxies: [10.0.0.1]\nip_source: Header:X-Real-IP\n" + pol,
			`f.yaml:2:12: ip_source: unknown source "Header:X-Real-IP"; want x-forwarded-for, forwarded or header:NAME; did you mean "header:X-Real-IP"?`},
		{"ip_source a header's name alone", "trusted_proxies: [10.0.0.1]\nip_source: X-Real-IP\n" + pol,
			`f.yaml:2:12: ip_source: unknown source "X-Real-IP"; want x-forwarded-for, forwarded or header:NAME; did you mean "header:X-Real-IP"?`},
		{"ip_source another header's name alone", "trusted_proxies: [10.0.0.1]\nip_source: CF-Connecting-IP\n" + pol,
			`f.yaml:2:12: ip_source: unknown source "CF-Connecting-IP"; want x-forwarded-for, forwarded or header:NAME; did you mean "header:CF-Connecting-IP"?`},
		{"ip_source without proxies", "ip_source: forwaded\n" + pol,
			`f.yaml:1:12: ip_source: unknown source "forwaded"; want x-forwarded-for, forwarded or header:NAME; did you mean "forwarded"?`},
		{"top-level policy", "policy:\n  - {name: a, limit: 1, window: 1s}\n",
			`f.yaml:1:1: policy: unknown field; did you mean "policies"? (want one of ` + strings.Join(topFieldList, ", ") + ")"},
	} {
		got := loadErrors(t, tc.doc)
		if !slices.Contains(got, "policy: "+tc.want) {
			t.Errorf("%s: errors %q,\nwant among them %q", tc.name, got, "policy: "+tc.want)
		}
	}
}

// TestConfigUnknownValueFarGetsNoSuggestion: a value near no allowed one,
// or as near two, is answered with the list alone.
func TestConfigUnknownValueFarGetsNoSuggestion(t *testing.T) {
	const pol = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"algorithm far", pol + "    algorithm: gcra\n", `unknown kind "gcra"`},
		{"algorithm a part of two kinds", pol + "    algorithm: bucket\n", `unknown kind "bucket"`},
		{"key part far", pol + "    key: session\n", `unknown key part "session"`},
		{"on_missing_key as near two", pol + "    on_missing_key: reject_401\n", `unknown value "reject_401"`},
		{"count far", pol + "    count: failures_only\n", `unknown value "failures_only"`},
		{"ip_source far", "trusted_hops: 1\nip_source: remote_addr\n" + pol, `unknown source "remote_addr"`},
		{"top-level far", "settings:\n" + pol, `settings: unknown field`},
	} {
		got := loadErrors(t, tc.doc)
		found := false
		for _, e := range got {
			if strings.Contains(e, tc.want) {
				found = true
				if strings.Contains(e, "did you mean") {
					t.Errorf("%s: %q suggests a value; want the list alone", tc.name, e)
				}
			}
		}
		if !found {
			t.Errorf("%s: errors %q, want one with %q", tc.name, got, tc.want)
		}
	}
}

var topFieldList = []string{"version", "headers", "failure_mode", "failure_retry_after", "trusted_proxies", "trusted_hops", "ip_source", "ipv6_prefix", "ipv4_prefix", "nat64_prefixes", "policies"}

// loadErrors writes doc to f.yaml and returns the errors policy.Load
// gives, each as its text with the file named by its base name.
func loadErrors(t *testing.T, doc string) []string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "f.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := policy.Load(path)
	if err == nil {
		t.Fatalf("%q loaded; want an error", doc)
	}
	var out []string
	for _, e := range policy.ConfigErrors(err) {
		out = append(out, strings.ReplaceAll(e.Error(), dir+string(filepath.Separator), ""))
	}
	return out
}
