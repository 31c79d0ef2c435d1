package policy_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// apiWords matches the words of package keyfunc's API, which a file's
// author never wrote: its functions and options (FromHeader,
// TrustedProxies(...), IPv4Prefix), the "IP:" and "Header:" that begin
// its errors, and r.Host.
var apiWords = regexp.MustCompile(`keyfunc|\b(From[A-Z]\w*|Trusted(Proxies|Hops)|IPv[46]Prefix|MaxHops|Join|FirstOf)\b|(^|\s)(IP|Header|Cookie): |r\.Host|prefix \d`)

// configField matches the field of an error about the client-address
// settings: one of them, or an entry of trusted_proxies.
var configField = regexp.MustCompile(`^(trusted_proxies(\[\d+\])?|trusted_hops|ip_source|ipv4_prefix|ipv6_prefix)$`)

// TestConfigClientAddressErrorsSpeakConfig: every error about the
// client-address settings (trusted_proxies, trusted_hops, ip_source,
// ipv4_prefix, ipv6_prefix), whatever their combination, names the field
// the file wrote, where it wrote it, in the file's words, never in
// package keyfunc's: ip_source: header:Host was refused as
// `IP: FromHeader("Host"): ... (to r.Host)`, and a header name that is no
// header name as `IP: FromHeader: "X Bad" is not a valid header name`.
func TestConfigClientAddressErrorsSpeakConfig(t *testing.T) {
	const pol = "policies:\n  - {name: a, limit: 1, window: 1s}\n"
	proxies := []string{"", "[10.0.0.0/8]", "[192.0.2.7, '2001:db8::/32']", "[0.0.0.0/0]", "['::/0']",
		"[0.0.0.0/1, 128.0.0.0/1]", "[10.0.0.5/16]", "[]", "[bogus]", "['::ffff:0:0/96']", "[0.0.0.0]",
		"['fe80::1%eth0']", "5", "{a: b}", "10.0.0.1", "[10.0.0.0/8, 10.0.0.0/8]"}
	hops := []string{"", "0", "1", "32", "33", "-1", "1.5", "'2'"}
	sources := []string{"", "x-forwarded-for", "forwarded", "header:X-Real-IP", "header:Host", "header:host",
		`"header:X Bad"`, `"header:"`, "header:X-Forwarded-For", "header:forwarded", "x_forwarded_for",
		"X-Real-IP", "7", "'header:X-Real-IP:'", "'header:X(IP)'", "header:Cookie", "[x-forwarded-for]", "remote_addr"}
	prefixes := [][2]string{{"", ""}, {"ipv4_prefix: 24\n", "ipv6_prefix: 56\n"}, {"ipv4_prefix: 0\n", "ipv6_prefix: 129\n"}, {"ipv4_prefix: 33\n", "ipv6_prefix: 0\n"}}
	n := 0
	for _, p := range proxies {
		for _, h := range hops {
			for _, s := range sources {
				var doc strings.Builder
				if p != "" {
					fmt.Fprintf(&doc, "trusted_proxies: %s\n", p)
				}
				if h != "" {
					fmt.Fprintf(&doc, "trusted_hops: %s\n", h)
				}
				if s != "" {
					fmt.Fprintf(&doc, "ip_source: %s\n", s)
				}
				pre := prefixes[n%len(prefixes)]
				n++
				doc.WriteString(pre[0] + pre[1] + pol)
				_, err := policy.ParseConfig([]byte(doc.String()), "ip.yaml")
				for _, e := range policy.ConfigErrors(err) {
					if !configField.MatchString(e.Field) || e.Line == 0 || apiWords.MatchString(e.Reason) {
						t.Errorf("ParseConfig(%q):\n%v\nwant each error at a client-address field the file wrote, in its words", doc.String(), e)
					}
				}
			}
		}
	}
}

// TestConfigHeaderNameErrorsSpeakConfig: a header or cookie name that is
// no name (a space, a colon, a parenthesis), in ip_source or in a key
// part, is refused naming the value as the file wrote it and the
// character at fault, not as keyfunc's Header or FromHeader refuses it.
func TestConfigHeaderNameErrorsSpeakConfig(t *testing.T) {
	const pol = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	const chars = " (a header name is letters, digits and !#$%&'*+-.^_`|~)"
	const cookieChars = " (a cookie name is letters, digits and !#$%&'*+-.^_`|~)"
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"ip_source, proxies", "trusted_proxies: [10.0.0.0/8]\nip_source: \"header:X Real IP\"\n" + pol, []string{
			`policy: f.yaml:2:12: ip_source: "header:X Real IP": "X Real IP" is not a header name: it holds ' '` + chars,
		}},
		{"ip_source, hops", "trusted_hops: 1\nip_source: \"header:X-Real-IP:\"\n" + pol, []string{
			`policy: f.yaml:2:12: ip_source: "header:X-Real-IP:": "X-Real-IP:" is not a header name: it holds ':'` + chars,
		}},
		{"ip_source, no trust", "ip_source: 'header:X(IP)'\n" + pol, []string{
			`policy: f.yaml:1:12: ip_source: "header:X(IP)": "X(IP)" is not a header name: it holds '('` + chars,
		}},
		{"ip_source Host", "trusted_proxies: [10.0.0.0/8]\nip_source: header:host\n" + pol, []string{
			`policy: f.yaml:2:12: ip_source: header:host names the server the request is for, not the client; write the header your proxies set to the client's address (header:X-Real-IP), or x-forwarded-for or forwarded`,
		}},
		{"key", pol + "    key: \"header:X Api Key\"\n", []string{
			`policy: f.yaml:5:10: policies[0].key: key part "header:X Api Key": "X Api Key" is not a header name: it holds ' '` + chars,
		}},
		{"key list", pol + "    key: [ip, \"cookie:a;b\"]\n", []string{
			`policy: f.yaml:5:15: policies[0].key: key part "cookie:a;b": "a;b" is not a cookie name: it holds ';'` + cookieChars,
		}},
		{"fallback", pol + "    key: user\n    fallback: [\"header:X\u00e9\", ip]\n", []string{
			`policy: f.yaml:6:16: policies[0].fallback[0]: key part "header:Xé": "Xé" is not a header name: it holds 'é'` + chars,
		}},
	} {
		wantErrors(t, tc.name, tc.doc, tc.want)
	}
}
