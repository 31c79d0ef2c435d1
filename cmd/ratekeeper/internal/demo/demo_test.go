package demo

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
)

// TestSeedNumbers checks the table against the seeds' worked examples.
func TestSeedNumbers(t *testing.T) {
	total := func(sc Scenario, k algorithms.Kind) int {
		t.Helper()
		adm, err := Admitted(sc, k)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Measured >= 0 {
			return adm[sc.Measured]
		}
		n := 0
		for _, a := range adm {
			n += a
		}
		return n
	}
	for _, tc := range []struct {
		scenario int
		kind     algorithms.Kind
		want     int
	}{
		// Seeds 000/002: the boundary burst.
		{0, algorithms.FixedWindow, 200},
		{0, algorithms.SlidingLog, 100},
		{0, algorithms.SlidingWindow, 101},
		// Seed 000, exercise 3: the previous window's requests all in its
		// first second; at 33 s the log admits, the counter denies.
		{1, algorithms.SlidingLog, 5},
		{1, algorithms.SlidingWindow, 0},
		// Bunched at the end: the log denies, the counter admits some.
		{2, algorithms.SlidingLog, 0},
		{2, algorithms.SlidingWindow, 3},
		// Seed 004: buckets reject all five at 6 s, the fixed window admits all ten.
		{3, algorithms.SlidingBuckets, 5},
		{3, algorithms.FixedWindow, 10},
	} {
		sc := Scenarios[tc.scenario]
		if got := total(sc, tc.kind); got != tc.want {
			t.Errorf("%s under %s: admitted %d, want %d", sc.Short, tc.kind, got, tc.want)
		}
	}
}

// TestRun plays the demo and checks what a user should see, and the chart.
func TestRun(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "demo.svg")
	var out bytes.Buffer
	if err := Run(&out, svg, middleware.IETF); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		`RateLimit-Policy: "per-second";q=10;w=1, "per-minute";q=100;w=60`,
		"12 x GET / at once           -> 8 x 200, 4 x 429",
		"Content-Type: application/problem+json",
		"(the sixth try within a minute)",
		`"violated-policies":["login"]`,
		"username=bob     -> 200 OK",
		svg,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("demo output lacks %q:\n%s", want, text)
		}
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Groups []struct {
			Class string `xml:"class,attr"`
			Name  string `xml:"data-name,attr"`
			Rects []struct {
				Class string `xml:"class,attr"`
				Count int    `xml:"data-count,attr"`
			} `xml:"rect"`
		} `xml:"g"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("chart is not XML: %v", err)
	}
	var names []string
	for _, g := range doc.Groups {
		if g.Class != "series" {
			continue
		}
		names = append(names, g.Name)
		adm, rej := 0, 0
		for _, r := range g.Rects {
			if r.Class == "admitted" {
				adm += r.Count
			} else {
				rej += r.Count
			}
		}
		want, err := Admitted(ChartScenario, algorithms.Kind(g.Name))
		if err != nil {
			t.Fatal(err)
		}
		wantAdm, total := 0, 0
		for i, a := range want {
			wantAdm += a
			total += ChartScenario.Bursts[i].N
		}
		if adm != wantAdm || adm+rej != total {
			t.Errorf("series %s: admitted %d rejected %d, want %d of %d", g.Name, adm, rej, wantAdm, total)
		}
	}
	if len(names) != len(Compared) {
		t.Errorf("chart series = %q, want one per algorithm %v", names, Compared)
	}
}

// TestRunProfiles checks that the demo shows the headers of each profile.
func TestRunProfiles(t *testing.T) {
	for name, want := range map[string]string{
		"draft-7": "RateLimit: limit=10, remaining=9",
		"draft-6": "RateLimit-Remaining: 9",
		"legacy":  "X-RateLimit-Remaining: 9",
		// One RateLimit member, the most constraining: the per-second
		// policy's 9 left of 10, not the per-minute policy's beside it.
		"ietf-most-constraining": "RateLimit: \"per-second\";r=9;t=2\n",
	} {
		var out bytes.Buffer
		if err := Run(&out, filepath.Join(t.TempDir(), "d.svg"), Profiles[name]); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo with %s headers lacks %q:\n%s", name, want, out.String())
		}
	}
	var out bytes.Buffer
	if err := Run(&out, filepath.Join(t.TempDir(), "d.svg"), Profiles["none"]); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "RateLimit") {
		t.Errorf("demo with no headers shows RateLimit fields:\n%s", out.String())
	}
}

// TestProfileOrderHoldsEveryProfile: every profile the middleware has is
// one --headers takes (ietf-most-constraining was missing when added).
func TestProfileOrderHoldsEveryProfile(t *testing.T) {
	n := 0
	for p := middleware.Profile(0); !strings.HasPrefix(p.String(), "Profile("); p++ {
		n++
		if got, ok := Profiles[p.String()]; !ok || got != p {
			t.Errorf("Profiles[%q] = %v, %t; want %v", p.String(), got, ok, p)
		}
	}
	if len(ProfileOrder) != n || len(Profiles) != n {
		t.Errorf("ProfileOrder holds %d profiles, Profiles %d; the middleware has %d", len(ProfileOrder), len(Profiles), n)
	}
}
