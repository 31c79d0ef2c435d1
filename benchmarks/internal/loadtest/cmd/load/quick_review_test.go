package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestQuickKeepsExplicitFlags: -quick picks the reduced sizes, but a flag
// given with it is the user's choice and must hold; -quick overwrote
// -limit, -window, -windows, -rounds, -max-dur, -lat-dur and the flood's
// sizes whatever was given.
func TestQuickKeepsExplicitFlags(t *testing.T) {
	var stdout bytes.Buffer
	err := run([]string{"-quick", "-no-redis", "-out", "-", "-limit", "7", "-window", "100ms", "-windows", "2",
		"-rounds", "1", "-max-dur", "100ms", "-lat-dur", "100ms", "-flood-keys", "3000", "-flood-max", "640", "-conns", "4"}, &stdout)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"One policy of 7 per 100ms on one key", "for 2 windows from 4 connections",
		"median of 1 rounds of 100ms", "1 rounds of 100ms at a constant",
		"3000 distinct client IPs", "WithMaxKeys(640)",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("-quick with explicit flags: the report lacks %q:\n%s", want, stdout.String())
		}
	}
}

// attackTime is how long the attacks of a run with the flags of fs last
// (the exactness attacks, in parallel per backend with -quick, and the
// overhead's max-throughput, latency and in-process rounds), with and
// without the Redis parts.
func attackTime(t *testing.T, fs *flag.FlagSet) (withRedis, without time.Duration) {
	t.Helper()
	get := func(name string) flag.Getter { return fs.Lookup(name).Value.(flag.Getter) }
	quick := get("quick").Get().(bool)
	attack := time.Duration(get("windows").Get().(int)) * get("window").Get().(time.Duration)
	exact := func(redis bool) time.Duration {
		backends := [][]int{{len(algorithms.Kinds)}, {1}} // memory: every kind; memory-concurrent: sliding_log
		if redis {
			backends = append(backends, []int{len(algorithms.Kinds)}, []int{1})
		}
		var d time.Duration
		for _, b := range backends {
			if quick {
				d += attack
			} else {
				d += time.Duration(b[0]) * attack
			}
		}
		return d
	}
	round := get("max-dur").Get().(time.Duration) + get("lat-dur").Get().(time.Duration) + 500*time.Millisecond
	overhead := func(scenarios int) time.Duration {
		return time.Duration(scenarios*get("rounds").Get().(int)) * round
	}
	return exact(true) + overhead(6), exact(false) + overhead(5)
}

// flags returns the flag set run builds for args, parsed, with -quick
// applied.
func flags(t *testing.T, args ...string) *flag.FlagSet {
	t.Helper()
	fs, _, err := parseFlags(args, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// TestDocumentedDurations: what the flag help, the package documentation
// and scripts/load.sh say of how long a run takes is what its attacks
// last. -quick was "a few seconds" where its attacks alone last 11.5 s
// (17 s with Redis); the full run "about 3 to 4 minutes" where they last
// 4m05s with Redis, of the 5 the program gives itself.
func TestDocumentedDurations(t *testing.T) {
	qr, q := attackTime(t, flags(t, "-quick"))
	fr, f := attackTime(t, flags(t))
	quick := fmt.Sprintf("its attacks last %s (%s with Redis)", q.Round(time.Second), qr.Round(time.Second))
	full := fmt.Sprintf("its attacks last %s (%s with Redis)", f.Round(time.Second), fr.Round(time.Second))
	t.Logf("-quick: %s; full: %s", quick, full)
	help := flags(t).Lookup("quick").Usage
	if !strings.Contains(help, quick) {
		t.Errorf("-quick's help %q, want it to say %q", help, quick)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, _, _ := strings.Cut(string(src), "\npackage ")
	doc = strings.Join(strings.Fields(strings.ReplaceAll(doc, "//", "")), " ")
	for _, want := range []string{quick, full} {
		if !strings.Contains(doc, want) {
			t.Errorf("the package documentation does not say %q:\n%s", want, doc)
		}
	}
	script, err := os.ReadFile("../../../../../scripts/load.sh")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(strings.ReplaceAll(string(script), "#", "")), " ")
	for _, want := range []string{quick, full} {
		if !strings.Contains(text, want) {
			t.Errorf("scripts/load.sh does not say %q", want)
		}
	}
	if limit := 5 * time.Minute; fr >= limit {
		t.Errorf("the full run's attacks last %s, the program gives up after %s", fr, limit)
	}
}
