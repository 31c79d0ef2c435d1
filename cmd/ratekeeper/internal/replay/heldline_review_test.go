package replay

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestHeldLinesKeepNotTheirLogLines: a line held in the reorder window
// keeps its packed entry, not the text of the log line it was parsed
// from. A Common Log Format entry's X-Forwarded-For header (every entry
// whose first field is an address has one) is a substring of its line,
// and held as it was it kept the whole line alive: a field nothing reads
// (a custom format's additions after the Combined fields) stayed in
// memory for every held line, and a million lines within the reorder
// window took 584 MB peak RSS against the 500 MB target (BENCHMARKS.md).
// Here each line carries 4 KiB that no field keeps: held, it must cost
// far less than that.
func TestHeldLinesKeepNotTheirLogLines(t *testing.T) {
	const n, pad = 2000, 4 << 10
	// Every line held: the window spans the log.
	e, err := New(parse(t, "policies:\n  - {name: p, limit: 3, window: 1m}\n"), Options{Reorder: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	feedPadded(t, e, n, pad) // the log, its reader and its entries are gone once it returns
	runtime.GC()
	runtime.ReadMemStats(&after)
	if e.nHeld() != n {
		t.Fatalf("%d lines held, want all %d", e.nHeld(), n)
	}
	perLine := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	if perLine > pad/4 {
		t.Errorf("a held line costs %d bytes of heap, want well under the %d bytes of its log line that no field keeps", perLine, pad)
	}
	if _, err := e.Finish(); err != nil {
		t.Fatal(err)
	}
}

// feedPadded parses a Combined log of n lines, each ending with a field of
// pad bytes (a custom format's addition, which no entry field keeps), and
// adds each entry to e as the replay does.
func feedPadded(t *testing.T, e *Engine, n, pad int) {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "192.0.2.%d - - [10/Mar/2024:12:00:%02d +0000] \"GET /items/%d HTTP/1.1\" 200 512 \"-\" \"curl/8.5\" %s\n",
			i%250, i%60, i, strings.Repeat("x", pad))
	}
	r, err := logparse.NewReader(strings.NewReader(b.String()), "padded.log", logparse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for added := 0; ; added++ {
		en, err := r.Next()
		if err == io.EOF {
			if added != n {
				t.Fatalf("parsed %d entries, want %d", added, n)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(en.Headers) != 1 || en.Headers[0].Name != "X-Forwarded-For" {
			t.Fatalf("entry headers %+v, want the X-Forwarded-For of its first field", en.Headers)
		}
		if err := e.Add(&en); err != nil {
			t.Fatal(err)
		}
	}
}
