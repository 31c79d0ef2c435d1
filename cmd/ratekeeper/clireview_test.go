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
