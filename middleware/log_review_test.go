package middleware_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
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
	// StateFailingClosed's doc: the failure mode in force, requests served.
	if st := m.State(); st != middleware.StateFailingClosed {
		t.Errorf("State %v after the failure, want %v", st, middleware.StateFailingClosed)
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

// cancelling is a store whose calls end when their context does, as a
// network store's do when the client goes away, with the context's error.
type cancelling struct{ algorithms.Store }

func (cancelling) Take(ctx context.Context, _ ...algorithms.Check) ([]algorithms.Decision, error) {
	<-ctx.Done()
	return nil, fmt.Errorf("store: %w", ctx.Err())
}

// TestLogClientGoneIsNoStoreFailure: a request whose client went away
// while the store decided it is abandoned; the store did not fail (Stats
// counts no store error, the failure state stays healthy), so the log
// has no "store failed" record at level ERROR for it.
func TestLogClientGoneIsNoStoreFailure(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	m := middleware.MustNew(cancelling{}, []*policy.Policy{fixed("p", 1, time.Minute, remote)}, middleware.WithLogger(logger))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := serveCtx(ctx, m.Handler(ok), "GET", "/")
	if st := m.Stats(); w.Code != 503 || st.Abandoned != 1 || st.StoreErrors != 0 || m.State() != middleware.StateHealthy {
		t.Fatalf("client gone: %d, stats %+v, state %v; want 503, abandoned, no store error, healthy", w.Code, st, m.State())
	}
	if strings.Contains(buf.String(), "store failed") {
		t.Errorf("a client that went away was logged as a store failure:\n%s", buf.String())
	}

	// Nor is one shadow mode lets through to its handler (shadow-denied).
	buf.Reset()
	m = middleware.MustNew(cancelling{}, []*policy.Policy{fixed("p", 1, time.Minute, remote)}, middleware.WithLogger(logger), middleware.WithShadow(nil))
	w = serveCtx(ctx, m.Handler(ok), "GET", "/")
	if st := m.Stats(); w.Code != 200 || st.ShadowDenied != 1 || st.StoreErrors != 0 || strings.Contains(buf.String(), "store failed") {
		t.Errorf("shadow, client gone: %d, stats %+v, log:\n%s\nwant 200, shadow-denied, no store error counted nor logged", w.Code, st, buf.String())
	}

	// Nor is one that failed otherwise while its client was gone, which
	// counts as no failure either.
	buf.Reset()
	m = middleware.MustNew(&failing{}, []*policy.Policy{fixed("p", 1, time.Minute, remote)}, middleware.WithLogger(logger))
	serveCtx(ctx, m.Handler(ok), "GET", "/")
	if st := m.Stats(); st.Abandoned != 1 || st.StoreErrors != 0 || strings.Contains(buf.String(), "store failed") {
		t.Errorf("store down, client gone: stats %+v, log:\n%s\nwant no store error counted nor logged", st, buf.String())
	}

	// An error that counts although the client was gone (the backend's
	// answer about the key's value) is logged, as Stats counts it.
	buf.Reset()
	m = middleware.MustNew(keyState{}, []*policy.Policy{fixed("p", 1, time.Minute, remote)}, middleware.WithLogger(logger))
	serveCtx(ctx, m.Handler(ok), "GET", "/")
	if st := m.Stats(); st.Abandoned != 1 || st.StoreErrors != 1 || !strings.Contains(buf.String(), `"msg":"ratekeeper: store failed","outcome":"abandoned"`) {
		t.Errorf("key state error, client gone: stats %+v, log:\n%s\nwant the store error counted and logged", st, buf.String())
	}
}

// keyState is a store that answers every call with an error about the
// value a key holds.
type keyState struct{ algorithms.Store }

func (keyState) Take(context.Context, ...algorithms.Check) ([]algorithms.Decision, error) {
	return nil, fmt.Errorf("store: key holds another type: %w", algorithms.ErrKeyState)
}

// TestLogShadowNoKeyIsNoKey: in shadow mode a request without a key for a
// policy that rejects such requests is let through; the log says what
// would have happened, as outside shadow mode: "no key" at WARN, marked
// shadow, not a denial at INFO with a zero retry_after.
func TestLogShadowNoKeyIsNoKey(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	store, _ := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{fixed("by-user", 5, time.Minute, user)},
		middleware.WithLogger(logger), middleware.WithShadow(nil))
	if w := serve(m.Handler(ok), "GET", "/"); w.Code != 200 {
		t.Fatalf("shadow mode, no user: %d, want 200", w.Code)
	}
	if recs := deniedRecords(t, &buf); len(recs) != 0 {
		t.Errorf("a missing key was logged as a denial:\n%s", buf.String())
	}
	if s := buf.String(); !strings.Contains(s, `"level":"WARN","msg":"ratekeeper: no key"`) || !strings.Contains(s, `"shadow":true`) {
		t.Errorf("want a WARN \"no key\" record marked shadow:\n%s", s)
	}
}
