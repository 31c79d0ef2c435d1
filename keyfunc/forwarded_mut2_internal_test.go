package keyfunc

import (
	"strings"
	"testing"
)

// TestWalkerGivesUpAfterOverlongEntry: an entry longer than maxEntryLen
// (no comma in the last maxEntryLen+1 bytes) is returned once as "", and
// then the walker is exhausted: neither the rest of that line nor the
// earlier lines are looked at.
func TestWalkerGivesUpAfterOverlongEntry(t *testing.T) {
	w := walker{lines: []string{"192.0.2.1", "198.51.100.1," + strings.Repeat("9", maxEntryLen+1)}}
	if e, blank, ok := w.next(); e != "" || blank || !ok {
		t.Fatalf("first next() = %q, %v, %v; want \"\", false, true", e, blank, ok)
	}
	if e, blank, ok := w.next(); e != "" || blank || ok {
		t.Fatalf("next() after an overlong entry = %q, %v, %v; want \"\", false, false", e, blank, ok)
	}
}
