package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestAheadReader: which lines of one log aheadReader leaves out, with a
// minute's tolerance. The lines are given as seconds from 12:00; a day
// ahead is a wrong clock.
func TestAheadReader(t *testing.T) {
	const day = 86400
	for _, tc := range []struct {
		name string
		secs []int
		left []int // the lines left out, from 1
	}{
		{"in order", []int{0, 1, 2, 3}, nil},
		{"a little out of order at the head", []int{30, 0, 65, 70}, nil},
		{"far ahead at the head", []int{day, 0, 1, 2, 3}, []int{1}},
		{"far ahead in the middle", []int{0, 1, day, 2, 3, 4}, []int{3}},
		{"two far ahead at the head", []int{day, day + 1, 0, 1, 2, 3, 4, 5, 6, 7}, []int{1, 2}},
		{"far ahead before a single line", []int{day, 0}, []int{1}},
		// Nothing after it to weigh it against.
		{"far ahead at the end", []int{0, 1, day}, nil},
		{"one line", []int{day}, nil},
		// A quiet log: every line jumps ahead, and the log goes on from it.
		{"sparse", []int{0, 120, 240, 360, 480}, nil},
		// A server idle for an hour; after the first line, a slow
		// request's, logged when it ended, stamped when it began.
		{"idle, then a slow request", []int{0, 3600, 3400, 3601, 3602, 3603}, nil},
		// Logs joined end to end: the older one's lines are behind, the
		// replay's to order.
		{"joined", []int{3600, 3601, 3602, 3603, 3604, 0, 1, 2, 3, 4}, nil},
		// Runs ahead: of four, each line is ahead of five of the eight
		// after it, and left out; of five, the first is ahead of four,
		// half, and the log goes on from it. A log of four lines joined
		// before an older one is such a run.
		{"run of four ahead", []int{day, day + 1, day + 2, day + 3, 0, 1, 2, 3, 4}, []int{1, 2, 3, 4}},
		{"run of five ahead", []int{day, day + 1, day + 2, day + 3, day + 4, 0, 1, 2, 3}, nil},
		{"joined, four lines first", []int{3600, 3601, 3602, 3603, 0, 1, 2, 3, 4}, []int{1, 2, 3, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			for _, s := range tc.secs {
				fmt.Fprintf(&b, "192.0.2.1 - - [%s] \"GET /%d HTTP/1.1\" 200 1\n", time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC).Add(time.Duration(s)*time.Second).Format("02/Jan/2006:15:04:05 -0700"), s)
			}
			lr, err := logparse.NewReader(strings.NewReader(b.String()), "a.log", logparse.Options{})
			if err != nil {
				t.Fatal(err)
			}
			r := newAheadReader(lr, time.Minute)
			var given []int
			for {
				e, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				var s int
				fmt.Sscanf(e.Path, "/%d", &s)
				given = append(given, s)
			}
			var want []int
			for i, s := range tc.secs {
				if !slices.Contains(tc.left, i+1) {
					want = append(want, s)
				}
			}
			if !slices.Equal(given, want) || r.skipped != int64(len(tc.left)) {
				t.Errorf("gave %v, %d left out; want %v, %d", given, r.skipped, want, len(tc.left))
			}
			if len(tc.left) > 0 && r.first.line != int64(tc.left[0]) {
				t.Errorf("the first line left out is line %d, want %d", r.first.line, tc.left[0])
			}
		})
	}
}

// TestAheadReaderWarning: the warning names the log, counts the lines
// left out and gives the first's number, time and lead over the line
// after it; the help gives the lookahead.
func TestAheadReaderWarning(t *testing.T) {
	a := &aheadReader{skipped: 2, first: aheadSkip{
		line: 7, t: time.Date(2031, 3, 10, 12, 0, 0, 0, time.UTC),
		next: 8, nextT: time.Date(2031, 3, 10, 11, 0, 0, 0, time.UTC)}}
	got := a.warning("a\nb.log", "1m0s, the reorder window")
	want := `"a\nb.log": 2 lines stamped far ahead of the lines after them, by more than 1m0s, the reorder window (the first: line 7, at 2031-03-10T12:00:00Z, 1h0m0s ahead of line 8): left out, not replayed; replayed, they would have made the later lines of this log and of the others late (a wrong clock, or a corrupt line)`
	if got != want {
		t.Errorf("warning\n%s\nwant\n%s", got, want)
	}
	if w := (&aheadReader{}).warning("a.log", "1m0s"); w != "" {
		t.Errorf("no line left out: warning %q, want none", w)
	}
	if want := fmt.Sprintf("next %d lines", aheadLookahead); !strings.Contains(strings.Join(strings.Fields(replayHead), " "), want) {
		t.Errorf("replay's help does not say %q", want)
	}
}
