package middleware_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestLogJSONRetryAfter: in JSON logs a denial's retry_after reads as a
// duration ("1m0s"), as in text logs, not as integer nanoseconds.
func TestLogJSONRetryAfter(t *testing.T) {
	var buf bytes.Buffer
	clock := algotest.NewClock(time.Unix(1_700_000_040, 0)) // a minute starts
	lo, err := middleware.NewLogObserver(slog.New(slog.NewJSONHandler(&buf, nil)), middleware.LogClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	p := policy.Must(policy.New("login", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Minute}, keyfunc.Must(keyfunc.IP())))
	h := middleware.MustNew(store, []*policy.Policy{p}, middleware.WithObserver(lo)).
		Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for range 2 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/login", nil))
	}
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("log %q: %v", buf.String(), err)
	}
	if got := rec["retry_after"]; got != "1m0s" {
		t.Errorf("retry_after = %#v, want \"1m0s\" (log: %s)", got, buf.String())
	}
}

// TestLogPolicyNamedKeySampledApart: the denials of a policy named "key"
// (a valid name) and the requests without a key are sampled apart: a
// denial does not use up the second's budget of "no key" records, and
// dropping the policy does not reset theirs.
func TestLogPolicyNamedKeySampledApart(t *testing.T) {
	var buf bytes.Buffer
	clock := algotest.NewClock(time.Unix(1_700_000_040, 0))
	lo, err := middleware.NewLogObserver(slog.New(slog.NewTextHandler(&buf, nil)), middleware.LogRate(1), middleware.LogClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	p := policy.Must(policy.New("key", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Minute},
		keyfunc.Must(keyfunc.Header("X-User"))))
	h := middleware.MustNew(store, []*policy.Policy{p}, middleware.WithObserver(lo)).
		Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for _, user := range []string{"ann", "ann", ""} { // allowed, denied, no key
		r := httptest.NewRequest("GET", "/", nil)
		if user != "" {
			r.Header.Set("X-User", user)
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	log := buf.String()
	if !strings.Contains(log, "request denied") || !strings.Contains(log, "no key") {
		t.Errorf("log %q; want a denial and a no-key record, each within its own budget of 1 per second", log)
	}
}
