package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// forgedName is a file name that, written raw, adds a line of its own to
// the output ("ratekeeper: config OK") and drives the terminal (ESC).
const forgedName = "a\x1b[31m\nratekeeper: config OK"

// TestNamesCannotForgeStderrLines: every error and warning that names a
// file (an argument, the configuration, a log, an output) names it as the
// report does, quoted when it holds a character other than a graphic one
// (quote.IfNeeded), so that one message stays one line and no control
// character reaches the terminal. Each case runs twice, with a plain name
// and with forgedName in the same directory: the second's stderr must be
// the first's, line for line, with the plain path replaced by the forged
// one quoted; the plain one as it was (the goldens name plain files).
func TestNamesCannotForgeStderrLines(t *testing.T) {
	access, err := os.ReadFile("testdata/access.log")
	if err != nil {
		t.Fatal(err)
	}
	gz, err := os.ReadFile("testdata/access.log.1.gz")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := os.ReadFile("testdata/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bad, err := os.ReadFile("testdata/bad.yaml")
	if err != nil {
		t.Fatal(err)
	}
	write := func(data []byte) func(t *testing.T, p string) {
		return func(t *testing.T, p string) {
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	mkdir := func(t *testing.T, p string) {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	none := func(*testing.T, string) {}
	jsonNoPath := []byte(`{"time":"2024-01-01T00:00:00Z","remote_addr":"192.0.2.1"}` + "\n" +
		`{"time":"2024-01-01T00:00:01Z","remote_addr":"192.0.2.1"}` + "\n")
	const cfg, log = "testdata/rules.yaml", "testdata/access.log"
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, p string)
		args  func(p string) []string
	}{
		{"check missing", none, func(p string) []string { return []string{"check", p} }},
		{"check directory", mkdir, func(p string) []string { return []string{"check", p} }},
		{"check too large", write([]byte(strings.Repeat("#\n", 200<<10))), func(p string) []string { return []string{"check", p} }},
		{"check access log", write(access), func(p string) []string { return []string{"check", p} }},
		{"config missing", none, func(p string) []string { return []string{"replay", "--quiet", "--config", p, log} }},
		{"config invalid", write(bad), func(p string) []string { return []string{"replay", "--quiet", "--config", p, log} }},
		{"config is the log", write(rules), func(p string) []string { return []string{"replay", "--quiet", "--config", p, p} }},
		{"log missing", none, func(p string) []string { return []string{"replay", "--quiet", "--config", cfg, p} }},
		{"log directory", mkdir, func(p string) []string { return []string{"replay", "--quiet", "--config", cfg, p} }},
		{"log zstd", write([]byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0}), func(p string) []string { return []string{"replay", "--quiet", "--config", cfg, p} }},
		{"log zip", write(append([]byte("PK\x03\x04"), make([]byte, 300)...)), func(p string) []string { return []string{"replay", "--quiet", "--config", cfg, p} }},
		{"log truncated", write(gz[:len(gz)/2]), func(p string) []string { return []string{"replay", "--quiet", "--config", cfg, log, p} }},
		{"log without paths", write(jsonNoPath), func(p string) []string { return []string{"replay", "--quiet", "--config", cfg, p} }},
		{"log unparseable", write([]byte("GARBAGE\n")), func(p string) []string { return []string{"replay", "--quiet", "--config", cfg, p} }},
		{"log given twice", write(access), func(p string) []string { return []string{"replay", "--quiet", "--config", cfg, p, p} }},
		{"svg is the log", write(access), func(p string) []string { return []string{"replay", "--quiet", "--svg", p, "--config", cfg, p} }},
		{"svg in no directory", none, func(p string) []string { return []string{"replay", "--quiet", "--svg", p, "--config", cfg, log} }},
		{"cpuprofile in no directory", none, func(p string) []string { return []string{"replay", "--quiet", "--cpuprofile", p, "--config", cfg, log} }},
		{"demo svg in no directory", none, func(p string) []string { return []string{"demo", "--svg", p} }},
		{"config given twice", none, func(p string) []string { return []string{"replay", "--config", p, "--config", cfg, log} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if strings.HasSuffix(tc.name, "in no directory") {
				dir = filepath.Join(dir, "missing")
			}
			plain, forged := filepath.Join(dir, "plain"), filepath.Join(dir, forgedName)
			tc.setup(t, plain)
			tc.setup(t, forged)
			_, plainErr, plainCode := runCmd(tc.args(plain)...)
			_, errOut, code := runCmd(tc.args(forged)...)
			if plainErr == "" {
				t.Fatalf("%q: nothing on stderr (exit %d); the case tests nothing", tc.args(plain), plainCode)
			}
			if strings.Contains(plainErr, `"`+plain) {
				t.Errorf("a plain name is quoted:\n%s", plainErr)
			}
			want := strings.ReplaceAll(plainErr, plain, strconv.Quote(forged))
			if code != plainCode || errOut != want {
				t.Errorf("%q: exit %d, stderr:\n%s\nwant exit %d, stderr:\n%s", tc.args(forged), code, errOut, plainCode, want)
			}
			for _, l := range strings.Split(errOut, "\n") {
				if strings.TrimSpace(l) == "ratekeeper: config OK" {
					t.Errorf("the name forged the line %q", l)
				}
			}
			if strings.Contains(errOut, "\x1b") {
				t.Errorf("stderr holds ESC raw: %q", errOut)
			}
		})
	}
}

// TestFlagNamesCannotForgeStderrLines: a flag the command does not know,
// or of bad syntax, is named in the usage error quoted when it holds a
// character other than a graphic one, as file names are.
func TestFlagNamesCannotForgeStderrLines(t *testing.T) {
	for _, tc := range []struct {
		arg, want string
	}{
		{"--" + forgedName, `ratekeeper replay: unknown flag "--a\x1b[31m\nratekeeper: config OK"`},
		{"---" + forgedName, `ratekeeper replay: bad flag syntax: "---a\x1b[31m\nratekeeper: config OK" (a flag is --NAME, --NAME VALUE or --NAME=VALUE)`},
		// Plain: as it was.
		{"--confg", `ratekeeper replay: unknown flag --confg; did you mean --config?`},
		{"---quiet", `ratekeeper replay: bad flag syntax: ---quiet (a boolean flag is --NAME or --NAME=true|false); did you mean --quiet?`},
	} {
		_, errOut, code := runCmd("replay", tc.arg, "--config", "testdata/rules.yaml", "testdata/access.log")
		want := tc.want + "\nUsage: ratekeeper replay --config FILE [flags] LOG...\nRun \"ratekeeper replay --help\" for more.\n"
		if code != exitUsage || errOut != want {
			t.Errorf("replay %q: exit %d, stderr:\n%s\nwant exit %d, stderr:\n%s", tc.arg, code, errOut, exitUsage, want)
		}
	}
}

// TestJSONFieldNamesCannotForgeStderrLines: a --json-* field name is
// written in the reasons of malformed lines (the samples under "no
// parseable line", the report's) quoted when it holds a character other
// than a graphic one, as file names are; a plain one as it is.
func TestJSONFieldNamesCannotForgeStderrLines(t *testing.T) {
	log := filepath.Join(t.TempDir(), "a.jsonl")
	if err := os.WriteFile(log, []byte(`{"ts":"x","remote_addr":"192.0.2.1"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ field, reason string }{
		{"t\nratekeeper: config OK", `no time field ("t\nratekeeper: config OK")`},
		{"t2", `no time field (t2)`},
		{"ts", `field ts: unknown time format "x"`},
	} {
		_, errOut, code := runCmd("replay", "--quiet", "--config", "testdata/rules.yaml", "--json-time", tc.field, log)
		want := "ratekeeper replay: no parseable line in 1 line of " + log + "\n" +
			"  " + log + ":1: " + tc.reason + "\n" +
			`        "{\"ts\":\"x\",\"remote_addr\":\"192.0.2.1\"}"` + "\n"
		if code != exitUsage || errOut != want {
			t.Errorf("--json-time %q: exit %d, stderr:\n%s\nwant exit %d, stderr:\n%s", tc.field, code, errOut, exitUsage, want)
		}
	}
}

// TestJSONPathFieldCannotForgeWarningLines: the warning that JSON lines
// name no request path names the --json-path field quoted when it holds
// a character other than a graphic one.
func TestJSONPathFieldCannotForgeWarningLines(t *testing.T) {
	log := filepath.Join(t.TempDir(), "a.jsonl")
	if err := os.WriteFile(log, []byte(`{"ts":"2024-01-01T00:00:00Z","remote_addr":"192.0.2.1","method":"GET"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, _ := runCmd("replay", "--quiet", "--config", "testdata/rules.yaml", "--json-path", "p\nratekeeper: config OK", log)
	want := "ratekeeper replay: warning: " + log + `: 1 JSON line names no request path (field "p\nratekeeper: config OK"): replayed as requests to /, so route policies do not see their routes; name the log's field with --json-path`
	first, _, _ := strings.Cut(errOut, "\n")
	if first != want {
		t.Errorf("stderr:\n%s\nwant its first line:\n%s", errOut, want)
	}
}
