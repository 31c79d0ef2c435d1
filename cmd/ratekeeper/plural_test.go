package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// onePlural finds a count of one before a plural noun, or a word and a
// plural noun ("1 requests", "1 malformed lines"); pluralsOfOne leaves
// out the verbs that end in s ("1 is").
var onePlural = regexp.MustCompile(`(^|[^0-9.,/])1 (?:[a-z][a-z-]* )?([a-z][a-z-]*s)\b`)

func pluralsOfOne(s string) []string {
	var out []string
	for _, m := range onePlural.FindAllStringSubmatch(s, -1) {
		switch m[2] {
		case "is", "was", "has", "does", "gives", "names":
			continue
		}
		out = append(out, strings.TrimLeft(m[0], " (\t\n"))
	}
	return out
}

// TestCountsOfOne: every count the command prints takes the singular for
// one: a replay of one line ("replayed 1 request from 1 line", "1
// key-window"), one malformed line, one request logged late, a log of
// one line none of which parses, a configuration with one problem, the
// progress of one request. A replay of one line once printed "replayed 1
// requests from 1 lines".
func TestCountsOfOne(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cfg := write("one.yaml", "policies:\n  - {name: p, limit: 1, window: 1m, algorithm: sliding_log}\n")
	line := "192.0.2.1 - - [10/Mar/2024:12:%s +0000] \"GET / HTTP/1.1\" 200 1\n"
	one := write("one.log", fmt.Sprintf(line, "00:00"))
	malformed := write("malformed.log", fmt.Sprintf(line, "00:00")+"not a log line\n")
	late := write("late.log", fmt.Sprintf(line, "00:30")+fmt.Sprintf(line, "00:00"))
	bad := write("bad.log", "not a log line\n")
	badCfg := write("bad.yaml", "policies:\n  - {name: p, limit: 0, window: 1m}\n")

	for _, tc := range []struct {
		args []string
		want []string // in standard output, or error
	}{
		{[]string{"replay", "--config", cfg, one}, []string{"replayed 1 request from 1 line of ", "all policies together: 1 request, ", "(1 key-window of 1m0s with requests)"}},
		{[]string{"replay", "--config", cfg, malformed}, []string{"replayed 1 request from 2 lines of ", "  1 malformed line (50.00%), skipped"}},
		{[]string{"replay", "--reorder", "0", "--config", cfg, late}, []string{"  1 request logged out of time order by more than the reorder window"}},
		{[]string{"replay", "--config", cfg, bad}, []string{"no parseable line in 1 line of "}},
		{[]string{"check", badCfg}, []string{badCfg + ": 1 problem\n"}},
	} {
		out, errOut, _ := runCmd(tc.args...)
		all := out + errOut
		var lacks []string
		for _, want := range tc.want {
			if !strings.Contains(all, want) {
				lacks = append(lacks, want)
			}
		}
		if p := pluralsOfOne(all); len(p) > 0 || len(lacks) > 0 {
			t.Errorf("%s: output lacks %q, has counts of one with a plural %q:\n%s", strings.Join(tc.args, " "), lacks, p, all)
		}
	}

	var buf bytes.Buffer
	p := newProgress(&buf, -1, false)
	p.last = p.last.Add(-2 * time.Second)
	p.update(1<<20, 1)
	p.finish(1)
	if got := buf.String(); !strings.Contains(got, "replay: 1 request, 1 MiB read\n") || !strings.Contains(got, "replay: 1 request read in ") {
		t.Errorf("progress of one request = %q", got)
	}
}
