package policy_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

func mustParse(t *testing.T, doc, name string) *policy.Config {
	t.Helper()
	cfg, err := policy.ParseConfig([]byte(doc), name)
	if err != nil {
		t.Fatalf("ParseConfig(%s) error: %v", name, err)
	}
	return cfg
}

func TestParseConfigDefaults(t *testing.T) {
	cfg := mustParse(t, "policies:\n  - name: api\n    limit: 100\n    window: 1m\n", "min.yaml")
	if got, want := len(cfg.Policies), 1; got != want {
		t.Fatalf("len(Policies) = %d, want %d", got, want)
	}
	want := algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 100, Window: time.Minute}
	if got := cfg.Policies[0].Spec(); got != want {
		t.Errorf("Spec = %v, want %v", got, want)
	}
	d := cfg.Definitions[0]
	if got, want := d.KeyString(), "ip"; got != want {
		t.Errorf("KeyString = %q, want %q", got, want)
	}
	if d.Line != 2 || d.Column != 5 {
		t.Errorf("policy position = %d:%d, want 2:5", d.Line, d.Column)
	}
	if cfg.Headers != policy.HeadersIETF || cfg.FailureMode != policy.FailureOpen {
		t.Errorf("Headers, FailureMode = %q, %q; want ietf, open", cfg.Headers, cfg.FailureMode)
	}
	if cfg.IPv6Prefix != 64 || cfg.FailureRetryAfter != time.Second || cfg.Version != 1 || cfg.File != "min.yaml" {
		t.Errorf("defaults = %+v", cfg)
	}
	if d.OnMissingKey != policy.RejectBadRequest || cfg.Policies[0].KeyAction() != policy.RejectBadRequest {
		t.Errorf("OnMissingKey = %v, want reject-400", d.OnMissingKey)
	}
}

const fullYAML = `version: 1
headers: draft-7
failure_mode: closed
failure_retry_after: 5s
trusted_proxies: [10.0.0.0/8, 192.0.2.7]
ip_source: x-forwarded-for
ipv6_prefix: 56
policies:
  - name: burst
    algorithm: token_bucket
    limit: 10
    window: 1s
    burst: 20
  - name: login
    algorithm: sliding_log
    limit: 5
    window: 1m
    key: [ip, header:X-Login-User]
    fallback: [ip]
    on_missing_key: reject_403
    routes: ["POST /login"]
  - name: daily
    algorithm: sliding_buckets
    limit: 2000
    window: 1d
    buckets: 24
    key: user
    fallback: [[cookie:session], ip]
    on_missing_key: skip
    methods: [GET, HEAD]
  - name: queue
    algorithm: leaky_queue
    limit: 5
    window: 1s
    max_delay: 2s
    key: global
`

const fullJSON = `{
  "version": 1, "headers": "draft-7", "failure_mode": "closed", "failure_retry_after": "5s",
  "trusted_proxies": ["10.0.0.0/8", "192.0.2.7"], "ip_source": "x-forwarded-for", "ipv6_prefix": 56,
  "policies": [
    {"name": "burst", "algorithm": "token_bucket", "limit": 10, "window": "1s", "burst": 20},
    {"name": "login", "algorithm": "sliding_log", "limit": 5, "window": "1m",
     "key": ["ip", "header:X-Login-User"], "fallback": ["ip"], "on_missing_key": "reject_403",
     "routes": ["POST /login"]},
    {"name": "daily", "algorithm": "sliding_buckets", "limit": 2000, "window": "1d", "buckets": 24,
     "key": "user", "fallback": [["cookie:session"], "ip"], "on_missing_key": "skip", "methods": ["GET", "HEAD"]},
    {"name": "queue", "algorithm": "leaky_queue", "limit": 5, "window": "1s", "max_delay": "2s", "key": "global"}
  ]
}`

func TestParseConfigFull(t *testing.T) {
	for _, tc := range []struct{ name, doc string }{
		{"full.yaml", fullYAML},
		{"full.json", fullJSON},
		{"full.conf", fullJSON}, // JSON by content
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mustParse(t, tc.doc, tc.name)
			if cfg.Headers != policy.HeadersDraft7 || cfg.FailureMode != policy.FailureClosed || cfg.FailureRetryAfter != 5*time.Second {
				t.Errorf("settings = %q %q %s", cfg.Headers, cfg.FailureMode, cfg.FailureRetryAfter)
			}
			wantProxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32")}
			if !reflect.DeepEqual(cfg.TrustedProxies, wantProxies) || cfg.IPv6Prefix != 56 {
				t.Errorf("TrustedProxies, IPv6Prefix = %v, %d", cfg.TrustedProxies, cfg.IPv6Prefix)
			}
			wantSpecs := []algorithms.Spec{
				{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Second, Burst: 20},
				{Algorithm: algorithms.SlidingLog, Limit: 5, Window: time.Minute},
				{Algorithm: algorithms.SlidingBuckets, Limit: 2000, Window: 24 * time.Hour, Buckets: 24},
				{Algorithm: algorithms.LeakyQueue, Limit: 5, Window: time.Second, MaxDelay: 2 * time.Second},
			}
			wantKeys := []string{"ip", "ip+header:X-Login-User | ip", "user | cookie:session | ip", "global"}
			wantActions := []policy.KeyAction{policy.RejectBadRequest, policy.RejectForbidden, policy.SkipPolicy, policy.RejectBadRequest}
			if len(cfg.Policies) != len(wantSpecs) {
				t.Fatalf("len(Policies) = %d, want %d", len(cfg.Policies), len(wantSpecs))
			}
			for i, p := range cfg.Policies {
				d := cfg.Definitions[i]
				if p.Spec() != wantSpecs[i] || p.Name() != d.Name {
					t.Errorf("policy %d = %s %v, want %v", i, p.Name(), p.Spec(), wantSpecs[i])
				}
				if got := d.KeyString(); got != wantKeys[i] {
					t.Errorf("policy %s KeyString = %q, want %q", p.Name(), got, wantKeys[i])
				}
				if p.KeyAction() != wantActions[i] {
					t.Errorf("policy %s KeyAction = %v, want %v", p.Name(), p.KeyAction(), wantActions[i])
				}
			}
			if got := cfg.Definitions[1].Routes; !reflect.DeepEqual(got, []string{"POST /login"}) {
				t.Errorf("login Routes = %q", got)
			}
			if got := cfg.Definitions[2].Methods; !reflect.DeepEqual(got, []string{"GET", "HEAD"}) {
				t.Errorf("daily Methods = %q", got)
			}
		})
	}
}

// TestParseConfigKeys checks that the configured keys are the ones the
// policies extract: trusted proxies, joins, fallbacks and missing keys.
func TestParseConfigKeys(t *testing.T) {
	cfg := mustParse(t, fullYAML, "full.yaml")
	set, err := policy.NewSet(cfg.Policies, policy.WithPatternFunc(func(*http.Request) string { return "/login" }))
	if err != nil {
		t.Fatal(err)
	}
	keys := func(r *http.Request) ([]string, error) {
		var res policy.Result
		if err := set.Prepare(r, set.Match(r), &res); err != nil {
			return nil, err
		}
		var out []string
		for i := 0; i < res.Len(); i++ {
			out = append(out, res.Key(i))
		}
		return out, nil
	}

	// A POST to /login from behind the trusted proxy, with a login user:
	// burst, login and queue apply; daily (GET only) does not.
	r := httptest.NewRequest("POST", "/login", nil)
	r.RemoteAddr = "10.1.2.3:5555"
	r.Header.Set("X-Forwarded-For", "198.51.100.9")
	r.Header.Set("X-Login-User", "alice")
	got, err := keys(r)
	if err != nil {
		t.Fatal(err)
	}
	ip := keyfunc.Must(keyfunc.IP())
	join := keyfunc.Must(keyfunc.Join(ip, keyfunc.Must(keyfunc.Header("X-Login-User"))))
	r2 := httptest.NewRequest("POST", "/login", nil)
	r2.RemoteAddr = "198.51.100.9:1"
	r2.Header.Set("X-Login-User", "alice")
	wantLogin, _ := join(r2)
	wantFirst, _ := keyfunc.Must(keyfunc.FirstOf(join, ip))(r2)
	want := []string{"burst:198.51.100.9", "login:" + wantFirst, "queue:*"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("keys = %q, want %q (joined key %q)", got, want, wantLogin)
	}

	// A forged header from an untrusted peer is ignored.
	r.RemoteAddr = "203.0.113.5:4444"
	got, err = keys(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got[0], "burst:203.0.113.5") {
		t.Errorf("untrusted peer key = %q, want burst:203.0.113.5", got[0])
	}

	// A GET from a signed-in user: daily is keyed by the user.
	r = httptest.NewRequest("GET", "/search", nil)
	r.RemoteAddr = "203.0.113.5:4444"
	r = r.WithContext(keyfunc.WithUser(context.Background(), "bob"))
	got, err = keys(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || !strings.HasPrefix(got[1], "daily:") || !strings.Contains(got[1], "bob") {
		t.Errorf("GET keys = %q, want daily keyed by bob", got)
	}
}

func TestParseConfigMissingKey(t *testing.T) {
	doc := `policies:
  - name: by-user
    limit: 1
    window: 1s
    key: header:X-User
    on_missing_key: reject_403
`
	cfg := mustParse(t, doc, "k.yaml")
	set, err := policy.NewSet(cfg.Policies)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	var res policy.Result
	err = set.Prepare(r, set.Match(r), &res)
	var ke *policy.KeyError
	if !errors.As(err, &ke) || ke.Action.Status() != http.StatusForbidden {
		t.Errorf("Prepare without header = %v, want a KeyError answering 403", err)
	}
}

func TestParseConfigErrors(t *testing.T) {
	const pol = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	for _, tc := range []struct {
		name, file, doc string
		line, col       int
		field, reason   string
	}{
		// Structure.
		{"unknown top field", "c.yaml", "polices: []\n", 1, 1, "polices", "unknown field"},
		{"unknown policy field", "c.yaml", pol + "    limt: 3\n", 5, 5, "policies[0].limt", "unknown field"},
		{"missing policies", "c.yaml", "headers: ietf\n", 1, 1, "policies", "is missing"},
		{"empty policies", "c.yaml", "policies: []\n", 1, 11, "policies", "is empty"},
		{"policies not a list", "c.yaml", "policies: 3\n", 1, 11, "policies", "must be a list"},
		{"missing limit", "c.yaml", "policies:\n  - name: a\n    window: 1s\n", 2, 5, "policies[0].limit", "is missing"},
		{"not a mapping", "c.yaml", "- a\n- b\n", 1, 1, "", "must be a mapping"},
		{"duplicate name", "c.yaml", pol + "  - name: a\n    limit: 2\n    window: 1s\n", 5, 11, "policies[1].name", "already the name"},
		// Values.
		{"limit zero", "c.yaml", "policies:\n  - name: a\n    limit: 0\n    window: 1s\n", 3, 12, "policies[0].limit", "must be positive"},
		{"limit string", "c.yaml", "policies:\n  - name: a\n    limit: ten\n    window: 1s\n", 3, 12, "policies[0].limit", "must be an integer"},
		{"window no unit", "c.yaml", "policies:\n  - name: a\n    limit: 1\n    window: 60\n", 4, 13, "policies[0].window", "has no unit"},
		{"window bad", "c.yaml", "policies:\n  - name: a\n    limit: 1\n    window: soon\n", 4, 13, "policies[0].window", "not a duration"},
		{"window too long", "c.yaml", "policies:\n  - name: a\n    limit: 1\n    window: 48h\n", 4, 13, "policies[0].window", "must be at most"},
		{"algorithm unknown", "c.yaml", pol + "    algorithm: gcra\n", 5, 16, "policies[0].algorithm", "unknown kind"},
		{"burst on window", "c.yaml", pol + "    burst: 5\n", 5, 12, "policies[0].burst", "applies only to"},
		{"buckets divide", "c.yaml", "policies:\n  - name: a\n    limit: 1\n    window: 1s\n    algorithm: sliding_buckets\n    buckets: 7\n", 6, 14, "policies[0].buckets", "does not divide"},
		{"bad name", "c.yaml", "policies:\n  - name: a b\n    limit: 1\n    window: 1s\n", 2, 11, "policies[0].name", "contains"},
		{"bad key part", "c.yaml", pol + "    key: [ip, usr]\n", 5, 15, "policies[0].key", `unknown key part "usr"`},
		{"bad header name", "c.yaml", pol + "    key: \"header:X Y\"\n", 5, 10, "policies[0].key", "header"},
		{"key part of unknown kind", "c.yaml", pol + "    key: \"bogus:x\"\n", 5, 10, "policies[0].key", `unknown key part "bogus:x"`},
		{"header part without name", "c.yaml", pol + "    key: \"header:\"\n", 5, 10, "policies[0].key", `key part "header:" needs a header name: header:NAME`},
		{"bad fallback", "c.yaml", pol + "    fallback: [[]]\n", 5, 16, "policies[0].fallback[0]", "is empty"},
		{"bad on_missing_key", "c.yaml", pol + "    on_missing_key: ignore\n", 5, 21, "policies[0].on_missing_key", "want one of reject_400"},
		{"bad method", "c.yaml", pol + "    methods: [\"GE T\"]\n", 5, 15, "policies[0].methods", "not a method token"},
		{"bad route", "c.yaml", pol + "    routes: [login]\n", 5, 14, "policies[0].routes", "must start with '/'"},
		{"bad headers", "c.yaml", "headers: draft-8\n" + pol, 1, 10, "headers", "want one of ietf"},
		{"bad failure_mode", "c.yaml", "failure_mode: maybe\n" + pol, 1, 15, "failure_mode", "want one of open"},
		{"bad proxy", "c.yaml", "trusted_proxies: [10.0.0.0/33]\n" + pol, 1, 19, "trusted_proxies[0]", "neither a CIDR"},
		{"source without proxies", "c.yaml", "ip_source: forwarded\n" + pol, 1, 12, "ip_source", "needs trusted_proxies"},
		{"bad source", "c.yaml", "trusted_proxies: [10.0.0.0/8]\nip_source: carrier-pigeon\n" + pol, 2, 12, "ip_source", "unknown source"},
		{"bad ipv6_prefix", "c.yaml", "ipv6_prefix: 129\n" + pol, 1, 14, "ipv6_prefix", "between 1 and 128"},
		{"bad ipv4_prefix", "c.yaml", "ipv4_prefix: 0\n" + pol, 1, 14, "ipv4_prefix", "between 1 and 32"},
		{"bad version", "c.yaml", "version: 2\n" + pol, 1, 10, "version", "must be 1"},
		// Syntax.
		{"yaml syntax", "c.yaml", "policies:\n  - name: a\n   limit: [1\n", 3, 4, "", "invalid YAML"},
		{"yaml duplicate key", "c.yaml", pol + "    limit: 2\n", 5, 5, "policies[0].limit", "appears twice"},
		{"yaml empty", "c.yaml", "# nothing\n", 1, 1, "", "empty"},
		{"json syntax", "c.json", "{\n  \"policies\": [\n    {\"name\": \"a\",}\n  ]\n}", 3, 18, "", "invalid JSON"},
		{"json truncated", "c.json", "{\"policies\": [", 1, 15, "", "unexpected end"},
		{"json unknown field", "c.json", "{\n  \"policies\": [{\"name\": \"a\", \"limit\": 1, \"window\": \"1s\",\n    \"cost\": 2}]\n}", 3, 5, "policies[0].cost", "unknown field"},
		{"json limit zero", "c.json", "{\"policies\": [{\"name\": \"a\", \"limit\": 0, \"window\": \"1s\"}]}", 1, 38, "policies[0].limit", "must be positive"},
		{"json duplicate key", "c.json", "{\"headers\": \"ietf\", \"headers\": \"none\", \"policies\": [{\"name\": \"a\", \"limit\": 1, \"window\": \"1s\"}]}", 1, 21, "headers", "appears twice"},
		{"json trailing", "c.json", "{\"policies\": []} {}", 1, 18, "", "after the top-level value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := policy.ParseConfig([]byte(tc.doc), tc.file)
			if err == nil {
				t.Fatalf("ParseConfig = %+v, want an error", cfg)
			}
			if cfg != nil {
				t.Errorf("ParseConfig returned a Config with error %v", err)
			}
			if !errors.Is(err, policy.ErrConfig) {
				t.Errorf("errors.Is(%v, ErrConfig) = false", err)
			}
			ces := policy.ConfigErrors(err)
			if len(ces) == 0 {
				t.Fatalf("ConfigErrors(%v) is empty", err)
			}
			ce := ces[0]
			if ce.File != tc.file || ce.Line != tc.line || ce.Column != tc.col || ce.Field != tc.field || !strings.Contains(ce.Reason, tc.reason) {
				t.Errorf("error = %s:%d:%d field %q reason %q\nwant    %s:%d:%d field %q reason containing %q",
					ce.File, ce.Line, ce.Column, ce.Field, ce.Reason, tc.file, tc.line, tc.col, tc.field, tc.reason)
			}
			if !strings.HasPrefix(err.Error(), "policy: "+tc.file+":") {
				t.Errorf("Error() = %q, want it to start with policy: %s:", err, tc.file)
			}
		})
	}
}

func TestParseConfigReportsEveryError(t *testing.T) {
	doc := `headers: bogus
policies:
  - name: a
    limit: 0
    window: 1s
  - name: b
    limit: 1
    window: 1x
`
	_, err := policy.ParseConfig([]byte(doc), "multi.yaml")
	ces := policy.ConfigErrors(err)
	var fields []string
	for _, ce := range ces {
		fields = append(fields, ce.Field)
	}
	want := []string{"headers", "policies[0].limit", "policies[1].window"}
	if !slices.Equal(fields, want) { // in file order
		t.Errorf("fields in error = %q, want %q (error: %v)", fields, want, err)
	}
}

func TestParseConfigYAMLFeatures(t *testing.T) {
	doc := `defaults: &d
  limit: 5
  window: 10s
policies:
  - <<: *d
    name: a
  - <<: *d
    name: b
    limit: 7
`
	// "defaults" is not a field: anchors must live in a known place.
	if _, err := policy.ParseConfig([]byte(doc), "a.yaml"); err == nil {
		t.Error("unknown top-level field holding an anchor was accepted")
	}
	doc = `policies:
  - &a
    name: a
    limit: 5
    window: 10s
  - <<: *a
    name: b
    limit: 7
`
	cfg := mustParse(t, doc, "a.yaml")
	if got := cfg.Policies[1].Spec(); got.Limit != 7 || got.Window != 10*time.Second {
		t.Errorf("merged policy b = %v, want limit 7 window 10s", got)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rk.json")
	if err := os.WriteFile(path, []byte(fullJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := policy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.File != path || len(cfg.Policies) != 4 {
		t.Errorf("Load = File %q, %d policies", cfg.File, len(cfg.Policies))
	}
	if _, err := policy.Load(filepath.Join(dir, "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want ErrNotExist", err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte(strings.Repeat("#", 2<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := policy.Load(big); !errors.Is(err, policy.ErrConfig) {
		t.Errorf("Load(2 MiB) = %v, want ErrConfig", err)
	}
}

// TestExampleConfig loads the annotated sample so that it cannot rot.
func TestExampleConfig(t *testing.T) {
	cfg, err := policy.Load("../examples/config/ratekeeper.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range cfg.Policies {
		names = append(names, p.Name())
	}
	if want := []string{"per-second", "per-minute", "login", "search-daily"}; !reflect.DeepEqual(names, want) {
		t.Errorf("policies = %q, want %q", names, want)
	}
	if len(cfg.TrustedProxies) != 2 {
		t.Errorf("TrustedProxies = %v", cfg.TrustedProxies)
	}
	if _, err := policy.NewSet(cfg.Policies); err != nil {
		t.Errorf("NewSet(example policies) = %v", err)
	}
}

// TestParseConfigIPSource checks that ip_source selects the header read
// from trusted proxies, and ipv6_prefix the grouping of IPv6 clients.
func TestParseConfigIPSource(t *testing.T) {
	const pol = "policies:\n  - {name: a, limit: 1, window: 1s}\n"
	for _, tc := range []struct {
		name, head  string
		remote      string
		header, val string
		want        string
	}{
		{"xff default", "trusted_proxies: [10.0.0.0/8]\n", "10.0.0.1:1", "X-Forwarded-For", "198.51.100.1", "a:198.51.100.1"},
		{"forwarded", "trusted_proxies: [10.0.0.0/8]\nip_source: forwarded\n", "10.0.0.1:1", "Forwarded", "for=198.51.100.2", "a:198.51.100.2"},
		{"real ip", "trusted_proxies: ['::1']\nip_source: header:X-Real-IP\n", "[::1]:1", "X-Real-IP", "198.51.100.3", "a:198.51.100.3"},
		{"untrusted", "trusted_proxies: [10.0.0.0/8]\n", "192.0.2.9:1", "X-Forwarded-For", "198.51.100.1", "a:192.0.2.9"},
		{"ipv6 prefix", "ipv6_prefix: 48\n", "[2001:db8:1:2::5]:1", "", "", "a:2001:db8:1::/48"},
		{"ipv4 prefix", "ipv4_prefix: 24\n", "192.0.2.9:1", "", "", "a:192.0.2.0/24"},
		{"bom", "\ufeff", "192.0.2.9:1", "", "", "a:192.0.2.9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mustParse(t, tc.head+pol, "ip.yaml")
			set, err := policy.NewSet(cfg.Policies)
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.remote
			if tc.header != "" {
				r.Header.Set(tc.header, tc.val)
			}
			var res policy.Result
			if err := set.Prepare(r, set.Match(r), &res); err != nil {
				t.Fatal(err)
			}
			if got := res.Key(0); got != tc.want {
				t.Errorf("key = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestParseConfigNesting guards against documents nested so deeply that
// the YAML parser (quadratic in the depth) would stall: they are refused
// before parsing, with the position where the limit was passed.
func TestParseConfigNesting(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		line, col int
		reason    string
	}{
		{"flow", "policies: " + strings.Repeat("[", 30000), 1, 75, "nests more than 64 levels"},
		{"flow maps", "policies:\n  " + strings.Repeat("{a: ", 30000), 2, 259, "nests more than 64 levels"},
		{"block", strings.Repeat("- ", 30000) + "a", 1, 257, "indented more than 256 columns"},
		{"json", strings.Repeat("[", 30000), 1, 101, "nests more than 100 levels"},
		{"json just within", strings.Repeat("[", 100), 1, 101, "invalid JSON"},
	} {
		name := "deep.yaml"
		if strings.HasPrefix(tc.name, "json") {
			name = "deep.json"
		}
		_, err := policy.ParseConfig([]byte(tc.doc), name)
		ces := policy.ConfigErrors(err)
		if len(ces) != 1 || ces[0].Line != tc.line || ces[0].Column != tc.col || !strings.Contains(ces[0].Reason, tc.reason) {
			t.Errorf("%s: error %v, want %d:%d %q", tc.name, err, tc.line, tc.col, tc.reason)
		}
	}
	// Brackets in quotes and comments do not count.
	doc := "# [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\npolicies:\n  - name: a\n    limit: 1\n    window: 1s\n    methods: [\"" + strings.Repeat("[", 100) + "\"]\n"
	_, err := policy.ParseConfig([]byte(doc), "q.yaml")
	if ces := policy.ConfigErrors(err); len(ces) != 1 || ces[0].Field != "policies[0].methods" {
		t.Errorf("quoted and commented brackets: error %v, want only the bad method", err)
	}
}

// TestParseConfigFormatByContent: a file whose extension names no format
// is JSON when its first character (past blanks) is '{', YAML otherwise;
// one holding only blanks is an error, not a JSON document.
func TestParseConfigFormatByContent(t *testing.T) {
	for _, tt := range []struct{ name, doc string }{
		{"yaml", "policies:\n  - {name: p, limit: 3, window: 1m}\n"},
		{"json", ` {"policies": [{"name": "p", "limit": 3, "window": "1m"}]}`},
	} {
		cfg, err := policy.ParseConfig([]byte(tt.doc), "ratekeeper.conf")
		if err != nil || len(cfg.Policies) != 1 || cfg.Policies[0].Spec().Limit != 3 {
			t.Errorf("ParseConfig(%s in ratekeeper.conf) = %v, %v; want one policy of limit 3", tt.name, cfg, err)
		}
	}
	if _, err := policy.ParseConfig([]byte(" \n\t"), "ratekeeper.conf"); err == nil {
		t.Error("ParseConfig(blanks in ratekeeper.conf) = nil error")
	}
}
