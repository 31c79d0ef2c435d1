package middleware_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestLogShadowFailClosedNamesNoPolicy: in shadow mode under FailClosed, a
// request the store could not decide is let through (it would have been
// answered 503). No policy denied it: the store failure is logged, with
// outcome shadow_denied, but no "request denied" record may name a policy
// and a key for it, nor may it spend that policy's sampling budget.
func TestLogShadowFailClosedNamesNoPolicy(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	m := middleware.MustNew(&failing{}, []*policy.Policy{fixed("first", 1, time.Minute, remote), fixed("second", 5, time.Minute, remote)},
		middleware.WithLogger(logger), middleware.WithShadow(nil), middleware.OnStoreError(middleware.FailClosed(time.Second)))
	if w := serve(m.Handler(ok), "GET", "/"); w.Code != 200 {
		t.Fatalf("shadow mode under FailClosed answered %d, want 200", w.Code)
	}
	if recs := deniedRecords(t, &buf); len(recs) != 0 {
		t.Errorf("a store failure was logged as a denial by policy %v (retry_after %v):\n%s", recs[0]["policy"], recs[0]["retry_after"], buf.String())
	}
	if !strings.Contains(buf.String(), `"msg":"ratekeeper: store failed","outcome":"shadow_denied"`) {
		t.Errorf("no store failure record with outcome shadow_denied:\n%s", buf.String())
	}
}

// TestLogFallbackDenialNamesPolicy: a request the fallback store denied
// while the store was down was denied by a policy: its record names it,
// beside the store failure.
func TestLogFallbackDenialNamesPolicy(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	fb, _ := newStore(t)
	m := middleware.MustNew(&failing{}, []*policy.Policy{fixed("first", 1, time.Minute, remote)},
		middleware.WithLogger(logger), middleware.OnStoreError(middleware.FallBack(fb)), middleware.WithBreaker(0, 0))
	h := m.Handler(ok)
	serve(h, "GET", "/")
	if w := serve(h, "GET", "/"); w.Code != 429 {
		t.Fatalf("second request under the fallback's 1 a minute: %d, want 429", w.Code)
	}
	recs := deniedRecords(t, &buf)
	if len(recs) != 1 || recs[0]["policy"] != "first" {
		t.Errorf("denial records %v, want one naming policy first:\n%s", recs, buf.String())
	}
}
