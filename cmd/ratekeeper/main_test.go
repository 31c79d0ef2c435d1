package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/ratekeeper -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (rerun with -update if the change is intended)\n--- got:\n%s\n--- want:\n%s", path, got, want)
	}
}

func runCmd(args ...string) (stdout, stderr string, code int) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return o.String(), e.String(), code
}

func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"check_example.txt", []string{"check", "../../examples/config/ratekeeper.yaml"}, exitOK},
		{"check_bad.txt", []string{"check", "testdata/bad.yaml"}, exitFindings},
		{"check_advice.txt", []string{"check", "testdata/advice.yaml"}, exitOK},
		{"check_hops.txt", []string{"check", "testdata/hops.yaml"}, exitOK},
		{"replay.txt", []string{"replay", "--config", "testdata/rules.yaml", "testdata/access.log", "testdata/access.log.1.gz"}, exitFindings},
		{"replay_compare.txt", []string{"replay", "--compare", "--config", "testdata/rules.yaml", "testdata/access.log"}, exitFindings},
		{"replay_json.txt", []string{"replay", "--config", "testdata/rules.yaml", "--format", "json", "testdata/access.jsonl"}, exitFindings},
		{"help.txt", []string{"help"}, exitOK},
		{"check_help.txt", []string{"check", "--help"}, exitOK},
		{"replay_help.txt", []string{"replay", "--help"}, exitOK},
		{"demo_help.txt", []string{"demo", "--help"}, exitOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCmd(tc.args...)
			if code != tc.code {
				t.Errorf("ratekeeper %s: exit %d, want %d; stderr:\n%s", strings.Join(tc.args, " "), code, tc.code, errOut)
			}
			golden(t, tc.name, []byte(out))
		})
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"frobnicate"},
		{"check"},
		{"check", "a.yaml", "b.yaml"},
		{"check", "testdata/missing.yaml"},
		{"check", "--bogus", "x"},
		{"replay", "testdata/access.log"},
		{"replay", "--config", "testdata/rules.yaml"},
		{"replay", "--config", "testdata/bad.yaml", "testdata/access.log"},
		{"replay", "--config", "testdata/rules.yaml", "testdata/missing.log"},
		{"replay", "--config", "testdata/rules.yaml", "testdata/bad.yaml"}, // no parseable line
		{"replay", "--config", "testdata/rules.yaml", "--format", "xml", "testdata/access.log"},
		{"replay", "--config", "testdata/rules.yaml", "--json-header", "novalue", "testdata/access.log"},
		{"replay", "--config", "testdata/rules.yaml", "--route", "/a/{", "testdata/access.log"},
		{"replay", "--config", "testdata/rules.yaml", "-", "-"},                                     // standard input read twice
		{"replay", "--config", "testdata/rules.yaml", "testdata/access.log", "testdata/access.log"}, // a log counted twice
		{"demo", "extra"},
		{"demo", "--headers", "draft-99"},
	} {
		_, errOut, code := runCmd(args...)
		if code != exitUsage {
			t.Errorf("ratekeeper %q: exit %d, want %d", args, code, exitUsage)
		}
		if errOut == "" {
			t.Errorf("ratekeeper %q: nothing on stderr", args)
		}
	}
}

func TestReplayNothingRejected(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "generous.yaml")
	if err := os.WriteFile(cfg, []byte("policies:\n  - name: generous\n    limit: 1000\n    window: 1s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd("replay", "--config", cfg, "testdata/access.log")
	if code != exitOK {
		t.Errorf("exit %d, want 0; stderr: %s", code, errOut)
	}
	if !strings.Contains(out, "0 rejected by a limit (0.00%)") {
		t.Errorf("report does not say nothing was rejected:\n%s", out)
	}
}

// TestReplaySVG writes the replay chart and reads it back as XML: one
// series per policy and per compared algorithm, each adding up to the
// policy's requests.
func TestReplaySVG(t *testing.T) {
	svgPath := filepath.Join(t.TempDir(), "replay.svg")
	out, errOut, code := runCmd("replay", "--compare", "--svg", svgPath, "--config", "testdata/rules.yaml", "testdata/access.log")
	if code != exitFindings {
		t.Fatalf("exit %d; stderr: %s", code, errOut)
	}
	if !strings.Contains(out, "chart: "+svgPath) {
		t.Errorf("output does not name the chart:\n%s", out)
	}
	series := readSVG(t, svgPath)
	// rules.yaml has three policies; six algorithms each with --compare.
	if got, want := len(series), 3*(1+6); got != want {
		t.Fatalf("%d series, want %d: %v", got, want, series)
	}
	requests := map[string]int64{}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "policy ") {
			name := strings.TrimSuffix(strings.Fields(line)[1], ":")
			requests[name] = -1
			for _, l := range strings.Split(out[strings.Index(out, line):], "\n")[1:] {
				if f := strings.Fields(l); len(f) == 2 && f[0] == "requests" {
					requests[name], _ = strconv.ParseInt(f[1], 10, 64)
					break
				}
			}
		}
	}
	for name, s := range series {
		policyName := strings.Fields(name)[0]
		want, ok := requests[policyName]
		if !ok {
			t.Errorf("series %q names no policy of the report (%v)", name, requests)
			continue
		}
		if got := s[0] + s[1]; got != want {
			t.Errorf("series %q: admitted %d + rejected %d = %d, want the policy's %d requests", name, s[0], s[1], got, want)
		}
	}
	if s := series["login (sliding_log, as configured)"]; s[1] == 0 {
		t.Errorf("login series shows no rejection: %v", s)
	}
}

// readSVG parses an SVG written by the chart package and returns, per
// series, the admitted and rejected totals.
func readSVG(t *testing.T, path string) map[string][2]int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName xml.Name `xml:"svg"`
		Groups  []struct {
			Class string `xml:"class,attr"`
			Name  string `xml:"data-name,attr"`
			Rects []struct {
				Class string `xml:"class,attr"`
				Count int64  `xml:"data-count,attr"`
			} `xml:"rect"`
		} `xml:"g"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s is not well-formed XML: %v", path, err)
	}
	out := map[string][2]int64{}
	for _, g := range doc.Groups {
		if g.Class != "series" {
			continue
		}
		var s [2]int64
		for _, r := range g.Rects {
			switch r.Class {
			case "admitted":
				s[0] += r.Count
			case "rejected":
				s[1] += r.Count
			}
		}
		out[g.Name] = s
	}
	return out
}

func TestDemoGolden(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "demo.svg")
	out, errOut, code := runCmd("demo", "--svg", svg)
	if code != exitOK {
		t.Fatalf("demo: exit %d; stderr: %s", code, errOut)
	}
	if _, err := os.Stat(svg); err != nil {
		t.Errorf("demo wrote no chart: %v", err)
	}
	golden(t, "demo.txt", []byte(maskWaits(strings.ReplaceAll(out, svg, "DEMO.svg"))))
}

// waitRE matches the waits the middleware computes (the t of RateLimit,
// Retry-After, the reset fields) and bodyRE the wording of its 429 body.
// The demo's golden file masks them, so that it pins the script and the
// decisions, not the middleware's rounding and prose, which its own tests
// pin.
var (
	waitRE = regexp.MustCompile(`(;t=|Retry-After: |Reset: )[0-9]+`)
	bodyRE = regexp.MustCompile(`body: \{.*("violated-policies":\[[^\]]*\]).*\}`)
)

func maskWaits(s string) string {
	s = waitRE.ReplaceAllString(s, "${1}N")
	return bodyRE.ReplaceAllString(s, "body: {... $1 ...}")
}

// TestReplayJSON checks that --json carries the same figures as the text.
func TestReplayJSON(t *testing.T) {
	out, errOut, code := runCmd("replay", "--json", "--compare", "--config", "testdata/rules.yaml", "testdata/access.log")
	if code != exitFindings {
		t.Fatalf("exit %d; stderr: %s", code, errOut)
	}
	var rep struct {
		Entries  int64 `json:"entries"`
		Rejected int64 `json:"rejected"`
		Policies []struct {
			Name     string `json:"name"`
			Rejected int64  `json:"rejected"`
			Limits   []struct {
				Label string `json:"label"`
			} `json:"limits"`
			Compare []struct{} `json:"compare"`
		} `json:"policies"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, out)
	}
	text, _, _ := runCmd("replay", "--config", "testdata/rules.yaml", "testdata/access.log")
	if want := fmt.Sprintf("replayed %d requests", rep.Entries); !strings.Contains(text, want) {
		t.Errorf("text report lacks %q", want)
	}
	if want := fmt.Sprintf(", %d rejected by a limit (", rep.Rejected); !strings.Contains(text, want) {
		t.Errorf("text report lacks %q", want)
	}
	if len(rep.Policies) != 3 || rep.Policies[1].Name != "login" || rep.Policies[1].Rejected == 0 || len(rep.Policies[1].Limits) != 4 || len(rep.Policies[1].Compare) != 6 {
		t.Errorf("JSON policies = %+v", rep.Policies)
	}
}

// TestReplayFileOrder gives the newer log first and an empty one: the
// report is the same as with the files in time order.
func TestReplayFileOrder(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.log")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	a, _, _ := runCmd("replay", "--top", "0", "--config", "testdata/rules.yaml", "testdata/access.log.1.gz", "testdata/access.log")
	b, _, _ := runCmd("replay", "--top", "0", "--config", "testdata/rules.yaml", empty, "testdata/access.log", "testdata/access.log.1.gz")
	if strings.Contains(a, "most rejected keys") {
		t.Errorf("--top 0 still lists keys:\n%s", a)
	}
	_, restA, _ := strings.Cut(a, "\n")
	_, restB, _ := strings.Cut(b, "\n")
	if restA != restB {
		t.Errorf("reports differ with the files reordered:\n%s\n---\n%s", a, b)
	}
	if !strings.Contains(b, "testdata/access.log.1.gz, testdata/access.log, "+empty) {
		t.Errorf("files not replayed oldest first, empty last:\n%s", b)
	}
}

func TestFlagsAfterArguments(t *testing.T) {
	a, _, codeA := runCmd("replay", "testdata/access.log", "--config", "testdata/rules.yaml", "--top", "1")
	b, _, codeB := runCmd("replay", "--config", "testdata/rules.yaml", "--top", "1", "testdata/access.log")
	if codeA != codeB || a != b {
		t.Errorf("flags after the log changed the outcome: exit %d vs %d", codeA, codeB)
	}
}

// TestFlagsEndAtDoubleDash: after "--" every argument is positional, as
// the flag package has it, however many follow (a log whose name starts
// with '-', or reads like a flag).
func TestFlagsEndAtDoubleDash(t *testing.T) {
	for _, tc := range []struct {
		args, want []string
		v          bool
	}{
		{[]string{"-v", "--", "-a.log", "-b.log", "c.log"}, []string{"-a.log", "-b.log", "c.log"}, true},
		{[]string{"a.log", "--", "--json", "-v"}, []string{"a.log", "--json", "-v"}, false},
		{[]string{"a.log", "-v", "b.log", "--", "-c.log", "--"}, []string{"a.log", "b.log", "-c.log", "--"}, true},
		{[]string{"a.log", "-v", "b.log"}, []string{"a.log", "b.log"}, true},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		v := fs.Bool("v", false, "")
		got, code := parseFlags(fs, tc.args, io.Discard)
		if code != -1 || !slices.Equal(got, tc.want) || *v != tc.v {
			t.Errorf("parseFlags(%q) = %q, %d, -v %v; want %q, -1, -v %v", tc.args, got, code, *v, tc.want, tc.v)
		}
	}
}

// failingWriter fails every write, as standard output on a full disk
// (/dev/full) or closed does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestOutputWriteError: output that cannot be written is an error (exit 2,
// said on stderr), never a success with nothing written.
func TestOutputWriteError(t *testing.T) {
	for _, args := range [][]string{
		{"check", "testdata/rules.yaml"},
		{"check", "testdata/bad.yaml"},
		{"check", "--help"},
		{"help"},
		{"replay", "--config", "testdata/rules.yaml", "--quiet", "testdata/access.log"},
		{"replay", "--help"},
	} {
		var e bytes.Buffer
		code := run(args, failingWriter{}, &e)
		if code != exitUsage || !strings.Contains(e.String(), "no space left on device") {
			t.Errorf("ratekeeper %q to a failing stdout: exit %d, stderr %q; want exit %d and the write error", args, code, e.String(), exitUsage)
		}
	}
}

func TestProgress(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, 100<<20, false)
	// The progress's own clock, which only the test moves (a loaded
	// machine's stall must not make the first update print).
	at := p.start
	p.now = func() time.Time { return at }
	at = at.Add(999 * time.Millisecond)
	p.update(50<<20, 1000) // within a second of the start: silent
	if buf.Len() != 0 {
		t.Errorf("progress printed within its first second: %q", buf.String())
	}
	at = at.Add(2 * time.Second)
	p.update(50<<20, 1000)
	p.finish(2000)
	out := buf.String()
	if !strings.Contains(out, "replay: 1000 requests, 50% of 100 MiB read") || !strings.Contains(out, "replay: 2000 requests read in") {
		t.Errorf("progress = %q", out)
	}
	buf.Reset()
	quiet := newProgress(&buf, 100<<20, true)
	quiet.last = quiet.last.Add(-2 * time.Second)
	quiet.update(1, 1)
	quiet.finish(1)
	small := newProgress(&buf, 1<<20, false)
	small.last = small.last.Add(-2 * time.Second)
	small.update(1, 1)
	if buf.Len() != 0 {
		t.Errorf("--quiet or a small input printed progress: %q", buf.String())
	}
	// Standard input: the size is unknown; a replay that lasts is large.
	stdin := newProgress(&buf, -1, false)
	stdin.last = stdin.last.Add(-2 * time.Second)
	stdin.update(3<<20, 7)
	if got := buf.String(); got != "replay: 7 requests, 3 MiB read\n" {
		t.Errorf("progress of standard input = %q", got)
	}
}

// TestReplayJSONFields maps JSON fields to a header and to the user, and
// checks that the policies keyed by them see them.
func TestReplayJSONFields(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "h.yaml")
	if err := os.WriteFile(cfg, []byte(`policies:
  - {name: by-header, limit: 1, window: 1h, key: "header:X-Agent"}
  - {name: by-user, limit: 1, window: 1h, key: user, on_missing_key: skip}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "a.jsonl")
	if err := os.WriteFile(log, []byte(`{"at": "2024-03-10T12:00:00Z", "client": {"ip": "192.0.2.1"}, "ua": "bot", "who": "ann"}
{"at": "2024-03-10T12:00:01Z", "client": {"ip": "192.0.2.2"}, "ua": "bot", "who": "bob"}
{"at": "2024-03-10T12:00:02Z", "client": {"ip": "192.0.2.3"}, "ua": "human"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd("replay", "--config", cfg, "--json-time", "at", "--json-ip", "client.ip",
		"--json-user", "who", "--json-header", "X-Agent=ua", log)
	if code != exitFindings {
		t.Fatalf("exit %d; stderr %s\n%s", code, errOut, out)
	}
	for _, want := range []string{
		"replayed 3 requests from 3 lines",
		"most rejected keys: bot (1)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	_, section, _ := strings.Cut(out, "policy by-user:")
	if f := strings.Fields(strings.Split(section, "\n")[1]); len(f) != 2 || f[0] != "requests" || f[1] != "2" {
		t.Errorf("by-user did not see two users:\n%s", out)
	}
}

// TestDemoDefaultSVGPath runs the demo without --svg: it writes a chart of
// its own in the temporary directory, never through a file someone else
// put at a fixed name there (another user's chart, or a symlink to a file
// of the user's).
func TestDemoDefaultSVGPath(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	victim := filepath.Join(t.TempDir(), "victim.txt")
	if err := os.WriteFile(victim, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(tmp, "ratekeeper-demo.svg")); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		out, errOut, code := runCmd("demo")
		if code != exitOK {
			t.Fatalf("demo: exit %d; stderr: %s", code, errOut)
		}
		if data, err := os.ReadFile(victim); err != nil || string(data) != "keep me\n" {
			t.Fatalf("demo wrote %d bytes through the symlink at the fixed name (err %v)", len(data), err)
		}
		i := strings.LastIndex(out, ": ")
		path := strings.TrimSpace(out[i+2:])
		if filepath.Dir(path) != tmp {
			t.Fatalf("chart %q is not in the temporary directory %s", path, tmp)
		}
		readSVG(t, path)
	}
}

// TestReplayOutOfOrder replays a log whose second line is 30 s older than
// its first: the report decides in time order (the lone policy's
// rejections equal its configured trial's); with --reorder 0 the line is
// replayed late and the report says so.
func TestReplayOutOfOrder(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "one.yaml")
	log := filepath.Join(dir, "ooo.log")
	if err := os.WriteFile(cfg, []byte("policies:\n  - {name: p, limit: 1, window: 1m, algorithm: sliding_log}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	line := "192.0.2.1 - - [10/Mar/2024:12:%s +0000] \"GET / HTTP/1.1\" 200 1\n"
	if err := os.WriteFile(log, []byte(fmt.Sprintf(line, "00:30")+fmt.Sprintf(line, "00:00")+fmt.Sprintf(line, "01:05")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd("replay", "--config", cfg, log)
	if code != exitFindings {
		t.Fatalf("exit %d; stderr %s", code, errOut)
	}
	// In time order: 00:00 admitted, 00:30 denied, 01:05 admitted.
	if !strings.Contains(out, "1 rejected by a limit (33.33%)") || !strings.Contains(out, "configured      1         1  33.33%") || strings.Contains(out, "replayed late") {
		t.Errorf("out-of-order line not replayed in time order:\n%s", out)
	}
	out, _, _ = runCmd("replay", "--reorder", "0", "--config", cfg, log)
	if !strings.Contains(out, "1 request logged out of time order by more than the reorder window (0s), by up to 30s") {
		t.Errorf("--reorder 0: late line not reported:\n%s", out)
	}
	if _, _, code := runCmd("replay", "--reorder", "-1s", "--config", cfg, log); code != exitUsage {
		t.Errorf("--reorder -1s: exit %d, want %d", code, exitUsage)
	}
}

// TestReplayTruncatedGzip replays a rotated log cut short (copied while it
// was being compressed) beside a whole one: the report covers both, up to
// the cut, and warns that the rest of the damaged log is missing.
func TestReplayTruncatedGzip(t *testing.T) {
	data, err := os.ReadFile("testdata/access.log.1.gz")
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "access.log.1.gz")
	if err := os.WriteFile(cut, data[:len(data)*9/10], 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd("replay", "--config", "testdata/rules.yaml", cut, "testdata/access.log")
	if code != exitFindings {
		t.Fatalf("exit %d, want %d; stderr: %s", code, exitFindings, errOut)
	}
	for _, want := range []string{"compressed data ends early after line", "the rest of the log is missing", "line cut off where the compressed data ends"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "compressed data ends early") {
		t.Errorf("stderr does not warn: %q", errOut)
	}
	js, _, _ := runCmd("replay", "--json", "--config", "testdata/rules.yaml", cut)
	if !strings.Contains(js, `"warnings": [`) {
		t.Errorf("--json report lacks the warning:\n%.400s", js)
	}
}

// TestReplayNothingParseable gives a log none of whose lines parse: the
// error says why, with the first malformed lines.
func TestReplayNothingParseable(t *testing.T) {
	log := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(log, []byte(`{"time":"10 March 2024","ip":"192.0.2.1"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runCmd("replay", "--config", "testdata/rules.yaml", log)
	if code != exitUsage {
		t.Errorf("exit %d, want %d", code, exitUsage)
	}
	if !strings.Contains(errOut, "no parseable line") || !strings.Contains(errOut, `unknown time format "10 March 2024"`) {
		t.Errorf("stderr does not say why no line parsed: %q", errOut)
	}
}

// TestReplayServersLogs splits the JSON sample log between two servers,
// line by line, as a load balancer would: replaying both logs gives the
// report of the one log (they are merged in time order, not replayed one
// after the other).
func TestReplayServersLogs(t *testing.T) {
	data, err := os.ReadFile("testdata/access.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	for i, line := range strings.SplitAfter(string(data), "\n") {
		if i%2 == 0 {
			a.WriteString(line)
		} else {
			b.WriteString(line)
		}
	}
	dir := t.TempDir()
	la, lb := filepath.Join(dir, "web1.jsonl"), filepath.Join(dir, "web2.jsonl")
	if err := os.WriteFile(la, a.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lb, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	one, _, _ := runCmd("replay", "--compare", "--config", "testdata/rules.yaml", "testdata/access.jsonl")
	two, errOut, code := runCmd("replay", "--compare", "--config", "testdata/rules.yaml", la, lb)
	if code != exitFindings {
		t.Fatalf("exit %d; stderr %s", code, errOut)
	}
	_, want, _ := strings.Cut(one, "all policies together")
	if _, got, _ := strings.Cut(two, "all policies together"); got != want {
		t.Errorf("two servers' logs report differently from the one log:\n%s\n--- want:\n%s", two, one)
	}
	if !strings.Contains(two, "from 500 lines of "+la+", "+lb) {
		t.Errorf("header does not list both logs, oldest first:\n%s", two)
	}
}

// TestReplaySVGUnwritable: an --svg path that cannot be written fails at
// once, with exit 2 and before any report, not after the whole replay; an
// existing chart at the path is left alone by a replay that fails.
func TestReplaySVGUnwritable(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "no-such-dir", "replay.svg")
	out, errOut, code := runCmd("replay", "--svg", bad, "--config", "testdata/rules.yaml", "testdata/access.log")
	if code != 2 || out != "" || !strings.Contains(errOut, "no-such-dir") {
		t.Errorf("exit %d, stdout %d bytes, stderr %q; want exit 2, no report, an error naming the path", code, len(out), errOut)
	}
	old := filepath.Join(t.TempDir(), "old.svg")
	if err := os.WriteFile(old, []byte("<svg/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, code = runCmd("replay", "--svg", old, "--config", "testdata/rules.yaml", "testdata/no-such.log")
	if b, err := os.ReadFile(old); code != 2 || err != nil || string(b) != "<svg/>" {
		t.Errorf("a failed replay: exit %d, chart %q (%v); want exit 2 and the old chart kept", code, b, err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(old), ".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestReplayOutputIsAnInput: an output (--svg, --cpuprofile) that names
// an input (the configuration or a log, also through a link) or the other
// output is refused before anything is written: the profile was created
// at once, emptying the log it named before the replay read it, and the
// chart was renamed over the log or the configuration after the replay.
func TestReplayOutputIsAnInput(t *testing.T) {
	dir := t.TempDir()
	log, cfg := filepath.Join(dir, "access.log"), filepath.Join(dir, "rules.yaml")
	logData, err := os.ReadFile("testdata/access.log")
	if err != nil {
		t.Fatal(err)
	}
	cfgData, err := os.ReadFile("testdata/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.log")
	if err := os.Symlink(log, link); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "out")
	for _, tc := range []struct {
		flags []string
		name  string // the flag named in the error
	}{
		{[]string{"--cpuprofile", log}, "--cpuprofile"},
		{[]string{"--svg", log}, "--svg"},
		{[]string{"--svg", link}, "--svg"},
		{[]string{"--svg", dir + "/./access.log"}, "--svg"},
		{[]string{"--cpuprofile", cfg}, "--cpuprofile"},
		{[]string{"--svg", cfg}, "--svg"},
		{[]string{"--svg", fresh, "--cpuprofile", fresh}, "--cpuprofile"},
	} {
		if err := os.WriteFile(log, logData, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfg, cfgData, 0o644); err != nil {
			t.Fatal(err)
		}
		os.Remove(fresh)
		args := append([]string{"replay", "--quiet", "--config", cfg}, tc.flags...)
		args = append(args, log)
		out, errOut, code := runCmd(args...)
		gotLog, _ := os.ReadFile(log)
		gotCfg, _ := os.ReadFile(cfg)
		if code != exitUsage || out != "" || !strings.Contains(errOut, tc.name) {
			t.Errorf("%q: exit %d, stdout %d bytes, stderr %q; want exit 2, no report, an error naming %s", tc.flags, code, len(out), errOut, tc.name)
		}
		if !bytes.Equal(gotLog, logData) || !bytes.Equal(gotCfg, cfgData) {
			t.Errorf("%q: the log (%d bytes of %d) or the configuration (%d of %d) changed", tc.flags, len(gotLog), len(logData), len(gotCfg), len(cfgData))
		}
	}
}

// TestDemoSVGUnwritable: a demo --svg path that cannot be written fails at
// once, exit 2 and nothing on stdout, as replay's does, not after the
// whole demo has been shown.
func TestDemoSVGUnwritable(t *testing.T) {
	for _, bad := range []string{
		t.TempDir(), // a directory
		filepath.Join(t.TempDir(), "no-such-dir", "demo.svg"),
	} {
		out, errOut, code := runCmd("demo", "--svg", bad)
		if code != exitUsage || out != "" || !strings.Contains(errOut, bad) {
			t.Errorf("demo --svg %s: exit %d, stdout %d bytes, stderr %q; want exit 2, no output, an error naming the path", bad, code, len(out), errOut)
		}
	}
}

// TestReplayWarnsOfNoPath: a JSON log whose lines name no request path
// under any field the replay knows ("request_path", say) is replayed as
// requests to /, which no route policy sees: the report and standard
// error warn of it, with the field to name. It said nothing: the login
// policy of the rules saw none of the log's logins, and the replay exited
// 0, nothing rejected.
func TestReplayWarnsOfNoPath(t *testing.T) {
	var b strings.Builder
	for i := range 10 {
		fmt.Fprintf(&b, `{"time":"2024-03-10T12:00:%02dZ","ip":"192.0.2.1","method":"POST","request_path":"/login"}`+"\n", i)
	}
	log := filepath.Join(t.TempDir(), "app.jsonl")
	if err := os.WriteFile(log, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, _ := runCmd("replay", "--config", "testdata/rules.yaml", log)
	for _, w := range []string{out, errOut} {
		if !strings.Contains(w, "10 JSON lines name no request path") || !strings.Contains(w, "--json-path") {
			t.Errorf("no warning of the missing path:\n%s", w)
		}
	}
	// Named, the path is read and nothing is said.
	out, errOut, code := runCmd("replay", "--config", "testdata/rules.yaml", "--json-path", "request_path", log)
	if code != exitFindings || strings.Contains(out+errOut, "no request path") {
		t.Errorf("with --json-path request_path: exit %d (want %d, the login policy rejecting), output:\n%s%s", code, exitFindings, out, errOut)
	}
}

// TestReplayWarnsOfNoMethod: a JSON log whose lines name no method under
// any field the replay knows ("http_method", say) is replayed as GET
// requests, which no policy on POST sees: the report and standard error
// warn of it, with the field to name. It said nothing, and exited 0.
func TestReplayWarnsOfNoMethod(t *testing.T) {
	var b strings.Builder
	for i := range 10 {
		fmt.Fprintf(&b, `{"time":"2024-03-10T12:00:%02dZ","ip":"192.0.2.1","http_method":"POST","path":"/login"}`+"\n", i)
	}
	log := filepath.Join(t.TempDir(), "app.jsonl")
	if err := os.WriteFile(log, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, _ := runCmd("replay", "--config", "testdata/rules.yaml", log)
	for _, w := range []string{out, errOut} {
		if !strings.Contains(w, "10 JSON lines name no method") || !strings.Contains(w, "--json-method") {
			t.Errorf("no warning of the missing method:\n%s", w)
		}
	}
	out, errOut, code := runCmd("replay", "--config", "testdata/rules.yaml", "--json-method", "http_method", log)
	if code != exitFindings || strings.Contains(out+errOut, "no method") {
		t.Errorf("with --json-method http_method: exit %d (want %d, the login policy rejecting), output:\n%s%s", code, exitFindings, out, errOut)
	}
}
