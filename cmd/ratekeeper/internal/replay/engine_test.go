package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
	"github.com/ratekeeper/ratekeeper/policy"
)

func parse(t testing.TB, doc string) *policy.Config {
	t.Helper()
	cfg, err := policy.ParseConfig([]byte(doc), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// TestBoundaryBurst replays the seeds' boundary burst (100/min, 100
// requests at 59 s and 100 at 61 s) and checks what each algorithm admits:
// fixed window 200, sliding log 100, sliding window counter 101.
func TestBoundaryBurst(t *testing.T) {
	cfg := parse(t, "policies:\n  - {name: a, limit: 100, window: 1m, algorithm: fixed_window}\n")
	e, err := New(cfg, Options{Compare: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range []int{59, 61} {
		for range 100 {
			en := logparse.Entry{Time: t0.Add(time.Duration(sec) * time.Second), Addr: "192.0.2.1", Method: "GET", Path: "/"}
			if err := e.Add(&en); err != nil {
				t.Fatal(err)
			}
		}
	}
	rep, err := e.Finish()
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Policies[0]
	if p.Requests != 200 || p.Rejected != 0 || rep.Rejected != 0 {
		t.Errorf("fixed window: requests %d rejected %d, want 200, 0", p.Requests, p.Rejected)
	}
	admitted := map[string]int64{}
	for _, c := range p.Compare {
		admitted[c.Label] = p.Requests - c.Rejected
	}
	for kind, want := range map[string]int64{"fixed_window": 200, "sliding_log": 100, "sliding_window": 101} {
		if admitted[kind] != want {
			t.Errorf("%s admitted %d, want %d (all: %v)", kind, admitted[kind], want, admitted)
		}
	}
	if len(p.Compared) != len(p.Compare) {
		t.Errorf("%d compared series for %d algorithms", len(p.Compared), len(p.Compare))
	}
	// Windows aligned to the minute: 100 requests in minute 0, 100 in minute 1.
	if r := p.Rates; r.Keys != 1 || r.Windows != 2 || r.P50 != 100 || r.Max != 100 {
		t.Errorf("rates = %+v, want one key, two windows of 100", r)
	}
	var text strings.Builder
	if err := rep.WriteText(&text, Input{Files: []string{"x"}, Lines: 200, Entries: 200}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "sliding_log       100") {
		t.Errorf("report lacks the sliding_log comparison:\n%s", text.String())
	}
}

// TestRoutesUsersAndKeys checks that requests get their route pattern,
// user and headers, so that route rules and keys work as in a server.
func TestRoutesUsersAndKeys(t *testing.T) {
	cfg := parse(t, `policies:
  - name: login
    limit: 2
    window: 1m
    algorithm: sliding_log
    key: [ip, user]
    routes: ["POST /login"]
  - name: per-route
    limit: 1000
    window: 1m
    key: route
  - name: ua
    limit: 1
    window: 1h
    key: header:User-Agent
    on_missing_key: skip
`)
	e, err := New(cfg, Options{Routes: []string{"/items/{id}"}})
	if err != nil {
		t.Fatal(err)
	}
	add := func(sec int, method, path, user, ua string) {
		t.Helper()
		en := logparse.Entry{Time: t0.Add(time.Duration(sec) * time.Second), Addr: "192.0.2.1", Method: method, Path: path, User: user, UserAgent: ua}
		if err := e.Add(&en); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		add(i, "POST", "/login", "ann", "") // third rejected
		add(i, "POST", "/login", "bob", "") // third rejected
	}
	add(5, "GET", "/login", "ann", "")    // login does not apply
	add(6, "GET", "/items/7", "", "curl") // route /items/{id}
	add(7, "GET", "/items/8", "", "curl") // ua rejects the second curl
	add(8, "GET", "/nowhere", "", "")     // no route: per-route keys it (none), as the middleware with a pattern function
	add(9, "POST", "/login", "", "")      // no user: login has no key
	rep, err := e.Finish()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]PolicyReport{}
	for _, p := range rep.Policies {
		byName[p.Name] = p
	}
	if p := byName["login"]; p.Requests != 6 || p.Rejected != 2 || p.NoKey != 1 || p.Rates.Keys != 2 {
		t.Errorf("login = %d requests, %d rejected, %d without key, %d keys; want 6, 2, 1, 2", p.Requests, p.Rejected, p.NoKey, p.Rates.Keys)
	}
	// Route keys are the patterns as registered, methods kept (as
	// ServeMux sets r.Pattern): POST /login's, the path /login's for the
	// GET (no route of its method), and /items/{id}'s; a request no route
	// matches is keyed policy.NoRoute.
	if p := byName["per-route"]; p.Rates.Keys != 4 || p.NoKey != 0 {
		t.Errorf("per-route keys = %d (want POST /login, /login, /items/{id} and (none)), no key %d (want 0)", p.Rates.Keys, p.NoKey)
	}
	if p := byName["ua"]; p.Requests != 2 || p.Rejected != 1 || p.Skipped != 8 { // 11 requests: 2 with a UA, 1 rejected for want of another key first
		t.Errorf("ua = %d requests, %d rejected, %d skipped; want 2, 1, 8", p.Requests, p.Rejected, p.Skipped)
	}
	if len(byName["login"].Top) != 2 || byName["login"].Top[0].Count != 1 {
		t.Errorf("login top keys = %v", byName["login"].Top)
	}
}

func TestRatesAndCandidates(t *testing.T) {
	// Key 0 sends 1..100 requests in windows 0..99; key 1 sends 1000 in one.
	var events []event
	for w := int64(0); w < 100; w++ {
		for range w + 1 {
			events = append(events, event{t: w * 10, key: 0})
		}
	}
	for range 1000 {
		events = append(events, event{t: 5, key: 1})
	}
	w, p := windowCounts(events, 2, 10)
	r := rates(w, p, 2)
	// Peaks: key 0's busiest window holds 100, key 1's 1000.
	want := Rates{Keys: 2, Windows: 101, P50: 51, P95: 96, P99: 100, Max: 1000, Peak: Percentiles{P50: 100, P95: 1000, P99: 1000}}
	if r != want {
		t.Errorf("rates = %+v, want %+v", r, want)
	}
	c := candidates(10, r)
	if c[0].limit != 10 || c[1].limit != 116 || c[2].limit != 144 || c[3].limit != 200 {
		t.Errorf("candidates = %+v, want 10, 116, 144, 200", c)
	}
}

func TestNewErrors(t *testing.T) {
	cfg := parse(t, "policies:\n  - {name: a, limit: 1, window: 1s}\n")
	if _, err := New(cfg, Options{Routes: []string{"/a/{x}/b", "/a/c/{y}"}}); err == nil {
		t.Error("New accepted conflicting routes")
	}
	if _, err := New(cfg, Options{Routes: []string{"/a/{"}}); err == nil {
		t.Error("New accepted a bad route")
	}
}

func TestDisplayKey(t *testing.T) {
	hash := "#" + strings.Repeat("A", 22)
	for _, tc := range []struct {
		key    string
		alts   int
		joined []bool
		want   string
	}{
		{"p:192.0.2.1", 1, []bool{false}, "192.0.2.1"},
		{"p:12:203.0.113.665:user1", 1, []bool{true}, "203.0.113.66 + user1"},
		{"p:0:12:203.0.113.665:user1", 2, []bool{true, false}, "203.0.113.66 + user1"},
		{"p:1:192.0.2.1", 2, []bool{true, false}, "(fallback 1) 192.0.2.1"},
		{"p:2:3:abc" + hash, 3, []bool{false, false, true}, "(fallback 2) abc + " + hash},
		{"p:9:x", 2, []bool{false, false}, "9:x"},              // bad index: shown as is
		{"p:5:ab", 1, []bool{true}, "5:ab"},                    // bad length: shown as is
		{"p:0:" + hash[:5], 2, []bool{true, true}, "#AAAA"},    // short hash
		{"p:0:" + hash[:22], 2, []bool{true, true}, hash[:22]}, // a hash one short
		{"p:1", 2, []bool{false, false}, "1"},                  // an index without its key
		{"p:x:y", 2, []bool{false, false}, "x:y"},              // an index not a number
		{"p:2:x", 2, []bool{false, false}, "2:x"},              // the index one past the last
		{"p:1:3:abc", 2, []bool{true}, "(fallback 1) 3:abc"},   // an alternative joined does not list: one part
		{"p:3:abc", 1, []bool{false}, "3:abc"},                 // one part, not decoded
		{"p:0", 1, []bool{true}, "0"},                          // a length without its colon
		{"p:x:1:a", 1, []bool{true}, "x:1:a"},                  // a length not a number
	} {
		if got := displayKey(tc.key, "p", tc.alts, tc.joined, nil); got != tc.want {
			t.Errorf("displayKey(%q) = %q, want %q", tc.key, got, tc.want)
		}
	}
}

func TestWriteTextManyFiles(t *testing.T) {
	rep := &Report{}
	var b strings.Builder
	if err := rep.WriteText(&b, Input{Files: []string{"a", "b", "c", "d", "e"}, Lines: 1, Entries: 1}); err != nil {
		t.Fatal(err)
	}
	if want := "of 5 files (a, b, ..., e)"; !strings.Contains(b.String(), want) {
		t.Errorf("header = %q, want it to contain %q", b.String(), want)
	}
}

// replayOne replays the one request en under the configuration text
// config, and returns the report and its text.
func replayOne(t *testing.T, config string, en logparse.Entry) (*Report, string) {
	t.Helper()
	e, err := New(parse(t, config), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Add(&en); err != nil {
		t.Fatal(err)
	}
	rep, err := e.Finish()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := rep.WriteText(&b, Input{Files: []string{"a"}, Lines: 1, Entries: 1}); err != nil {
		t.Fatal(err)
	}
	return rep, b.String()
}

func TestRouteHint(t *testing.T) {
	rep, text := replayOne(t, "policies:\n  - {name: r, limit: 5, window: 1s, key: route}\n",
		logparse.Entry{Time: t0, Addr: "192.0.2.1", Method: "GET", Path: "/items/7"})
	if rep.NoKey != 1 || !strings.Contains(text, "--route") {
		t.Errorf("no key %d; report lacks the --route hint:\n%s", rep.NoKey, text)
	}
}

// TestNoKeyReason replays a log whose address is a trusted proxy's (the
// application behind a load balancer, no X-Forwarded-For in the log): the
// report says why the requests had no key, not only how many.
func TestNoKeyReason(t *testing.T) {
	rep, text := replayOne(t, "trusted_proxies: [10.0.0.0/8]\nip_source: x-forwarded-for\npolicies:\n  - {name: ip, limit: 5, window: 1s}\n",
		logparse.Entry{Time: t0, Addr: "10.0.0.5", Method: "GET", Path: "/"})
	if p := rep.Policies[0]; p.NoKey != 1 || p.NoKeyReason == "" || !strings.Contains(text, "first: "+p.NoKeyReason) {
		t.Errorf("no key %d, reason %q; report:\n%s", p.NoKey, p.NoKeyReason, text)
	}
}
