package replay

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// at returns a GET of path from addr, sec seconds after t0.
func at(sec float64, addr, path string) logparse.Entry {
	return logparse.Entry{Time: t0.Add(time.Duration(sec * float64(time.Second))), Addr: addr, Method: "GET", Path: path}
}

// TestTopKeys: Options.Top is the number of most-rejected keys reported,
// 5 when 0, none when negative. Seven clients of a 1-per-hour policy
// send 2 to 8 requests, so that client i is rejected i times.
func TestTopKeys(t *testing.T) {
	const doc = "policies:\n  - {name: p, limit: 1, window: 1h}\n"
	var entries []logparse.Entry
	for i := 1; i <= 7; i++ {
		for range i + 1 {
			entries = append(entries, at(float64(len(entries)), fmt.Sprintf("192.0.2.%d", i), "/"))
		}
	}
	for _, tc := range []struct {
		top  int
		want []KeyCount
	}{
		{0, []KeyCount{{"192.0.2.7", 7}, {"192.0.2.6", 6}, {"192.0.2.5", 5}, {"192.0.2.4", 4}, {"192.0.2.3", 3}}},
		{3, []KeyCount{{"192.0.2.7", 7}, {"192.0.2.6", 6}, {"192.0.2.5", 5}}},
		{-1, nil},
	} {
		p := replayEntries(t, doc, Options{Top: tc.top}, entries).Policies[0]
		if p.Rejected != 28 {
			t.Fatalf("Top %d: rejected %d, want 28 (1+2+...+7)", tc.top, p.Rejected)
		}
		if fmt.Sprint(p.Top) != fmt.Sprint(tc.want) {
			t.Errorf("Top %d: top keys %v, want %v", tc.top, p.Top, tc.want)
		}
	}
}

// TestBins: Options.Bins is the number of time bins of the charts, 60
// when 0 or negative. A span of 59.5 minutes takes 60 one-minute bins
// (fewer than 60 whole minutes), one of 60 minutes two-minute bins, under
// the default as under Bins: 60; under Bins: 1 one bin longer than the
// span covers it.
func TestBins(t *testing.T) {
	const doc = "policies:\n  - {name: p, limit: 100, window: 1m}\n"
	for _, span := range []float64{59.5 * 60, 60 * 60} {
		entries := []logparse.Entry{at(0, "192.0.2.1", "/"), at(span, "192.0.2.1", "/")}
		want := replayEntries(t, doc, Options{Bins: 60}, entries)
		for _, bins := range []int{0, -3} {
			got := replayEntries(t, doc, Options{Bins: bins}, entries)
			if got.Bin != want.Bin || len(got.Policies[0].Timeline.Admitted) != len(want.Policies[0].Timeline.Admitted) {
				t.Errorf("span %gs, Bins %d: %d bins of %s; want %d of %s, as with Bins 60", span, bins,
					len(got.Policies[0].Timeline.Admitted), got.Bin, len(want.Policies[0].Timeline.Admitted), want.Bin)
			}
		}
		one := replayEntries(t, doc, Options{Bins: 1}, entries)
		if n := len(one.Policies[0].Timeline.Admitted); n > 2 || one.Bin <= time.Duration(span*float64(time.Second)) {
			t.Errorf("span %gs, Bins 1: %d bins of %s; want one bin longer than the span (two at most)", span, n, one.Bin)
		}
	}
}

// TestFirstAndLast: the report's span runs from the earliest line to the
// latest, whatever order they were logged in, reordered or not.
func TestFirstAndLast(t *testing.T) {
	const doc = "policies:\n  - {name: p, limit: 100, window: 1m}\n"
	entries := []logparse.Entry{at(30, "192.0.2.1", "/"), at(10, "192.0.2.1", "/"), at(50, "192.0.2.1", "/"), at(20, "192.0.2.1", "/")}
	for _, reorder := range []time.Duration{0, -1} {
		rep := replayEntries(t, doc, Options{Reorder: reorder}, entries)
		if !rep.First.Equal(t0.Add(10*time.Second)) || !rep.Last.Equal(t0.Add(50*time.Second)) {
			t.Errorf("Reorder %s: span [%s, %s], want [%s, %s]", reorder, rep.First, rep.Last, t0.Add(10*time.Second), t0.Add(50*time.Second))
		}
	}
}

// TestReportCounts: the report's totals. Requests counts the requests a
// policy applied to (with a key or not), Rejected those refused, NoKey
// those without a key, Unmatched those no policy applied to.
func TestReportCounts(t *testing.T) {
	const doc = "policies:\n  - {name: api, limit: 1, window: 1m, key: user, routes: [\"GET /api/{x}\"]}\n"
	user := func(sec float64, name, path string) logparse.Entry {
		en := at(sec, "192.0.2.1", path)
		en.User = name
		return en
	}
	rep := replayEntries(t, doc, Options{}, []logparse.Entry{
		user(0, "ann", "/api/a"),   // admitted
		user(1, "ann", "/api/b"),   // rejected
		user(2, "ann", "/other"),   // unmatched
		user(3, "", "/api/c"),      // no key
		user(4, "bob", "/api/d"),   // admitted
		user(5, "bob", "/else/a"),  // unmatched
		user(6, "bob", "/api/e"),   // rejected
		user(7, "cyd", "/api/f/g"), // unmatched: not the route
	})
	if rep.Requests != 5 || rep.Rejected != 2 || rep.NoKey != 1 || rep.Unmatched != 3 {
		t.Errorf("requests %d, rejected %d, no key %d, unmatched %d; want 5, 2, 1, 3", rep.Requests, rep.Rejected, rep.NoKey, rep.Unmatched)
	}
}

// TestNoKeyReasonIsTheFirst: a policy's NoKeyReason is why its first
// request without a key had none, not a later one's reason.
func TestNoKeyReasonIsTheFirst(t *testing.T) {
	const doc = "trusted_proxies: [10.0.0.0/8]\nip_source: x-forwarded-for\npolicies:\n  - {name: ip, limit: 5, window: 1s}\n"
	proxy := at(0, "10.0.0.5", "/")    // the proxy's own address
	garbled := at(1, "not-an-ip", "/") // no address at all
	r1, _ := replayOne(t, doc, proxy)
	r2, _ := replayOne(t, doc, garbled)
	why1, why2 := r1.Policies[0].NoKeyReason, r2.Policies[0].NoKeyReason
	if why1 == "" || why2 == "" || why1 == why2 {
		t.Fatalf("the two lines' reasons %q and %q are not two reasons", why1, why2)
	}
	for _, tc := range [][2]logparse.Entry{{proxy, garbled}, {garbled, proxy}} {
		first := map[string]string{proxy.Addr: why1, garbled.Addr: why2}[tc[0].Addr]
		tc[1].Time = tc[0].Time.Add(time.Second)
		p := replayEntries(t, doc, Options{}, tc[:]).Policies[0]
		if p.NoKey != 2 || p.NoKeyReason != first {
			t.Errorf("%s then %s: no key %d, reason %q; want 2, the first's %q", tc[0].Addr, tc[1].Addr, p.NoKey, p.NoKeyReason, first)
		}
	}
}

// TestDecideErrorStops: a request a policy cannot decide (a cost out of
// range, a *policy.CostError) fails the replay, reordered (from Finish)
// or not (from Add), rather than being left out of its counts.
func TestDecideErrorStops(t *testing.T) {
	key, err := keyfunc.IP()
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.New("c", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Minute}, key,
		policy.WithCost(func(*http.Request) int64 { return 6 }))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &policy.Config{Policies: []*policy.Policy{p}, Definitions: []policy.Definition{{Name: "c"}}}
	for _, reorder := range []time.Duration{0, -1} {
		e, err := New(cfg, Options{Reorder: reorder})
		if err != nil {
			t.Fatal(err)
		}
		en := at(0, "192.0.2.1", "/")
		err = e.Add(&en)
		if err == nil {
			_, err = e.Finish()
		}
		var ce *policy.CostError
		if !errors.As(err, &ce) {
			t.Errorf("Reorder %s: error %v, want the cost error", reorder, err)
		}
	}
}

// TestSkippedPolicies: requests without the key of a policy under
// on_missing_key: skip are counted as skipped by that policy, whichever
// its place in the configuration.
func TestSkippedPolicies(t *testing.T) {
	const doc = `policies:
  - {name: ua, limit: 10, window: 1m, key: "header:User-Agent", on_missing_key: skip}
  - {name: tenant, limit: 10, window: 1m, key: "header:X-Tenant", on_missing_key: skip}
  - {name: ip, limit: 10, window: 1m}
`
	ua := func(sec float64, agent string, tenant string) logparse.Entry {
		en := at(sec, "192.0.2.1", "/")
		en.UserAgent = agent
		if tenant != "" {
			en.Headers = []logparse.Header{{Name: "X-Tenant", Value: tenant}}
		}
		return en
	}
	rep := replayEntries(t, doc, Options{}, []logparse.Entry{
		ua(0, "", ""), ua(1, "curl", ""), ua(2, "", "t1"), ua(3, "", ""), ua(4, "curl", "t1"),
	})
	want := map[string][2]int64{"ua": {2, 3}, "tenant": {2, 3}, "ip": {5, 0}} // requests, skipped
	for _, p := range rep.Policies {
		if got := [2]int64{p.Requests, p.Skipped}; got != want[p.Name] {
			t.Errorf("%s: requests, skipped = %v, want %v", p.Name, got, want[p.Name])
		}
	}
}

// TestCountFailedAfterAnotherPolicy: a policy that counts only failed
// responses decides and counts as it does alone when another policy comes
// before it (its decision is the second of the request's): the successes
// are given back, and its rates count the failures only.
func TestCountFailedAfterAnotherPolicy(t *testing.T) {
	alone := replayStatuses(t, "login", "failed", Options{}, "POST /login", 200, 200, 200, 200, 200, 401, 401, 401)
	cfg := parse(t, `policies:
  - {name: all, limit: 100, window: 1m}
  - {name: login, limit: 2, window: 1m, algorithm: sliding_log, count: failed}
`)
	e, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, status := range []int{200, 200, 200, 200, 200, 401, 401, 401} {
		en := logparse.Entry{Time: t0.Add(time.Duration(i) * 100 * time.Millisecond), Addr: "192.0.2.1", Method: "POST", Path: "/login", Status: status}
		if err := e.Add(&en); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := e.Finish()
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Policies[1]
	if p.Rejected != 1 || p.Rejected != alone.Rejected || p.Rates != alone.Rates || p.Rates.Max != 3 {
		t.Errorf("login after another policy: rejected %d, rates %+v; alone %d, %+v; want 1 rejected, 3 counted", p.Rejected, p.Rates, alone.Rejected, alone.Rates)
	}
}

// TestGiveBackAtTheTake: the unit of a request a policy does not count
// is given back at the instant of its Take (the replay waits for no
// handler), under every algorithm: of one client's success and two
// failures at one instant under count: failed and a limit of 1, the
// success is admitted and given back, the first failure admitted, and
// only the second refused. (Given back a nanosecond later, a token
// bucket's unit did not come back, and the admitted success was counted
// refused, as the decision after the give-back was.)
func TestGiveBackAtTheTake(t *testing.T) {
	for _, alg := range []string{"fixed_window", "sliding_window", "sliding_log", "token_bucket", "leaky_bucket"} {
		p := replayStatusesAt(t, alg, 0, 200, 401, 401)
		if p.Requests != 3 || p.Rejected != 1 || p.Rates.Max != 2 {
			t.Errorf("%s: requests %d, rejected %d, at most %d counted per window; want 3, 1, 2", alg, p.Requests, p.Rejected, p.Rates.Max)
		}
	}
}

// replayStatusesAt replays, under a policy of 1 per minute of algorithm
// alg counting failed responses, one client's requests to POST /login,
// gap apart, logged with the given statuses, and returns the policy's
// report.
func replayStatusesAt(t *testing.T, alg string, gap time.Duration, statuses ...int) PolicyReport {
	t.Helper()
	return replayLogged(t, "policies:\n  - {name: login, limit: 1, window: 1m, algorithm: "+alg+", count: failed}\n",
		Options{}, "POST /login", gap, statuses...)
}

// TestRouteListedTwice: a route named by a policy and again by --route
// (the application's routes) is one route: the replay does not refuse it
// as a conflict with itself, with ServeMux routes or chi ones. (A route
// listed twice in one policy is an error of the configuration, since
// policy 30a69b0f.)
func TestRouteListedTwice(t *testing.T) {
	for _, extra := range []string{"/files/{p}", "/files/{p:[a-z]+}"} {
		got := replayRoutes(t, `policies:
  - {name: items, limit: 1, window: 1m, routes: ["GET /items/{id}"]}
`, Options{Routes: []string{"GET /items/{id}", extra, "/items/{id}"}},
			[2]string{"GET", "/items/1"}, [2]string{"GET", "/items/2"}, [2]string{"GET", "/files/x"})
		if got["items"] != [2]int64{2, 1} {
			t.Errorf("with --route %s: items: requests, rejected = %v, want [2 1]", extra, got["items"])
		}
	}
}

// TestBadChiRouteNamesItsSource: a bad route among chi routes is
// reported as it was given, method and all, with where it comes from.
func TestBadChiRouteNamesItsSource(t *testing.T) {
	cfg := parse(t, "policies:\n  - {name: a, limit: 1, window: 1s, routes: [\"/n/{id:[0-9]+}\"]}\n")
	err := newErr(t, cfg, []string{"GET /a/{"})
	if msg := err.Error(); !strings.Contains(msg, `--route "GET /a/{"`) {
		t.Errorf("error %q; want it to name --route \"GET /a/{\"", msg)
	}
}

// TestWildcardShapeDoc: the shapes the doc of WildcardShape names, at the
// start of a pattern too, with the text after the last wildcard kept, and
// an unclosed '{' (no wildcard) kept as it is.
func TestWildcardShapeDoc(t *testing.T) {
	for in, want := range map[string]string{
		"{id}":           "{}",
		"{rest...}":      "{...}",
		"/a/{x}/edit":    "/a/{}/edit",
		"GET /a/{x}/b{":  "GET /a/{}/b{",
		"/plain/path":    "/plain/path",
		"/a/{$}":         "/a/{$}",
		"/f/{name}.html": "/f/{}.html",
	} {
		if got := WildcardShape(in); got != want {
			t.Errorf("WildcardShape(%q) = %q, want %q", in, got, want)
		}
	}
	if WildcardShape("/a/{x}/edit") == WildcardShape("/a/{y}/view") {
		t.Error("/a/{x}/edit and /a/{y}/view have one shape")
	}
}

// TestHeapLetsLinesGo: the lines replayed from the heap of lines read
// out of order are let go (their slots cleared), as the queue's are: a
// reorder window holds a minute of lines.
func TestHeapLetsLinesGo(t *testing.T) {
	e, err := New(parse(t, "policies:\n  - {name: p, limit: 100, window: 1m}\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range []float64{10, 5, 4, 7, 6, 100} { // 5, 4, 7, 6 in the heap
		en := at(sec, "192.0.2.1", "/")
		if err := e.Add(&en); err != nil {
			t.Fatal(err)
		}
		if sec == 6 && len(e.early) != 4 {
			t.Fatalf("%d lines in the heap, want 4", len(e.early))
		}
	}
	if len(e.early) != 0 || e.pols[0].requests != 5 {
		t.Fatalf("%d lines in the heap, %d replayed; want 0, 5", len(e.early), e.pols[0].requests)
	}
	for i, h := range e.early[:cap(e.early)] {
		if h.loc != nil || h.text != "" {
			t.Errorf("slot %d of the heap still holds a line replayed: %+v", i, h)
		}
	}
}

// TestNewRefusesNoPolicies: a configuration without policies (built in
// code: a file's must have one) is refused, not replayed as matching
// nothing.
func TestNewRefusesNoPolicies(t *testing.T) {
	if _, err := New(&policy.Config{}, Options{}); err == nil {
		t.Error("New accepted a configuration without policies")
	}
}
