package policy_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigErrorFormat: the message is "policy: file:line:col: field:
// reason", each part left out when unknown (no file, line or column 0, no
// field), with one space between the position and what follows, and a
// column only after a line.
func TestConfigErrorFormat(t *testing.T) {
	for _, tc := range []struct {
		e    policy.ConfigError
		want string
	}{
		{policy.ConfigError{Reason: "is empty"}, "policy: is empty"},
		{policy.ConfigError{Field: "policies[0].limit", Reason: "must be positive"}, "policy: policies[0].limit: must be positive"},
		{policy.ConfigError{File: "a.yaml", Reason: "is empty"}, "policy: a.yaml: is empty"},
		{policy.ConfigError{File: "a.yaml", Line: 3, Reason: "x"}, "policy: a.yaml:3: x"},
		{policy.ConfigError{File: "a.yaml", Line: 3, Column: 7, Field: "f", Reason: "x"}, "policy: a.yaml:3:7: f: x"},
		{policy.ConfigError{Line: 3, Column: 7, Reason: "x"}, "policy: 3:7: x"},
		{policy.ConfigError{File: "a.yaml", Column: 7, Reason: "x"}, "policy: a.yaml: x"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%+v: Error() = %q, want %q", tc.e, got, tc.want)
		}
	}
}

// TestConfigErrorsUnwraps: ConfigErrors finds the ConfigErrors of an error
// wrapped once or more (fmt.Errorf's %w) as well as joined, in order, and
// none in an error that holds none.
func TestConfigErrorsUnwraps(t *testing.T) {
	a := &policy.ConfigError{Field: "a", Reason: "x"}
	b := &policy.ConfigError{Field: "b", Reason: "y"}
	for _, tc := range []struct {
		name string
		err  error
		want []*policy.ConfigError
	}{
		{"one", a, []*policy.ConfigError{a}},
		{"wrapped", fmt.Errorf("loading: %w", a), []*policy.ConfigError{a}},
		{"wrapped twice", fmt.Errorf("reload: %w", fmt.Errorf("loading: %w", a)), []*policy.ConfigError{a}},
		{"joined, wrapped", fmt.Errorf("loading: %w", errors.Join(a, b)), []*policy.ConfigError{a, b}},
		{"wrapped, joined", errors.Join(fmt.Errorf("x: %w", a), fmt.Errorf("y: %w", b)), []*policy.ConfigError{a, b}},
		{"other", errors.New("other"), nil},
		{"nil", nil, nil},
	} {
		got := policy.ConfigErrors(tc.err)
		if len(got) != len(tc.want) {
			t.Errorf("%s: ConfigErrors = %v, want %v", tc.name, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: ConfigErrors[%d] = %v, want %v", tc.name, i, got[i], tc.want[i])
			}
		}
	}
}

// TestConfigShapesReported: an empty mapping as a policy is a policy with
// every required field missing, each reported where the mapping is; a
// mapping key that an alias makes a list is refused where the alias is.
func TestConfigShapesReported(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"empty policy", "policies:\n  - {}\n", []string{
			"policy: f.yaml:2:5: policies[0].name: is missing",
			"policy: f.yaml:2:5: policies[0].limit: is missing",
			"policy: f.yaml:2:5: policies[0].window: is missing",
		}},
		{"list key", "x: &s [a]\n*s : 1\n", []string{"policy: f.yaml:2:1: a mapping key must be a plain string"}},
	} {
		wantErrors(t, tc.name, tc.doc, tc.want)
	}
}

// TestConfigErrorsExact: each of these documents gets exactly the errors
// listed, no follow-up error of the same mistake: a policy that is no
// mapping has no fields to miss; an unknown field does not stop the
// fields after it from being read; a bad trusted_hops does not also make
// ip_source want trusted proxies, nor trusted_hops beside trusted_proxies
// a header source want them; a duplicate name does not stop the policies
// after it from being checked; a bucket count out of range is said once;
// a bad method or route entry is said at the entry, by its reason alone,
// and a route is checked against the methods only when both are valid;
// every bad trusted proxy is said, and an IPv6 /96 is no mapped /96;
// an integer too large for 64 bits is
// told apart from a string that is no integer.
func TestConfigErrorsExact(t *testing.T) {
	const pol = "policies:\n  - {name: a, limit: 1, window: 1s}\n"
	limit := func(v string) string { return "policies:\n  - {name: a, limit: " + v + ", window: 1s}\n" }
	buckets := func(v string) string {
		return "policies:\n  - {name: a, algorithm: sliding_buckets, limit: 10, window: 1m, buckets: " + v + "}\n"
	}
	const notInt = "policy: f.yaml:2:22: policies[0].limit: must be an integer, not a string"
	tooLarge := func(v string) string {
		return "policy: f.yaml:2:22: policies[0].limit: must be a decimal integer that fits in 64 bits, got " + v
	}
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"policy not a mapping", "policies: [5]\n", []string{"policy: f.yaml:1:12: policies[0]: must be a mapping, not an integer"}},
		{"unknown field first", "policies:\n  - {zzz: 1, name: a, limit: 1, window: 1s}\n", []string{
			"policy: f.yaml:2:6: policies[0].zzz: unknown field; want one of name, algorithm, limit, window, burst, buckets, max_delay, key, fallback, on_missing_key, count, methods, routes"}},
		{"trusted_hops not an integer", pol + "trusted_hops: x\nip_source: x-forwarded-for\n", []string{"policy: f.yaml:3:15: trusted_hops: must be an integer, not a string"}},
		{"trusted_hops out of range", pol + "trusted_hops: 99\nip_source: x-forwarded-for\n", []string{"policy: f.yaml:3:15: trusted_hops: must be between 0 and 32, got 99"}},
		{"trusted_hops and trusted_proxies", pol + "trusted_hops: 1\ntrusted_proxies: [10.0.0.0/8]\nip_source: x-forwarded-for\n", []string{
			"policy: f.yaml:3:15: trusted_hops: excludes trusted_proxies: name the proxies by address (preferred) or count them, not both"}},
		{"trusted_hops and trusted_proxies, header source", pol + "trusted_hops: 1\ntrusted_proxies: [10.0.0.0/8]\nip_source: header:X-Real-IP\n", []string{
			"policy: f.yaml:3:15: trusted_hops: excludes trusted_proxies: name the proxies by address (preferred) or count them, not both"}},
		{"ip_source alone", pol + "ip_source: x-forwarded-for\n", []string{
			"policy: f.yaml:3:12: ip_source: needs trusted_proxies or trusted_hops: headers from untrusted peers are never read"}},
		{"duplicate name, then a bad policy", "policies:\n  - {name: a, limit: 1, window: 1s}\n  - {name: a, limit: 2, window: 1s}\n  - {name: b, limit: 0, window: 1s}\n", []string{
			`policy: f.yaml:3:12: policies[1].name: "a" is already the name of policies[0] (line 2)`,
			"policy: f.yaml:4:22: policies[2].limit: must be positive, got 0"}},
		{"buckets negative", buckets("-1"), []string{"policy: f.yaml:2:75: policies[0].buckets: must be between 1 and 3600, got -1"}},
		{"buckets zero", buckets("0"), []string{"policy: f.yaml:2:75: policies[0].buckets: must be at least 1 for sliding_buckets, got 0"}},
		{"buckets too many", buckets("3601"), []string{"policy: f.yaml:2:75: policies[0].buckets: must be between 1 and 3600, got 3601"}},
		{"bad method", "policies:\n  - {name: a, limit: 1, window: 1s, methods: [GET, \"G T\"]}\n", []string{
			`policy: f.yaml:2:52: policies[0].methods: "G T" is not a method token`}},
		{"bad route", "policies:\n  - {name: a, limit: 1, window: 1s, routes: [\"/a\", \"b{\"]}\n", []string{
			`policy: f.yaml:2:52: policies[0].routes: "b{": the path must start with '/'`}},
		{"bad route beside methods", "policies:\n  - {name: a, methods: [GET], routes: [\"b{\"], limit: 1, window: 1s}\n", []string{
			`policy: f.yaml:2:40: policies[0].routes: "b{": the path must start with '/'`}},
		{"route on a method excluded", "policies:\n  - {name: a, methods: [POST], routes: [\"GET /x\"], limit: 1, window: 1s}\n", []string{
			`policy: f.yaml:2:41: policies[0].routes: "GET /x" is on GET, which methods ["POST"] exclude: the policy would never apply there`}},
		{"route beside a bad method", "policies:\n  - {name: a, methods: [\"G T\"], routes: [\"GET /x\"], limit: 1, window: 1s}\n", []string{
			`policy: f.yaml:2:25: policies[0].methods: "G T" is not a method token`}},
		{"every bad trusted proxy", pol + "trusted_proxies: [bogus, \"fe80::1%eth0\", 10.0.0.0/8, nope, \"fe80::2%eth1\", ::ffff:0.0.0.0/96, 2001:db8::/96, last]\n", []string{
			`policy: f.yaml:3:19: trusted_proxies[0]: "bogus" is neither a CIDR prefix (10.0.0.0/8) nor an address`,
			`policy: f.yaml:3:26: trusted_proxies[1]: "fe80::1%eth0" has a zone`,
			`policy: f.yaml:3:54: trusted_proxies[3]: "nope" is neither a CIDR prefix (10.0.0.0/8) nor an address`,
			`policy: f.yaml:3:60: trusted_proxies[4]: "fe80::2%eth1" has a zone`,
			`policy: f.yaml:3:76: trusted_proxies[5]: "::ffff:0.0.0.0/96" trusts every address as a proxy, so a client could name any other address; list the proxies' own prefixes, or count them with trusted_hops`,
			`policy: f.yaml:3:110: trusted_proxies[7]: "last" is neither a CIDR prefix (10.0.0.0/8) nor an address`}},
		{"version not an integer", "version: x\n" + pol, []string{"policy: f.yaml:1:10: version: must be an integer, not a string"}},
		{"version too large", "version: 99999999999999999999\n" + pol, []string{
			"policy: f.yaml:1:10: version: must be a decimal integer that fits in 64 bits, got 99999999999999999999"}},
		{"underscore first", limit("_1"), []string{notInt}},
		{"sign alone", limit("+"), []string{notInt}},
		{"minus alone", limit("-"), []string{notInt}},
		{"too large", limit("99999999999999999999"), []string{tooLarge("99999999999999999999")}},
		{"too large, signed", limit("+99999999999999999999"), []string{tooLarge("+99999999999999999999")}},
		{"too large, leading zero", limit("099999999999999999999"), []string{tooLarge("099999999999999999999")}},
		{"too large, underscores", limit("0_999999999999999999999"), []string{tooLarge("0_999999999999999999999")}},
	} {
		wantErrors(t, tc.name, tc.doc, tc.want)
	}
}

// TestConfigTooManyErrors: a document with more problems than
// maxConfigErrors (20) reports the first 20 and then "too many errors",
// without a position.
func TestConfigTooManyErrors(t *testing.T) {
	doc := "policies:\n  - {name: a, limit: 1, window: 1s}\n"
	for i := range 25 {
		doc += "x" + strconv.Itoa(i) + ": 1\n"
	}
	_, err := policy.ParseConfig([]byte(doc), "f.yaml")
	errs := policy.ConfigErrors(err)
	if len(errs) != 21 {
		t.Fatalf("25 unknown fields: %d errors, want 20 and the last saying too many: %v", len(errs), err)
	}
	if errs[19].Field != "x19" || errs[20].Error() != "policy: f.yaml: too many errors" {
		t.Errorf("errors 20 and 21: %v, %v; want x19's, then too many errors", errs[19], errs[20])
	}
	// Only the loader's closing entry is Truncated, whatever a problem of
	// the file's says (a field's reason, or a hand-built ConfigError, may
	// read "too many errors" too).
	for i, e := range errs {
		if e.Truncated() != (i == 20) {
			t.Errorf("errors[%d] (%v).Truncated() = %v, want %v", i, e, e.Truncated(), i == 20)
		}
	}
	if (&policy.ConfigError{File: "f.yaml", Reason: "too many errors"}).Truncated() {
		t.Error("a ConfigError built with the loader's words is Truncated; want only the loader's own entry")
	}
}

// TestConfigTooManyErrorsFirstByLine: past maxConfigErrors, the problems
// reported are the first 20 of the file by position, whatever order the
// loader meets them in: it reads the policies after the settings of the
// whole file, so a policy's problem at line 2 came after 25 unknown
// settings below it, and was the one left out.
func TestConfigTooManyErrorsFirstByLine(t *testing.T) {
	for _, head := range []string{
		"policies:\n  - {name: a, limit: 0, window: 1s}\n",
		"policies:\n  - {name: a, limit: 1, window: 1s}\n  - {name: a, limit: 1, window: 1s}\n",
		"policies:\n  - {name: a, methods: [POST], routes: [\"GET /x\"], limit: 1, window: 1s}\n",
	} {
		doc := head
		for i := range 25 {
			doc += "x" + strconv.Itoa(i) + ": 1\n"
		}
		_, err := policy.ParseConfig([]byte(doc), "f.yaml")
		errs := policy.ConfigErrors(err)
		if len(errs) != 21 || !errs[20].Truncated() {
			t.Fatalf("%q: %d errors, want 20 and the last saying too many: %v", head, len(errs), err)
		}
		if !strings.HasPrefix(errs[0].Field, "policies[") {
			t.Errorf("%q: the first error reported is %v; want the policy's, above the unknown fields", head, errs[0])
		}
		for i := 1; i < 20; i++ {
			if a, b := errs[i-1], errs[i]; a.Line > b.Line || a.Line == b.Line && a.Column > b.Column {
				t.Errorf("%q: errors %d and %d out of the file's order: %v, %v", head, i-1, i, a, b)
			}
		}
		if errs[19].Field != "x"+strconv.Itoa(19-countPolicyErrors(errs[:20])) {
			t.Errorf("%q: the 20th error is %v; want the last unknown field that fits", head, errs[19])
		}
	}
}

// countPolicyErrors counts the errors of errs about the policies.
func countPolicyErrors(errs []*policy.ConfigError) int {
	n := 0
	for _, e := range errs {
		if strings.HasPrefix(e.Field, "policies[") {
			n++
		}
	}
	return n
}

// TestConfigStated: a parsed Config states the top-level fields its file
// sets, and only those; one built in code states none.
func TestConfigStated(t *testing.T) {
	cfg, err := policy.ParseConfig([]byte("headers: draft-7\npolicies:\n  - {name: a, limit: 1, window: 1s}\n"), "f.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"headers": true, "policies": true, "failure_mode": false, "trusted_proxies": false} {
		if got := cfg.Stated(name); got != want {
			t.Errorf("Stated(%q) = %v, want %v", name, got, want)
		}
	}
	if (&policy.Config{Headers: "draft-7"}).Stated("headers") {
		t.Error("a Config built in code states headers")
	}
}

// TestConfigDurations: a duration is a Go duration or whole days; a number
// without a unit, even quoted, is none; one written as a duration but too
// long for one is out of range (days up to the last whole day that fits,
// either sign), and said once, also where a later check would have read
// the value (failure_retry_after's at least 1s).
func TestConfigDurations(t *testing.T) {
	window := func(v string) string { return "policies:\n  - {name: a, limit: 1, window: " + v + "}\n" }
	retry := func(v string) string {
		return "policies:\n  - {name: a, limit: 1, window: 1s}\nfailure_mode: closed\nfailure_retry_after: " + v + "\n"
	}
	const most = " is out of range: a duration is at most 2562047h47m16.854775807s"
	notDuration := func(v string) string {
		return "policy: f.yaml:2:33: policies[0].window: " + strconv.Quote(v) + " is not a duration such as 1s, 500ms, 1m or 24h"
	}
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"quoted number", window(`"90"`), []string{notDuration("90")}},
		{"quoted digit", window(`"5"`), []string{notDuration("5")}},
		{"sign alone", window(`"-"`), []string{notDuration("-")}},
		{"two points", window(`"1.2.3h"`), []string{notDuration("1.2.3h")}},
		{"last whole day", window("106751d"), []string{"policy: f.yaml:2:33: policies[0].window: must be at most 24h0m0s, got 2562024h0m0s"}},
		{"past the last whole day", window("106752d"), []string{`policy: f.yaml:2:33: policies[0].window: "106752d"` + most}},
		{"last whole day, negative", window("-106751d"), []string{"policy: f.yaml:2:33: policies[0].window: must be positive, got -2562024h0m0s"}},
		{"past the last whole day, negative", window("-106752d"), []string{`policy: f.yaml:2:33: policies[0].window: "-106752d"` + most}},
		{"hours out of range", window(`"10000000000000h"`), []string{`policy: f.yaml:2:33: policies[0].window: "10000000000000h"` + most}},
		{"signed hours out of range", window(`"+10000000000000h"`), []string{`policy: f.yaml:2:33: policies[0].window: "+10000000000000h"` + most}},
		{"fraction out of range", window(`"9999999999999.5h"`), []string{`policy: f.yaml:2:33: policies[0].window: "9999999999999.5h"` + most}},
		{"milliseconds out of range", window(`"999999999999999ms"`), []string{`policy: f.yaml:2:33: policies[0].window: "999999999999999ms"` + most}},
		{"empty", window(`""`), []string{notDuration("")}},
		{"retry a list", retry("[1s]"), []string{"policy: f.yaml:4:22: failure_retry_after: must be a string, not a list"}},
		{"retry not a duration", retry("x"), []string{`policy: f.yaml:4:22: failure_retry_after: "x" is not a duration such as 1s, 500ms, 1m or 24h`}},
		{"retry days out of range", retry("999999999999d"), []string{`policy: f.yaml:4:22: failure_retry_after: "999999999999d"` + most}},
		{"retry hours out of range", retry("99999999999h"), []string{`policy: f.yaml:4:22: failure_retry_after: "99999999999h"` + most}},
		{"retry without unit", retry("2"), []string{"policy: f.yaml:4:22: failure_retry_after: 2 has no unit; write it as 1s, 500ms, 1m or 24h"}},
	} {
		wantErrors(t, tc.name, tc.doc, tc.want)
	}
	cfg, err := policy.ParseConfig([]byte(window("1d")), "f.yaml")
	if err != nil || cfg.Policies[0].Spec().Window != 24*time.Hour {
		t.Errorf("window: 1d: %v, %v; want 24h", cfg, err)
	}
	// The largest duration is read exactly; failure_retry_after, at most
	// an hour, says so in its error.
	wantErrors(t, "retry the largest duration", retry("2562047h47m16.854775807s"), []string{
		"policy: f.yaml:4:22: failure_retry_after: must be at most 1h (MaxFailureRetryAfter), got 2562047h47m16.854775807s: clients that honour Retry-After stay away that long after the store is back"})
}

// wantErrors fails t unless the document doc, parsed as f.yaml, gets
// exactly the errors want (their messages, in order).
func wantErrors(t *testing.T, name, doc string, want []string) {
	t.Helper()
	_, err := policy.ParseConfig([]byte(doc), "f.yaml")
	var got []string
	for _, e := range policy.ConfigErrors(err) {
		got = append(got, e.Error())
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: errors %q, want %q", name, got, want)
	}
}
