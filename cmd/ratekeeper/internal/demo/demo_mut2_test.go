package demo

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
)

// TestRunUnwritableChartFailsFirst: a chart path that cannot be written
// fails at once, before the demo prints anything.
func TestRunUnwritableChartFailsFirst(t *testing.T) {
	var out bytes.Buffer
	err := Run(&out, filepath.Join(t.TempDir(), "no such dir", "d.svg"), middleware.IETF)
	if err == nil || !strings.HasPrefix(err.Error(), "demo: ") {
		t.Errorf("Run with an unwritable chart path: error %v, want a demo: error", err)
	}
	if out.Len() != 0 {
		t.Errorf("Run printed before failing:\n%s", out.String())
	}
}

// TestRunChartWriteFails: a chart that cannot be written to the end (a
// full disk: /dev/full) is an error, not a demo that names its chart.
func TestRunChartWriteFails(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skipf("no /dev/full to fill: %v", err)
	}
	var out bytes.Buffer
	if err := Run(&out, "/dev/full", middleware.IETF); err == nil || strings.Contains(out.String(), "4. Chart") {
		t.Errorf("Run writing the chart to /dev/full: error %v; output ends:\n%s", err, out.String()[max(0, out.Len()-200):])
	}
}

// TestRunHeadline: the first line names the profile's headers, or says
// there are none.
func TestRunHeadline(t *testing.T) {
	for profile, want := range map[string]string{
		"ietf":    "(in-memory store, ietf headers)\n\n1. ",
		"legacy":  "(in-memory store, legacy headers)\n\n1. ",
		"none":    "(in-memory store, no rate-limit headers)\n\n1. ",
		"draft-7": "(in-memory store, draft-7 headers)\n\n1. ",
	} {
		var out bytes.Buffer
		if err := Run(&out, filepath.Join(t.TempDir(), "d.svg"), Profiles[profile]); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out.String(), "ratekeeper demo: a chi server with the middleware, in simulated time "+want) {
			t.Errorf("%s: demo begins %q, want it to say %q", profile, strings.SplitN(out.String(), "\n", 2)[0], want)
		}
	}
}

// TestChartBins: the chart of the boundary burst and the steady traffic
// after it has bins of 5 s from 45 s (the multiple of three bins a little
// before the burst at 59 s) to the last request, just before 180 s: 27
// bins. The burst at 59 s falls in bin 2, the one at 61 s in bin 3 with
// the first ten requests of the steady traffic: a fixed window admits
// both hundreds, the sliding log the first only, and none of bin 3.
func TestChartBins(t *testing.T) {
	c, err := Chart(ChartScenario, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Start.Equal(time.Unix(45, 0)) || !c.Origin.Equal(time.Unix(0, 0)) || c.Bin != 5*time.Second {
		t.Errorf("chart from %s (origin %s), bins of %s; want from 45 s after the origin at 0, bins of 5s", c.Start, c.Origin, c.Bin)
	}
	for _, s := range c.Series {
		if len(s.Admitted) != 27 {
			t.Errorf("%s: %d bins, want 27", s.Name, len(s.Admitted))
			continue
		}
		switch s.Name {
		case "fixed_window":
			if s.Admitted[2] != 100 || s.Admitted[3] != 100 {
				t.Errorf("fixed_window admits %d and %d in the bins of 59 s and 61 s, want 100 and 100", s.Admitted[2], s.Admitted[3])
			}
		case "sliding_log":
			if s.Admitted[2] != 100 || s.Admitted[3] != 0 || s.Rejected[3] != 110 {
				t.Errorf("sliding_log admits %d at 59 s, %d (of %d) in [60 s, 65 s); want 100, 0 (of 110)", s.Admitted[2], s.Admitted[3], s.Admitted[3]+s.Rejected[3])
			}
		}
	}
	svg := filepath.Join(t.TempDir(), "demo.svg")
	var out bytes.Buffer
	if err := Run(&out, svg, middleware.IETF); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte("bins of 5s")) || xml.Unmarshal(data, new(struct{})) != nil {
		t.Errorf("the demo's chart is no XML with bins of 5s:\n%.300s", data)
	}
}

// TestScenariosAsNamed: the legend of the table says what each scenario
// replays: its limit per window, each burst as "N at Ts", and what the
// table counts, the admissions of one burst or of all (Measured -1).
func TestScenariosAsNamed(t *testing.T) {
	for _, sc := range Scenarios {
		win := fmt.Sprintf("%gs", sc.Window.Seconds())
		if sc.Window == time.Minute {
			win = "min"
		}
		want := []string{fmt.Sprintf("%d/%s, ", sc.Limit, win)}
		total := 0
		for _, b := range sc.Bursts {
			want = append(want, fmt.Sprintf("%d at %gs", b.N, b.At.Seconds()))
			total += b.N
		}
		switch {
		case sc.Measured == -1:
			want = append(want, fmt.Sprintf("(admitted of %d)", total))
		case sc.Measured >= 0 && sc.Measured < len(sc.Bursts):
			want = append(want, fmt.Sprintf("(admitted at %gs)", sc.Bursts[sc.Measured].At.Seconds()))
		default:
			t.Errorf("%s: Measured %d, want -1 or the index of a burst", sc.Short, sc.Measured)
		}
		if !strings.HasPrefix(sc.Name, want[0]) {
			t.Errorf("%s: named %q, want it to begin %q", sc.Short, sc.Name, want[0])
		}
		for _, w := range want[1:] {
			if !strings.Contains(sc.Name, w) {
				t.Errorf("%s: named %q, which does not say %q", sc.Short, sc.Name, w)
			}
		}
	}
}

// TestTableAsPrinted: the comparison table, every figure. Those of the
// seeds are checked by TestSeedNumbers; the others follow from the
// algorithms: the token bucket holds one window's worth and refills
// 100/60 a second (3 more after 2 s at 61 s), 5/30 (3 after 20.5 s at
// 50 s), 1 a second (2 after 2 s at 6 s); the sliding window counter at
// 6 s of a 5 s window weighs the previous five as 4 and admits 1.
func TestTableAsPrinted(t *testing.T) {
	var b strings.Builder
	if err := writeTable(&b); err != nil {
		t.Fatal(err)
	}
	const want = `            scenario  fixed_window  sliding_log  sliding_window  sliding_buckets  token_bucket
      boundary burst           200          100             101              100           103
    bunched at start             5            5               0                5             5
      bunched at end             5            0               3                0             3
    seed 004 buckets            10            5               6                5             7
  boundary burst: 100/min, 100 at 59s + 100 at 61s (admitted of 200)
  bunched at start: 5/30s, 5 at 0.5s, then 5 at 33s (admitted at 33s)
  bunched at end: 5/30s, 5 at 29.5s, then 5 at 50s (admitted at 50s)
  seed 004 buckets: 5/5s, 5 at 4s + 5 at 6s (admitted of 10)
  sliding_buckets uses 1-second buckets; token_bucket holds one window's worth and starts full.
`
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestChartScenarioAsDocumented: the chart's traffic is the boundary
// burst of the table (100/min, 100 at 59 s and 100 at 61 s), then one
// request every third of a second (three a second, 1.8 times the limit)
// from 62 s to just before 180 s.
func TestChartScenarioAsDocumented(t *testing.T) {
	sc, boundary := ChartScenario, Scenarios[0]
	if sc.Limit != boundary.Limit || sc.Window != boundary.Window || len(sc.Bursts) < 2 || sc.Bursts[0] != boundary.Bursts[0] || sc.Bursts[1] != boundary.Bursts[1] {
		t.Fatalf("chart scenario %d/%s begins %v, want the boundary burst %d/%s %v", sc.Limit, sc.Window, sc.Bursts[:min(2, len(sc.Bursts))], boundary.Limit, boundary.Window, boundary.Bursts)
	}
	steady := sc.Bursts[2:]
	for i, b := range steady {
		if want := 62*time.Second + time.Duration(i)*(time.Second/3); b.N != 1 || b.At != want {
			t.Errorf("request %d after the burst: %d at %s, want 1 at %s", i, b.N, b.At, want)
			break
		}
	}
	if last := steady[len(steady)-1].At; last >= 180*time.Second || last <= 180*time.Second-time.Second/3 {
		t.Errorf("last request at %s, want less than a third of a second before 180 s", last)
	}
}

// TestHTTPFigures: every figure the HTTP part of the demo prints under the
// ietf profile, the waits (t=, Retry-After) included, which the
// command's golden file masks: the script's instants and the simulated
// clock's start at a whole minute (the windows' boundaries) fix them. The
// 429 bodies' prose, the middleware's, is left out.
func TestHTTPFigures(t *testing.T) {
	var b strings.Builder
	if err := runHTTP(&b, middleware.IETF); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(b.String(), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "body: ") {
			got = append(got, l)
		}
	}
	want := strings.Join([]string{
		`1. A client (127.0.0.1) and the rate-limit headers it gets`,
		`   policies: per-second 10/s and per-minute 100/min per IP (sliding window counter)`,
		`      RateLimit-Policy: "per-second";q=10;w=1, "per-minute";q=100;w=60`,
		`  t=0.0s    GET /                        -> 200 OK`,
		`      RateLimit: "per-second";r=9;t=2, "per-minute";r=99;t=120`,
		`  t=0.3s    GET /                        -> 200 OK`,
		`      RateLimit: "per-second";r=8;t=2, "per-minute";r=98;t=90`,
		`  t=0.6s    12 x GET / at once           -> 8 x 200, 4 x 429`,
		`      the first 429:`,
		`        RateLimit: "per-second";r=0;t=1, "per-minute";r=90;t=66`,
		`        Retry-After: 1`,
		`        Cache-Control: no-store`,
		`        Content-Type: application/problem+json`,
		`  t=1.6s    GET /                        -> 200 OK  (a second later: allowed again)`,
		`      RateLimit: "per-second";r=5;t=1, "per-minute";r=89;t=64`,
		``,
		`2. A login throttled per IP and user`,
		`   policy login: 5 per minute, sliding log, key client IP + user name, on POST /login`,
		`  t=5.0s    POST /login username=ann     -> 200 OK`,
		`      RateLimit: "per-second";r=9;t=2, "per-minute";r=88;t=60, "login";r=4;t=61`,
		`  t=6.0s    POST /login username=ann     -> 200 OK`,
		`      RateLimit: "per-second";r=8;t=1, "per-minute";r=87;t=59, "login";r=3;t=60`,
		`  t=7.0s    POST /login username=ann     -> 200 OK`,
		`      RateLimit: "per-second";r=8;t=1, "per-minute";r=86;t=58, "login";r=2;t=59`,
		`  t=8.0s    POST /login username=ann     -> 200 OK`,
		`      RateLimit: "per-second";r=8;t=1, "per-minute";r=85;t=56, "login";r=1;t=58`,
		`  t=9.0s    POST /login username=ann     -> 200 OK`,
		`      RateLimit: "per-second";r=8;t=1, "per-minute";r=84;t=55, "login";r=0;t=57`,
		`  t=10.0s   POST /login username=ann     -> 429 Too Many Requests  (the sixth try within a minute)`,
		`      RateLimit: "per-second";r=8;t=1, "per-minute";r=83;t=54, "login";r=0;t=56`,
		`      Retry-After: 56`,
		`  t=11.0s   POST /login username=bob     -> 200 OK  (another account, same address: its own allowance)`,
		`      RateLimit: "per-second";r=8;t=1, "per-minute";r=82;t=53, "login";r=4;t=61`,
		`  t=65.5s   POST /login username=ann     -> 200 OK  (ann's first try has left the window)`,
		`      RateLimit: "per-second";r=9;t=2, "per-minute";r=82;t=2, "login";r=0;t=1`,
		``,
	}, "\n")
	if g := strings.Join(got, "\n"); g != want {
		t.Errorf("the HTTP part prints:\n%s\nwant:\n%s", g, want)
	}
}
