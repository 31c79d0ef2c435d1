package algorithms

import (
	"strings"
	"testing"
)

// TestKindsInStep: the kinds are written in three places (Kinds, the
// switch of Kind.Valid, kindList in the errors of an unknown kind), kept
// in step by hand; this fails when one is left behind.
func TestKindsInStep(t *testing.T) {
	var names []string
	for _, k := range Kinds {
		if !k.Valid() {
			t.Errorf("Kinds holds %q, which Kind.Valid refuses", k)
		}
		names = append(names, string(k))
	}
	if got, want := kindList, strings.Join(names, ", "); got != want {
		t.Errorf("kindList = %q, want %q (Kinds)", got, want)
	}
	for _, k := range []Kind{"", "gcra", "Token_Bucket", "fixed-window"} {
		if k.Valid() {
			t.Errorf("Kind(%q).Valid() = true", k)
		}
	}
	valid := 0
	for _, k := range []Kind{FixedWindow, SlidingLog, SlidingWindow, SlidingBuckets, TokenBucket, LeakyBucket, LeakyQueue} {
		if k.Valid() {
			valid++
		}
	}
	if valid != len(Kinds) {
		t.Errorf("%d kinds are valid, Kinds holds %d", valid, len(Kinds))
	}
}
