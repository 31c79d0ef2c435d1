package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

func generate(t *testing.T, seed uint64, format string, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	g := &gen{rng: rand.New(rand.NewPCG(seed, seed^0x5eed)), t0: time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC), span: time.Hour, format: format, malformed: 0.01}
	if err := g.write(bw, n); err != nil {
		t.Fatal(err)
	}
	bw.Flush()
	return buf.Bytes()
}

// TestDeterministicAndParseable checks that a seed always gives the same
// log, that another seed gives another, and that the logparse reader reads
// every line but the deliberately malformed ones, in time order.
func TestDeterministicAndParseable(t *testing.T) {
	for _, format := range []string{"combined", "common", "json"} {
		a, b := generate(t, 7, format, 2000), generate(t, 7, format, 2000)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: seed 7 gave two different logs", format)
		}
		if bytes.Equal(a, generate(t, 8, format, 2000)) {
			t.Errorf("%s: seeds 7 and 8 gave the same log", format)
		}
		r, err := logparse.NewReader(bytes.NewReader(a), format, logparse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		var last time.Time
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.Time.Before(last) {
				t.Errorf("%s: entry %d at %v goes back from %v", format, n, e.Time, last)
			}
			last = e.Time
			n++
		}
		if r.Lines() != 2000 || n+r.MalformedCount() != 2000 || r.MalformedCount() == 0 || r.MalformedCount() > 60 {
			t.Errorf("%s: %d lines, %d entries, %d malformed", format, r.Lines(), n, r.MalformedCount())
		}
	}
}

// TestShippedSamples regenerates the sample logs of cmd/ratekeeper/testdata
// as its go:generate lines (gen.go) make them and checks that they are the
// shipped files, so that the samples and their golden reports never drift
// from the generator.
func TestShippedSamples(t *testing.T) {
	for _, tc := range []struct {
		file   string
		seed   uint64
		n      int
		format string
		start  time.Time
		span   time.Duration
	}{
		{"access.log", 1, 3000, "combined", time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC), time.Hour},
		{"access.log.1.gz", 2, 1000, "combined", time.Date(2024, 3, 10, 11, 0, 0, 0, time.UTC), time.Hour},
		{"access.jsonl", 3, 500, "json", time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC), 10 * time.Minute},
	} {
		var buf bytes.Buffer
		bw := bufio.NewWriter(&buf)
		g := &gen{rng: rand.New(rand.NewPCG(tc.seed, tc.seed^0x5eed)), t0: tc.start, span: tc.span, format: tc.format, malformed: 0.002}
		if err := g.write(bw, tc.n); err != nil {
			t.Fatal(err)
		}
		bw.Flush()
		f, err := os.Open(filepath.Join("..", "..", "testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		var shipped io.Reader = f
		if strings.HasSuffix(tc.file, ".gz") {
			if shipped, err = gzip.NewReader(f); err != nil {
				t.Fatal(err)
			}
		}
		data, err := io.ReadAll(shipped)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, buf.Bytes()) {
			t.Errorf("testdata/%s is not what its go:generate line makes (run go generate ./cmd/ratekeeper)", tc.file)
		}
	}
}

// TestFlagErrors: a bad flag is named in the error, and an argument
// (which stopped the flags, so that "genlogs out.log -n 3" wrote 2000
// lines to standard output) is refused.
func TestFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"extra", "-n", "3"}, "no arguments expected"},
		{[]string{"-n", "-1"}, "-n -1"},
		{[]string{"-span", "0s"}, "-span"},
		{[]string{"-format", "xml"}, "-format"},
		{[]string{"-malformed", "2"}, "-malformed"},
		{[]string{"-malformed", "NaN"}, "-malformed"},
		{[]string{"-start", "yesterday"}, "-start"},
	} {
		var out bytes.Buffer
		err := run(tc.args, &out)
		if err == nil || !strings.Contains(err.Error(), tc.want) || out.Len() != 0 {
			t.Errorf("run(%q) = %v, %d bytes written; want an error with %q and nothing written", tc.args, err, out.Len(), tc.want)
		}
	}
	var out bytes.Buffer
	if err := run([]string{"-n", "3", "-seed", "2"}, &out); err != nil || strings.Count(out.String(), "\n") != 3 {
		t.Errorf("run(-n 3) = %v, %q; want 3 lines", err, out.String())
	}
}

// TestExitStatus: -help prints the usage and exits 0, as a request for help
// is no error; a bad flag exits 2, its error printed once (by the flag
// package, with the usage), not a second time; other errors are printed and
// exit 2.
func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		code    int
		printed string // what exitCode prints; "" for nothing
	}{
		{[]string{"-n", "0"}, 0, ""},
		{[]string{"-help"}, 0, ""},
		{[]string{"-h"}, 0, ""},
		{[]string{"-bogus"}, 2, ""},
		{[]string{"-n", "x"}, 2, ""},
		{[]string{"-n", "-1"}, 2, "genlogs: -n -1: want 0 or more lines\n"},
	} {
		var out, stderr bytes.Buffer
		if code := exitCode(run(tc.args, &out), &stderr); code != tc.code || stderr.String() != tc.printed {
			t.Errorf("genlogs %q: exit %d, printed %q; want exit %d, printed %q", tc.args, code, stderr.String(), tc.code, tc.printed)
		}
	}
}
