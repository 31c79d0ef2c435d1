package policy_test

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// hopsKey returns the key the first policy of cfg gives a request from
// the peer remote (a RemoteAddr) carrying header: value, if any.
func hopsKey(t *testing.T, cfg *policy.Config, remote, header, value string) (string, error) {
	t.Helper()
	set, err := policy.NewSet(cfg.Policies)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = remote
	if header != "" {
		r.Header.Set(header, value)
	}
	var res policy.Result
	if err := set.Prepare(r, set.Match(r), &res); err != nil {
		return "", err
	}
	return res.Key(0), nil
}

// TestConfigTrustedHops: behind a proxy whose address cannot be listed in
// trusted_proxies (one on a Unix socket, where RemoteAddr is "@"; a cloud
// load balancer at addresses not known in advance), trusted_hops: n takes
// the client from the n-th entry from the right of the forwarding header,
// whatever the peer, as keyfunc.TrustedHops does. A file could not say so:
// trusted_hops was an unknown field, and with trusted_proxies no CIDR
// matches "@", so every request through such a proxy was refused.
func TestConfigTrustedHops(t *testing.T) {
	const pol = "policies:\n  - {name: a, limit: 1, window: 1s}\n"
	cfg := mustParse(t, "trusted_hops: 1\nip_source: x-forwarded-for\n"+pol, "hops.yaml")
	if cfg.TrustedHops != 1 || len(cfg.TrustedProxies) != 0 || cfg.IPSource != "x-forwarded-for" {
		t.Errorf("TrustedHops, TrustedProxies, IPSource = %d, %v, %q; want 1, [], x-forwarded-for", cfg.TrustedHops, cfg.TrustedProxies, cfg.IPSource)
	}
	for _, peer := range []string{"@", "203.0.113.9:4711", "[2001:db8::9]:4711"} {
		for _, tc := range []struct{ xff, want string }{
			{"198.51.100.1", "a:198.51.100.1"},
			{"198.51.100.2", "a:198.51.100.2"},
			// What the client wrote itself, at the left, is not believed.
			{"192.0.2.66, 198.51.100.1", "a:198.51.100.1"},
			{"[2001:db8:1:2::5]:80", "a:2001:db8:1:2::/64"},
		} {
			got, err := hopsKey(t, cfg, peer, "X-Forwarded-For", tc.xff)
			if err != nil || got != tc.want {
				t.Errorf("peer %s, X-Forwarded-For %q: key %q, %v; want %q", peer, tc.xff, got, err, tc.want)
			}
		}
		// No header: no key (the peer is the proxy, never the client).
		if got, err := hopsKey(t, cfg, peer, "", ""); !errors.Is(err, keyfunc.ErrNoClientIP) {
			t.Errorf("peer %s, no X-Forwarded-For: key %q, %v; want an ErrNoClientIP", peer, got, err)
		}
	}

	// ip_source defaults to x-forwarded-for; forwarded works too, and two
	// hops take the second entry from the right.
	cfg = mustParse(t, "trusted_hops: 2\n"+pol, "hops.yaml")
	if got, err := hopsKey(t, cfg, "@", "X-Forwarded-For", "192.0.2.66, 198.51.100.3, 10.0.0.1"); err != nil || got != "a:198.51.100.3" {
		t.Errorf("trusted_hops 2, default source: key %q, %v; want a:198.51.100.3", got, err)
	}
	if got, err := hopsKey(t, cfg, "@", "X-Forwarded-For", "10.0.0.1"); !errors.Is(err, keyfunc.ErrNoClientIP) {
		t.Errorf("trusted_hops 2, one entry: key %q, %v; want an ErrNoClientIP", got, err)
	}
	cfg = mustParse(t, "{\"trusted_hops\": 2, \"ip_source\": \"forwarded\", \"policies\": [{\"name\": \"a\", \"limit\": 1, \"window\": \"1s\"}]}", "hops.json")
	if got, err := hopsKey(t, cfg, "10.9.9.9:1", "Forwarded", "for=192.0.2.66, for=198.51.100.4;proto=https, for=10.0.0.1"); err != nil || got != "a:198.51.100.4" {
		t.Errorf("trusted_hops 2, forwarded: key %q, %v; want a:198.51.100.4", got, err)
	}
}

// TestConfigTrustedHopsUnset: a file that sets neither trusted_hops nor
// trusted_proxies (or sets trusted_hops: 0) keys by the peer and reads no
// header, as before trusted_hops existed.
func TestConfigTrustedHopsUnset(t *testing.T) {
	const pol = "policies:\n  - {name: a, limit: 1, window: 1s}\n"
	for _, head := range []string{"", "trusted_hops: 0\n"} {
		cfg := mustParse(t, head+pol, "none.yaml")
		if cfg.TrustedHops != 0 {
			t.Errorf("%q: TrustedHops = %d, want 0", head, cfg.TrustedHops)
		}
		if got, err := hopsKey(t, cfg, "203.0.113.9:4711", "X-Forwarded-For", "198.51.100.1"); err != nil || got != "a:203.0.113.9" {
			t.Errorf("%q: key %q, %v; want the peer's, a:203.0.113.9", head, got, err)
		}
		if got, err := hopsKey(t, cfg, "@", "X-Forwarded-For", "198.51.100.1"); !errors.Is(err, keyfunc.ErrNoClientIP) {
			t.Errorf("%q, peer @: key %q, %v; want an ErrNoClientIP", head, got, err)
		}
	}
	// trusted_hops: 0 beside trusted_proxies changes nothing either.
	cfg := mustParse(t, "trusted_proxies: [10.0.0.0/8]\ntrusted_hops: 0\n"+pol, "zero.yaml")
	if got, err := hopsKey(t, cfg, "10.0.0.1:1", "X-Forwarded-For", "198.51.100.1"); err != nil || got != "a:198.51.100.1" {
		t.Errorf("trusted_proxies with trusted_hops 0: key %q, %v; want a:198.51.100.1", got, err)
	}
}

// TestConfigTrustedHopsErrors: a trusted_hops keyfunc.IP would refuse, or
// one that would make it refuse the ip_source, is refused by the loader,
// as one error at the field to change, with its position.
func TestConfigTrustedHopsErrors(t *testing.T) {
	const pol = "policies:\n  - {name: a, limit: 1, window: 1s}\n"
	for _, tc := range []struct {
		name, file, doc string
		line, col       int
		field, reason   string
	}{
		{"negative", "h.yaml", "trusted_hops: -1\n", 1, 15, "trusted_hops", "between 0 and 32, got -1"},
		{"above MaxHops", "h.yaml", "trusted_hops: 33\n", 1, 15, "trusted_hops", "between 0 and 32, got 33"},
		{"huge", "h.yaml", "trusted_hops: 99999999999999999999\n", 1, 15, "trusted_hops", "must be a decimal integer that fits in 64 bits"},
		{"float", "h.yaml", "trusted_hops: 1.5\n", 1, 15, "trusted_hops", "must be an integer"},
		{"word", "h.yaml", "trusted_hops: one\n", 1, 15, "trusted_hops", "must be an integer"},
		{"list", "h.yaml", "trusted_hops: [1]\n", 1, 15, "trusted_hops", "must be an integer"},
		{"json string", "h.json", "{\"trusted_hops\": \"1\",\n" + `"policies": [{"name": "a", "limit": 1, "window": "1s"}]}`, 1, 18, "trusted_hops", "must be an integer"},
		{"with trusted_proxies", "h.yaml", "trusted_proxies: [10.0.0.0/8]\ntrusted_hops: 1\n", 2, 15, "trusted_hops", "excludes trusted_proxies"},
		{"with trusted_proxies after", "h.yaml", "trusted_hops: 1\ntrusted_proxies: 10.0.0.1\n", 1, 15, "trusted_hops", "excludes trusted_proxies"},
		{"with header source", "h.yaml", "trusted_hops: 1\nip_source: header:X-Real-IP\n", 2, 12, "ip_source", "needs trusted_proxies"},
		{"source without either", "h.yaml", "ip_source: x-forwarded-for\n", 1, 12, "ip_source", "needs trusted_proxies or trusted_hops"},
		{"source with zero hops", "h.yaml", "trusted_hops: 0\nip_source: forwarded\n", 2, 12, "ip_source", "needs trusted_proxies or trusted_hops"},
		{"unknown source", "h.yaml", "trusted_hops: 1\nip_source: carrier-pigeon\n", 2, 12, "ip_source", "unknown source"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := tc.doc
			if tc.file == "h.yaml" {
				doc += pol
			}
			_, err := policy.ParseConfig([]byte(doc), tc.file)
			errs := policy.ConfigErrors(err)
			if len(errs) != 1 {
				t.Fatalf("ParseConfig(%q) = %v; want one error", doc, err)
			}
			ce := errs[0]
			if ce.Field != tc.field || ce.Line != tc.line || ce.Column != tc.col || !strings.Contains(ce.Reason, tc.reason) {
				t.Errorf("error %v; want %d:%d %s: ...%s...", ce, tc.line, tc.col, tc.field, tc.reason)
			}
		})
	}
	// A trusted_proxies entry that does not parse is reported at it, and
	// trusted_hops beside it still is.
	_, err := policy.ParseConfig([]byte("trusted_proxies: [bogus]\ntrusted_hops: 1\n"+pol), "h.yaml")
	var fields []string
	for _, ce := range policy.ConfigErrors(err) {
		fields = append(fields, ce.Field)
	}
	if strings.Join(fields, " ") != "trusted_proxies[0] trusted_hops" {
		t.Errorf("bad trusted proxy beside trusted_hops: errors at %q; want trusted_proxies[0], trusted_hops", fields)
	}
}

// TestConfigIPSourceWithoutTrustNamesTheFix: an ip_source in a file that
// declares neither trusted_proxies nor trusted_hops is refused with the fix
// that will load. For header:NAME that is trusted_proxies alone: the message
// once offered trusted_hops as well, which the loader then refuses for a
// header: source ("needs trusted_proxies"), so that a user following it met
// a second error. An unknown source is named unknown at once, rather than
// after the proxies are declared.
func TestConfigIPSourceWithoutTrustNamesTheFix(t *testing.T) {
	const pol = "policies:\n  - {name: a, limit: 1, window: 1s}\n"
	for _, tc := range []struct {
		name, source, want string
	}{
		{"x-forwarded-for", "x-forwarded-for", "needs trusted_proxies or trusted_hops: headers from untrusted peers are never read"},
		{"forwarded", "forwarded", "needs trusted_proxies or trusted_hops: headers from untrusted peers are never read"},
		{"header", "header:X-Real-IP", "header:X-Real-IP needs trusted_proxies: headers from untrusted peers are never read, and a header of one value is believed only from a proxy known by its address"},
		{"unknown", "carrier-pigeon", `unknown source "carrier-pigeon"; want x-forwarded-for, forwarded or header:NAME`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := "ip_source: " + tc.source + "\n" + pol
			_, err := policy.ParseConfig([]byte(doc), "s.yaml")
			errs := policy.ConfigErrors(err)
			if len(errs) != 1 {
				t.Fatalf("ParseConfig(%q) = %v; want one error", doc, err)
			}
			if ce := errs[0]; ce.Field != "ip_source" || ce.Line != 1 || ce.Column != 12 || ce.Reason != tc.want {
				t.Errorf("ParseConfig(%q) = %v\nwant s.yaml:1:12: ip_source: %s", doc, ce, tc.want)
			}
			// The fix the message names loads.
			fix := "trusted_proxies: [10.0.0.0/8]\n"
			if tc.name == "unknown" {
				return
			}
			if _, err := policy.ParseConfig([]byte(fix+doc), "s.yaml"); err != nil {
				t.Errorf("with %q: %v; want the file to load", fix, err)
			}
			if tc.name == "header" {
				return
			}
			fix = "trusted_hops: 1\n"
			if _, err := policy.ParseConfig([]byte(fix+doc), "s.yaml"); err != nil {
				t.Errorf("with %q: %v; want the file to load", fix, err)
			}
		})
	}
}

// TestConfigIPSourceHeaderRefusedForItsName: a header: source that no
// trust setting makes load (a list of hops, Host, a name that is no
// header name) is refused for what is wrong with its name, whatever the
// file declares of its proxies: without trusted_proxies, and with
// trusted_hops, it was refused as needing trusted_proxies, so that a user
// who declared them as told met a second error. The fix the message names
// instead loads.
func TestConfigIPSourceHeaderRefusedForItsName(t *testing.T) {
	const pol = "policies:\n  - {name: a, limit: 1, window: 1s}\n"
	const (
		none    = ""
		proxies = "trusted_proxies: [10.0.0.0/8]\n"
		hops    = "trusted_hops: 1\n"
	)
	host := `header:Host names the server the request is for, not the client; write the header your proxies set to the client's address (header:X-Real-IP), or x-forwarded-for or forwarded`
	const badName = `"header:X Real IP": "X Real IP" is not a header name: it holds ' ' (a header name is letters, digits and !#$%&'*+-.^_` + "`|~)"
	for _, tc := range []struct {
		source string
		want   map[string]string // by trust declared
		fix    string            // the ip_source the message names, if any
	}{
		{"header:X-Forwarded-For", map[string]string{
			none:    "header:X-Forwarded-For is a list of hops, not one address; write ip_source: x-forwarded-for, with trusted_proxies or trusted_hops",
			proxies: "header:X-Forwarded-For is a list of hops, not one address; write ip_source: x-forwarded-for",
			hops:    "header:X-Forwarded-For is a list of hops, not one address; write ip_source: x-forwarded-for",
		}, "x-forwarded-for"},
		{"header:forwarded", map[string]string{
			none:    "header:forwarded is a list of hops, not one address; write ip_source: forwarded, with trusted_proxies or trusted_hops",
			proxies: "header:forwarded is a list of hops, not one address; write ip_source: forwarded",
			hops:    "header:forwarded is a list of hops, not one address; write ip_source: forwarded",
		}, "forwarded"},
		{"header:Host", map[string]string{none: host, proxies: host, hops: host}, ""},
		{`"header:X Real IP"`, map[string]string{
			none:    badName,
			proxies: badName,
			hops:    badName,
		}, ""},
		{"'header:'", map[string]string{
			none:    `"header:" needs a header name: header:NAME`,
			proxies: `"header:" needs a header name: header:NAME`,
			hops:    `"header:" needs a header name: header:NAME`,
		}, ""},
	} {
		t.Run(tc.source, func(t *testing.T) {
			for _, trust := range []string{none, proxies, hops} {
				doc := trust + "ip_source: " + tc.source + "\n" + pol
				_, err := policy.ParseConfig([]byte(doc), "s.yaml")
				if errs := policy.ConfigErrors(err); len(errs) != 1 || errs[0].Field != "ip_source" || errs[0].Reason != tc.want[trust] {
					t.Errorf("ParseConfig(%q) = %v\nwant the one error ip_source: %s", doc, err, tc.want[trust])
				}
				if tc.fix == "" {
					continue
				}
				for _, with := range []string{proxies, hops} {
					if trust != none && with != trust {
						continue // the message names only the source
					}
					fixed := with + "ip_source: " + tc.fix + "\n" + pol
					if _, err := policy.ParseConfig([]byte(fixed), "s.yaml"); err != nil {
						t.Errorf("ParseConfig(%q) = %v; want the fix named to load", fixed, err)
					}
				}
			}
		})
	}
}
