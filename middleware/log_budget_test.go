package middleware_test

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
)

// TestLogServedHoldsDoNotCrowdOutCutOnes: with Debug enabled, the routine
// records of holds served (Debug) spend a budget of their own, so they
// never suppress the Info records of holds cut short in the same second.
func TestLogServedHoldsDoNotCrowdOutCutOnes(t *testing.T) {
	var buf bytes.Buffer
	hl := newHeldLog(t, debugJSON(&buf), heldRouters[1].router, 10, middleware.LogRate(1))
	hl.serve(context.Background()) // not held: the queue's first place
	hl.wait = func(context.Context, time.Duration) error { return nil }
	if w := hl.serve(context.Background()); w.Code != http.StatusOK { // held, served: Debug
		t.Fatalf("served hold: %d", w.Code)
	}
	if w := hl.serve(hl.leaveAfter(t, 0)); w.Code != http.StatusServiceUnavailable { // held, its client gone: Info
		t.Fatalf("abandoned hold: %d", w.Code)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		for _, rec := range logRecords(t, bytes.NewBufferString(line), "ratekeeper: request held") {
			got = append(got, rec["level"].(string)+" "+rec["outcome"].(string)+" suppressed="+jsonNumber(rec["suppressed"]))
		}
	}
	want := []string{"DEBUG allowed suppressed=0", "INFO abandoned suppressed=0"}
	if !slices.Equal(got, want) {
		t.Errorf("hold records %q, want %q\n(log: %s)", got, want, buf.String())
	}
}
