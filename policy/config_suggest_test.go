package policy_test

import (
	"fmt"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// policyFields is the list an unknown policy field is answered with.
const policyFields = "name, algorithm, limit, window, burst, buckets, max_delay, key, fallback, on_missing_key, count, methods, routes"

// TestConfigUnknownFieldSuggests: a misspelt field (algoritm, polices,
// max-delay) was answered with the whole list of fields and no hint. When
// one known field is clearly the nearest (within a small edit distance,
// case and - for _ aside, no other as near), the message now names it,
// in YAML and JSON alike, at the field's file:line:col; a name near none,
// or as near two (ipv5_prefix), gets the list alone.
func TestConfigUnknownFieldSuggests(t *testing.T) {
	const pol = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	const topFields = "version, headers, failure_mode, failure_retry_after, trusted_proxies, trusted_hops, ip_source, ipv6_prefix, ipv4_prefix, nat64_prefixes, policies"
	for _, tc := range []struct {
		name, file, doc string
		want            []string
	}{
		{"algoritm", "f.yaml", pol + "    algoritm: token_bucket\n", []string{
			`policy: f.yaml:5:5: policies[0].algoritm: unknown field; did you mean "algorithm"? (want one of ` + policyFields + ")"}},
		{"transposed", "f.yaml", pol + "    lmiit: 3\n", []string{
			`policy: f.yaml:5:5: policies[0].lmiit: unknown field; did you mean "limit"? (want one of ` + policyFields + ")"}},
		{"dash for underscore", "f.yaml", pol + "    max-delay: 1s\n", []string{
			`policy: f.yaml:5:5: policies[0].max-delay: unknown field; did you mean "max_delay"? (want one of ` + policyFields + ")"}},
		{"capitalised", "f.yaml", pol + "    Window: 1s\n", []string{
			`policy: f.yaml:5:5: policies[0].Window: unknown field; did you mean "window"? (want one of ` + policyFields + ")"}},
		{"top level", "f.yaml", "polices:\n  - {name: a, limit: 1, window: 1s}\n", []string{
			`policy: f.yaml:1:1: polices: unknown field; did you mean "policies"? (want one of ` + topFields + ")",
			`policy: f.yaml:1:1: policies: is missing; a configuration needs at least one policy`}},
		{"plural dropped", "f.yaml", "trusted_proxy: [10.0.0.0/8]\n" + pol, []string{
			`policy: f.yaml:1:1: trusted_proxy: unknown field; did you mean "trusted_proxies"? (want one of ` + topFields + ")"}},
		{"json", "f.json", "{\"policies\": [{\"name\": \"a\", \"limit\": 1,\n  \"windw\": \"1s\", \"window\": \"1s\"}]}", []string{
			`policy: f.json:2:3: policies[0].windw: unknown field; did you mean "window"? (want one of ` + policyFields + ")"}},
		// No clear nearest: the list alone.
		{"near none", "f.yaml", pol + "    algo: gcra\n", []string{
			`policy: f.yaml:5:5: policies[0].algo: unknown field; want one of ` + policyFields}},
		{"short and far", "f.yaml", pol + "    cost: 2\n", []string{
			`policy: f.yaml:5:5: policies[0].cost: unknown field; want one of ` + policyFields}},
		{"as near two", "f.yaml", "ipv5_prefix: 48\n" + pol, []string{
			`policy: f.yaml:1:1: ipv5_prefix: unknown field; want one of ` + topFields}},
	} {
		wantErrorsIn(t, tc.name, tc.file, tc.doc, tc.want)
	}
}

// wantErrorsIn is wantErrors for a file of another name (f.json).
func wantErrorsIn(t *testing.T, name, file, doc string, want []string) {
	t.Helper()
	_, err := policy.ParseConfig([]byte(doc), file)
	var got []string
	for _, e := range policy.ConfigErrors(err) {
		got = append(got, e.Error())
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: errors %q,\nwant %q", name, got, want)
	}
}
