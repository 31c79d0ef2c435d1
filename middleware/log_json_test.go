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
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// loggedLimit returns a handler behind one policy name (1 per minute,
// fixed window, keyed by key) whose LogObserver writes to lh; the clock
// stands at the start of a minute.
func loggedLimit(t *testing.T, lh slog.Handler, name string, key keyfunc.Func, opts ...middleware.LogOption) http.Handler {
	t.Helper()
	p := policy.Must(policy.New(name, algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Minute}, key))
	m, _ := loggedPolicies(t, lh, []*policy.Policy{p}, false, opts...)
	return m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
}

// TestLogJSONRetryAfter: in JSON logs a denial's retry_after reads as a
// duration ("1m0s"), as in text logs, not as integer nanoseconds.
func TestLogJSONRetryAfter(t *testing.T) {
	var buf bytes.Buffer
	h := loggedLimit(t, slog.NewJSONHandler(&buf, nil), "login", keyfunc.Must(keyfunc.IP()))
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
	h := loggedLimit(t, slog.NewTextHandler(&buf, nil), "key", keyfunc.Must(keyfunc.Header("X-User")), middleware.LogRate(1))
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
