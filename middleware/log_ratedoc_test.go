package middleware_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
)

// queueSecondRecords sends, in one second on the clock, to a heldLog with
// LogRate(1) logging at level, each request that writes a record of the
// policy "queue" (its queue's holds served, refusals for a deadline
// before the turn, and a denial once the queue is a minute long, twice
// each), and returns the records of that policy written.
func queueSecondRecords(t *testing.T, level slog.Level) []string {
	t.Helper()
	var buf bytes.Buffer
	hl := newHeldLog(t, slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: level}), heldRouters[0].router, 1000, middleware.LogRate(1))
	hl.serve(context.Background()) // not held: the queue's first place
	hl.wait = func(context.Context, time.Duration) error { return nil }
	refuse := func() {
		t.Helper()
		ctx := beforeTurn(time.Second)
		if w := hl.serve(ctx); w.Code != http.StatusServiceUnavailable {
			t.Fatalf("request with a deadline before its turn: %d, want 503", w.Code)
		}
	}
	refuse()
	refuse()
	denied := 0
	for i := 0; denied < 2; i++ { // held and served, 5 s further back each, until the queue is full
		if i == 20 {
			t.Fatal("the queue denied nothing in 20 requests")
		}
		switch w := hl.serve(context.Background()); w.Code {
		case http.StatusOK:
		case http.StatusTooManyRequests:
			denied++
		default:
			t.Fatalf("request %d: %d", i, w.Code)
		}
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		if line == "" {
			continue
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["policy"] == "queue" {
			got = append(got, fmt.Sprint(rec["level"], " ", rec["msg"]))
		}
	}
	return got
}

// docOf returns the doc comment of the declaration name in file, its
// lines joined by spaces.
func docOf(t *testing.T, file, name string) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.Name == name {
				return strings.Join(strings.Fields(d.Doc.Text()), " ")
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if ts, ok := s.(*ast.TypeSpec); ok && ts.Name.Name == name {
					return strings.Join(strings.Fields(d.Doc.Text()), " ")
				}
			}
		}
	}
	t.Fatalf("%s: no declaration of %s", file, name)
	return ""
}

// TestLogRateDocTellsTheBound: LogRate's doc said "the most records per
// second per policy", and LogObserver's "at most N records per second for
// each policy", but a leaky_queue policy's records are sampled on three
// budgets of N each (its denials; its holds cut short and refusals for a
// deadline; at Debug, its holds served), so that it writes up to 2N
// records a second at Info and 3N at Debug: an operator who sized the
// log by the doc got twice or three times as many. Both docs now say
// the bound per kind and the sum, which this test measures (LogRate(1):
// 2 records at Info, 3 at Debug, of the policy in one second).
func TestLogRateDocTellsTheBound(t *testing.T) {
	info, debug := queueSecondRecords(t, slog.LevelInfo), queueSecondRecords(t, slog.LevelDebug)
	if len(info) < 2 || len(debug) <= len(info) {
		t.Fatalf("records of the queue policy in one second, LogRate(1): at Info %q, at Debug %q; want at least 2, and more at Debug", info, debug)
	}
	for _, name := range []string{"LogRate", "LogObserver"} {
		doc := docOf(t, "log.go", name)
		for _, claim := range []*regexp.Regexp{
			regexp.MustCompile(`the most records per second per policy`),
			regexp.MustCompile(`at most N records per second for each policy`),
		} {
			if claim.MatchString(doc) {
				t.Errorf("the doc of %s says %q; LogRate(1) lets one policy write %d records in a second at Info (%q), %d at Debug (%q)",
					name, claim, len(info), info, len(debug), debug)
			}
		}
		for _, want := range []string{fmt.Sprintf("%dN", len(info)), fmt.Sprintf("%dN", len(debug))} {
			if !strings.Contains(doc, want) {
				t.Errorf("the doc of %s does not give the bound %s of one policy's records a second (LogRate(1): at Info %q, at Debug %q)", name, want, info, debug)
			}
		}
	}
}
