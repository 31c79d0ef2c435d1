package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestScriptFlushedGiveCalls: with the script fallback, the calls that give
// units back (GiveBack, Refund), sent at most once as EVALSHA, find the
// script gone after SCRIPT FLUSH (NOSCRIPT: not run) and send it with EVAL,
// which runs it once: the unit is given back exactly once, as the Takes
// after show (TestScriptFlushed covers Take).
func TestScriptFlushedGiveCalls(t *testing.T) {
	client := noFunctionsClient(t)
	ctx := context.Background()
	s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	flush := func() {
		t.Helper()
		if err := client.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	fw := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: 24 * time.Hour}, Key: "k"}
	lq := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Hour, MaxDelay: 24 * time.Hour}, Key: "q"}
	ds, err := s.Take(ctx, fw, lq)
	if err != nil || !ds[0].Allowed || !ds[1].Allowed {
		t.Fatalf("Take = %+v, %v", ds, err)
	}
	d2, err := s.Take(ctx, lq) // a second place, behind the first
	if err != nil || !d2[0].Allowed {
		t.Fatalf("Take(lq) = %+v, %v", d2, err)
	}
	if d, err := s.Take(ctx, fw); err != nil || d[0].Remaining != 3 { // two units of fw in use
		t.Fatalf("Take(fw) = %+v, %v; want admitted with Remaining 3", d, err)
	}

	flush()
	given := make([]algorithms.Refunded, 1)
	if err := s.GiveBack(ctx, given, []algorithms.Check{fw}, ds[:1], 0); err != nil || !given[0].Given {
		t.Fatalf("GiveBack after SCRIPT FLUSH = %+v, %v; want the unit given back", given[0], err)
	}
	if given[0].Remaining != 4 {
		t.Fatalf("GiveBack after SCRIPT FLUSH reports Remaining %d, want 4 (one of two units given back, once)", given[0].Remaining)
	}

	flush()
	refunded := make([]algorithms.Refunded, 1)
	if err := s.Refund(ctx, refunded, []algorithms.Check{lq}, d2, 0); err != nil || !refunded[0].Given {
		t.Fatalf("Refund after SCRIPT FLUSH = %+v, %v; want the last place given back", refunded[0], err)
	}
	// Given back once: one place (the first Take's) is still held.
	pk := make([]algorithms.Decision, 1)
	if err := s.Peek(ctx, pk, []algorithms.Check{lq}); err != nil {
		t.Fatal(err)
	}
	if pk[0].ResetAfter <= 0 || pk[0].ResetAfter > time.Hour {
		t.Fatalf("Peek after the refund = %+v, want one place of an hour still held (ResetAfter in (0, 1h])", pk[0])
	}
}
