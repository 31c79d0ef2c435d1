package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A dirWatcher is standard output that looks into a directory at each
// write: what a run killed at that write (by SIGPIPE, as in "ratekeeper
// demo | head -1", or by Ctrl-C) would leave there.
type dirWatcher struct {
	dir  string
	buf  bytes.Buffer
	seen []string // files there at some write that were no whole SVG
}

func (d *dirWatcher) Write(p []byte) (int, error) {
	ents, _ := os.ReadDir(d.dir)
	for _, e := range ents {
		data, _ := os.ReadFile(filepath.Join(d.dir, e.Name()))
		if !bytes.HasSuffix(bytes.TrimSpace(data), []byte("</svg>")) {
			d.seen = append(d.seen, fmt.Sprintf("%s (%d bytes)", e.Name(), len(data)))
		}
	}
	return d.buf.Write(p)
}

// TestDemoKilledDefaultSVG: the demo without --svg makes its chart in the
// temporary directory when it writes it, not before it plays: "ratekeeper
// demo | head -1" (SIGPIPE at the first line written after head exits) left
// an empty ratekeeper-demo-*.svg behind in /tmp at each run.
func TestDemoKilledDefaultSVG(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	w := &dirWatcher{dir: tmp}
	var stderr bytes.Buffer
	if code := run([]string{"demo"}, w, &stderr); code != exitOK {
		t.Fatalf("demo: exit %d; stderr:\n%s", code, stderr.String())
	}
	if len(w.seen) > 0 {
		t.Errorf("while the demo wrote its output, the temporary directory held %s: a demo killed then leaves it behind, want no file there but the whole chart", w.seen[0])
	}
	ents, _ := os.ReadDir(tmp)
	if len(ents) != 1 || !strings.HasPrefix(ents[0].Name(), "ratekeeper-demo-") || !strings.HasSuffix(ents[0].Name(), ".svg") {
		t.Fatalf("temporary directory after the demo: %v, want one ratekeeper-demo-*.svg", ents)
	}
	path := filepath.Join(tmp, ents[0].Name())
	readSVG(t, path)
	if !strings.Contains(w.buf.String(), path) {
		t.Errorf("the demo's output does not name the chart %s", ents[0].Name())
	}
}

// TestSuggestions: a misspelt command or flag is answered with the one
// meant, as the configuration's fields are ("did you mean"), and a flag
// put before the command is told where it goes; the error stays on its
// first line, exit 2.
func TestSuggestions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in the first line of stderr
	}{
		{[]string{"chek", "x.yaml"}, `ratekeeper: unknown command "chek"; did you mean "check"?`},
		{[]string{"replya"}, `ratekeeper: unknown command "replya"; did you mean "replay"?`},
		{[]string{"Demo"}, `ratekeeper: unknown command "Demo"; did you mean "demo"?`},
		{[]string{"help", "repaly"}, `ratekeeper help: unknown command "repaly"; did you mean "replay"?`},
		{[]string{"--quiet", "replay"}, `ratekeeper: unknown command "--quiet": flags go after the command (ratekeeper replay --quiet ...)`},
		{[]string{"--version"}, `ratekeeper: unknown command "--version": a command comes first (demo, check or replay), then its flags`},
		{[]string{"replay", "--confg", "c.yaml", "a.log"}, `ratekeeper replay: unknown flag --confg; did you mean --config?`},
		{[]string{"replay", "--json_ip", "ip", "a.log"}, `ratekeeper replay: unknown flag --json_ip; did you mean --json-ip?`},
		{[]string{"replay", "-comp", "a.log"}, `ratekeeper replay: unknown flag -comp; did you mean --compare?`},
		{[]string{"demo", "--header", "draft-7"}, `ratekeeper demo: unknown flag --header; did you mean --headers?`},
	} {
		_, errOut, code := runCmd(tc.args...)
		first, _, _ := strings.Cut(errOut, "\n")
		if code != exitUsage || first != tc.want {
			t.Errorf("ratekeeper %s: exit %d, first line of stderr\n  %s\nwant exit 2 and\n  %s", strings.Join(tc.args, " "), code, first, tc.want)
		}
	}
	// Nothing near: no guess.
	_, errOut, _ := runCmd("replay", "--zzzzzz", "a.log")
	if first, _, _ := strings.Cut(errOut, "\n"); first != "ratekeeper replay: unknown flag --zzzzzz" {
		t.Errorf("replay --zzzzzz: first line of stderr %q, want no guess", first)
	}
}

// TestContradictoryFlags: a flag that takes one value given two, a
// --json-* flag with a --format that reads no JSON, and an output flag
// given an empty name are usage errors naming the flags, where each was
// a silent choice: the last --config of two was replayed (a user who
// meant both had half the policies), the --json-* flags did nothing, and
// --svg "" (an unset shell variable) wrote no chart. The same value twice
// is one value, and a bool flag or a repeatable one may be given again.
func TestContradictoryFlags(t *testing.T) {
	cfg, log := "testdata/rules.yaml", "testdata/access.log"
	for _, tc := range []struct {
		args []string
		want string // the first line of stderr; "" for none of these errors
	}{
		{[]string{"replay", "--config", cfg, "--config", "testdata/hops.yaml", log}, `ratekeeper replay: --config given twice (testdata/rules.yaml, then testdata/hops.yaml); it takes one`},
		{[]string{"replay", "--config=" + cfg, log, "-config", "testdata/hops.yaml"}, `ratekeeper replay: --config given twice (testdata/rules.yaml, then testdata/hops.yaml); it takes one`},
		{[]string{"replay", "--config", cfg, "--top", "3", "--top=4", log}, `ratekeeper replay: --top given twice (3, then 4); it takes one`},
		{[]string{"replay", "--config", cfg, "--format", "clf", "--json-ip", "client", log}, `ratekeeper replay: --json-ip is for JSON lines, which --format clf does not read`},
		{[]string{"replay", "--config", cfg, "--format=w3c", "--json-header", "X-A=a", log}, `ratekeeper replay: --json-header is for JSON lines, which --format w3c does not read`},
		{[]string{"replay", "--config", cfg, "--svg", "", log}, `ratekeeper replay: --svg: want a FILE name, not ""`},
		{[]string{"replay", "--config", cfg, "--cpuprofile=", log}, `ratekeeper replay: --cpuprofile: want a FILE name, not ""`},
		// None of these errors.
		{[]string{"replay", "--config", cfg, "--config", cfg, "--quiet", log}, ""},
		{[]string{"replay", "--config", cfg, "--quiet=false", "--quiet", log}, ""},
		{[]string{"replay", "--config", cfg, "--quiet", "--route", "/a", "--route", "/b", log}, ""},
		{[]string{"replay", "--config", cfg, "--quiet", "--format", "json", "--json-ip", "client", "--", "--config", log}, "ratekeeper replay: open --config: no such file or directory"},
	} {
		_, errOut, code := runCmd(tc.args...)
		first, _, _ := strings.Cut(errOut, "\n")
		if tc.want == "" {
			if code == exitUsage {
				t.Errorf("ratekeeper %s: exit 2, stderr:\n%s", strings.Join(tc.args, " "), errOut)
			}
			continue
		}
		if code != exitUsage || first != tc.want {
			t.Errorf("ratekeeper %s: exit %d, first line of stderr\n  %s\nwant exit 2 and\n  %s", strings.Join(tc.args, " "), code, first, tc.want)
		}
	}
}
