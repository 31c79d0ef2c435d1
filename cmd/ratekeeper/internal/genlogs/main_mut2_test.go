package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGenerateLines runs the go:generate lines of cmd/ratekeeper (gen.go)
// as they are, but for the -o file, made in a temporary directory: each
// writes its file (gzip-compressed for -gzip), nothing to standard output,
// and the file holds the shipped sample.
func TestGenerateLines(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		file string
		args []string
	}{
		{"access.log", []string{"-n", "3000", "-seed", "1"}},
		{"access.log.1.gz", []string{"-n", "1000", "-seed", "2", "-start", "2024-03-10T11:00:00Z", "-gzip"}},
		{"access.jsonl", []string{"-n", "500", "-seed", "3", "-format", "json", "-span", "10m"}},
	} {
		out := filepath.Join(dir, tc.file)
		var stdout bytes.Buffer
		if err := run(append(tc.args, "-o", out), &stdout); err != nil || stdout.Len() != 0 {
			t.Errorf("%s: run = %v, %d bytes to standard output; want nil and none", tc.file, err, stdout.Len())
			continue
		}
		got := readLog(t, out)
		want := readLog(t, filepath.Join("..", "..", "testdata", tc.file))
		if got == nil || !bytes.Equal(got, want) {
			t.Errorf("%s: wrote %d bytes of log, want the %d of the shipped sample", tc.file, len(got), len(want))
		}
	}
}

// readLog returns the log in file, decompressed if its name ends in .gz
// (which it must then be, whole); nil if it is not.
func readLog(t *testing.T, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(file, ".gz") {
		return data
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Errorf("%s: %v", file, err)
		return nil
	}
	log, err := io.ReadAll(zr)
	if err != nil {
		t.Errorf("%s: %v", file, err)
		return nil
	}
	return log
}

// TestDefaults: with no flags, genlogs writes what the defaults -help
// shows make: 2000 lines of seed 1.
func TestDefaults(t *testing.T) {
	var got, want bytes.Buffer
	if err := run(nil, &got); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"-n", "2000", "-seed", "1", "-format", "combined", "-start", "2024-03-10T12:00:00Z", "-span", "1h", "-malformed", "0.002"}, &want); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("with no flags: %d lines, not the log of the defaults (%d lines)", strings.Count(got.String(), "\n"), strings.Count(want.String(), "\n"))
	}
}

// TestFlagBounds: the flags' extremes are accepted (a span of 1ns,
// -malformed 0 for no malformed line and 1 for all), and a single
// argument is refused as many are.
func TestFlagBounds(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		malformed int // lines of the 20 written; -1: an error
	}{
		{[]string{"-span", "1ns"}, 0},
		{[]string{"-malformed", "0", "-seed", "4"}, 0},
		{[]string{"-malformed", "1"}, 20},
		{[]string{"out.log"}, -1},
	} {
		var out bytes.Buffer
		err := run(append([]string{"-n", "20", "-malformed", "0"}, tc.args...), &out)
		if tc.malformed < 0 {
			if err == nil || !strings.Contains(err.Error(), "no arguments expected") || out.Len() != 0 {
				t.Errorf("run(%q) = %v, %d bytes written; want the arguments refused", tc.args, err, out.Len())
			}
			continue
		}
		if err != nil || strings.Count(out.String(), "\n") != 20 || strings.Count(out.String(), `" 400 0`+"\n") != tc.malformed {
			t.Errorf("run(%q) = %v, %q; want 20 lines, %d malformed", tc.args, err, out.String(), tc.malformed)
		}
	}
}

// TestOutputFileError: a -o file that cannot be created is an error
// naming it, and nothing is written anywhere.
func TestOutputFileError(t *testing.T) {
	out := filepath.Join(t.TempDir(), "no such dir", "x.log")
	var stdout bytes.Buffer
	if err := run([]string{"-n", "3", "-o", out}, &stdout); err == nil || !strings.Contains(err.Error(), out) || stdout.Len() != 0 {
		t.Errorf("run(-o %s) = %v, %d bytes to standard output; want an error naming the file, nothing written", out, err, stdout.Len())
	}
}

// brokenPipe takes its first ok writes and fails the others, as
// standard output closed early does.
type brokenPipe struct{ ok int }

var errBroken = errors.New("broken pipe")

func (p *brokenPipe) Write(b []byte) (int, error) {
	if p.ok == 0 {
		return 0, errBroken
	}
	p.ok--
	return len(b), nil
}

// TestWriteErrors: an output that fails makes run fail with its error:
// plain, when the log is flushed; gzip-compressed, at the close, which
// writes the compressed log of a log this short after the gzip header.
func TestWriteErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		ok   int
	}{
		{[]string{"-n", "20"}, 0},
		{[]string{"-n", "20", "-gzip"}, 0},
		{[]string{"-n", "20", "-gzip"}, 1},
	} {
		if err := run(tc.args, &brokenPipe{ok: tc.ok}); !errors.Is(err, errBroken) {
			t.Errorf("run(%q) to a pipe broken after %d writes = %v, want its error", tc.args, tc.ok, err)
		}
	}
}

// TestBotBursts: the credential-stuffing bot posts in bursts, one every
// five minutes of the span (one for a span shorter than ten minutes), each
// over the first twentieth of its five minutes.
func TestBotBursts(t *testing.T) {
	t0 := time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		span   time.Duration
		bursts int
	}{
		{4 * time.Minute, 1},
		{9 * time.Minute, 1},
		{20 * time.Minute, 4},
	} {
		g := &gen{rng: rand.New(rand.NewPCG(5, 5^0x5eed)), t0: t0, span: tc.span, format: "combined"}
		every := tc.span / time.Duration(tc.bursts)
		seen := map[time.Duration]bool{}
		for _, r := range g.requests(4000) {
			if r.ip != "203.0.113.66" {
				continue
			}
			at := r.t.Sub(t0)
			start := at / every * every
			seen[start] = true
			if at-start > every/20 {
				t.Errorf("-span %s: a bot request at +%s, %s into its burst of +%s; want at most %s", tc.span, at, at-start, start, every/20)
			}
		}
		if len(seen) != tc.bursts {
			t.Errorf("-span %s: bot bursts at %v, want %d", tc.span, seen, tc.bursts)
		}
	}
}

// TestCommonIsCombinedCut: a seed's common log is its combined log
// without the referer and user agent: the same requests, statuses and
// response sizes, line for line.
func TestCommonIsCombinedCut(t *testing.T) {
	common := strings.Split(strings.TrimSuffix(string(generate(t, 9, "common", 500)), "\n"), "\n")
	combined := strings.Split(strings.TrimSuffix(string(generate(t, 9, "combined", 500)), "\n"), "\n")
	if len(common) != len(combined) {
		t.Fatalf("%d common lines, %d combined", len(common), len(combined))
	}
	for i, line := range common {
		full := combined[i]
		if strings.HasSuffix(line, `" 400 0`) { // malformed: the same in both
			if line != full {
				t.Errorf("line %d: common %q, combined %q", i+1, line, full)
			}
			continue
		}
		if cut, _, ok := strings.Cut(full, ` "-" "`); !ok || cut != line {
			t.Errorf("line %d: common %q, not combined %q cut before its referer", i+1, line, full)
		}
	}
}
