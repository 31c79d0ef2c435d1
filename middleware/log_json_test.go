package middleware_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
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
