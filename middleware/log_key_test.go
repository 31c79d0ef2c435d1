package middleware_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// apiKey keys by the X-API-Key header as sent, as a key function of the
// application's own may (keyfunc.Header keys a credential by its digest):
// the key holds the credential.
var apiKey keyfunc.Func = func(r *http.Request) (string, error) {
	if k := r.Header.Get("X-API-Key"); k != "" {
		return k, nil
	}
	return "", keyfunc.ErrNoKey
}

// denials sends each key of keys twice to h (the second is denied) and
// returns the denial records h's observer logged as JSON to buf.
func denials(t *testing.T, h apiLimited, buf *bytes.Buffer, keys ...string) []map[string]any {
	t.Helper()
	for _, k := range keys {
		h.ServeHTTP(httptest.NewRecorder(), k)
		h.ServeHTTP(httptest.NewRecorder(), k)
	}
	recs := deniedRecords(t, buf)
	if len(recs) != len(keys) {
		t.Fatalf("%d denial records, want %d:\n%s", len(recs), len(keys), buf)
	}
	return recs
}

// deniedRecords returns the denial records logged as JSON to buf.
func deniedRecords(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == "ratekeeper: request denied" {
			recs = append(recs, rec)
		}
	}
	return recs
}

// apiLimited is a handler limited to 1 request a minute per API key.
type apiLimited struct{ h http.Handler }

// ServeHTTP serves a request with API key key.
func (a apiLimited) ServeHTTP(w *httptest.ResponseRecorder, key string) {
	r := httptest.NewRequest("GET", "/v1/orders", nil)
	r.Header.Set("X-API-Key", key)
	a.h.ServeHTTP(w, r)
}

func newAPILimited(t *testing.T, opts ...middleware.Option) apiLimited {
	store, _ := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{fixed("per-key", 1, time.Minute, apiKey)}, opts...)
	return apiLimited{m.Handler(ok)}
}

// pkForm is the form of a pk: a Structured Field byte sequence of 9 bytes.
var pkForm = regexp.MustCompile(`^:[A-Za-z0-9+/]{12}:$`)

// TestLogDenialKeyNotInClear: the record of a denial names the policy and
// gives the client's key as a pk, a keyed hash, never the key itself,
// which may be a credential (here an API key) or personal data (an
// address, a user ID). The records of one client share a pk; another
// client's differs. The record held the key in clear.
func TestLogDenialKeyNotInClear(t *testing.T) {
	var buf bytes.Buffer
	lo, err := middleware.NewLogObserver(slog.New(slog.NewJSONHandler(&buf, nil)))
	if err != nil {
		t.Fatal(err)
	}
	h := newAPILimited(t, middleware.WithObserver(lo))
	recs := denials(t, h, &buf, "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_other")
	h.ServeHTTP(httptest.NewRecorder(), "sk_live_4eC39HqLyjWDarjtT1zdp7dc")
	recs = append(recs[:1], append(deniedRecords(t, &buf)[2:], recs[1])...) // the first client's two, the other's
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	if strings.Contains(buf.String(), "sk_live") {
		t.Errorf("the log holds an API key:\n%s", buf.String())
	}
	for i, rec := range recs {
		pk, _ := rec["pk"].(string)
		if _, ok := rec["key"]; ok || rec["policy"] != "per-key" || !pkForm.MatchString(pk) {
			t.Errorf("record %d: %v; want policy per-key, a pk, no key", i, rec)
		}
	}
	if recs[0]["pk"] != recs[1]["pk"] || recs[0]["pk"] == recs[2]["pk"] {
		t.Errorf("pks %v, %v, %v: want the first two (one client) equal, the third (another) different", recs[0]["pk"], recs[1]["pk"], recs[2]["pk"])
	}
	// Another observer draws another secret: its pk of the same key differs.
	var buf2 bytes.Buffer
	lo2, _ := middleware.NewLogObserver(slog.New(slog.NewJSONHandler(&buf2, nil)))
	recs2 := denials(t, newAPILimited(t, middleware.WithObserver(lo2)), &buf2, "sk_live_other")
	if recs2[0]["pk"] == recs[2]["pk"] {
		t.Errorf("two observers gave key sk_live_other the same pk %v: want each its own random secret", recs2[0]["pk"])
	}
}

// TestLogPKIsTheHeadersPK: with the secret of WithPartitionKey, the pk of
// a denial record is the pk parameter the client read in the RateLimit
// member of the policy, so that the pk a client reports finds its records:
// given to the observer (LogPartitionKey), or taken by WithLogger from the
// middleware, before or after it in the options.
func TestLogPKIsTheHeadersPK(t *testing.T) {
	secret := []byte("0123456789abcdef-server-secret")
	for _, tt := range []struct {
		name string
		opts func(*bytes.Buffer) []middleware.Option
	}{
		{"LogPartitionKey", func(b *bytes.Buffer) []middleware.Option {
			lo, err := middleware.NewLogObserver(slog.New(slog.NewJSONHandler(b, nil)), middleware.LogPartitionKey(secret))
			if err != nil {
				t.Fatal(err)
			}
			return []middleware.Option{middleware.WithObserver(lo), middleware.WithPartitionKey(secret)}
		}},
		{"WithLogger first", func(b *bytes.Buffer) []middleware.Option {
			return []middleware.Option{middleware.WithLogger(slog.New(slog.NewJSONHandler(b, nil))), middleware.WithPartitionKey(secret)}
		}},
		{"WithLogger last", func(b *bytes.Buffer) []middleware.Option {
			return []middleware.Option{middleware.WithPartitionKey(secret), middleware.WithLogger(slog.New(slog.NewJSONHandler(b, nil)))}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			h := newAPILimited(t, tt.opts(&buf)...)
			h.ServeHTTP(httptest.NewRecorder(), "sk_live_abc")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, "sk_live_abc")
			_, pk, found := strings.Cut(w.Header().Get("RateLimit"), ";pk=")
			if w.Code != 429 || !found {
				t.Fatalf("%d RateLimit %q; want 429 with a pk", w.Code, w.Header().Get("RateLimit"))
			}
			recs := deniedRecords(t, &buf)
			if len(recs) != 1 || recs[0]["pk"] != pk {
				t.Errorf("denial records %v; want one whose pk is the header's %q", recs, pk)
			}
		})
	}
	if _, err := middleware.NewLogObserver(nil, middleware.LogPartitionKey(secret[:15])); err == nil {
		t.Error("LogPartitionKey with a 15-byte secret accepted")
	}
}

// TestLogRawKeysOptIn: LogRawKeys adds the key as the store sees it
// ("policy:key"), for an operator who chooses to keep it.
func TestLogRawKeysOptIn(t *testing.T) {
	var buf bytes.Buffer
	lo, err := middleware.NewLogObserver(slog.New(slog.NewJSONHandler(&buf, nil)), middleware.LogRawKeys())
	if err != nil {
		t.Fatal(err)
	}
	recs := denials(t, newAPILimited(t, middleware.WithObserver(lo)), &buf, "sk_test_1")
	if pk, _ := recs[0]["pk"].(string); recs[0]["key"] != "per-key:sk_test_1" || !pkForm.MatchString(pk) {
		t.Errorf("record %v; want key per-key:sk_test_1 and a pk", recs[0])
	}
}

// TestLogStoreErrorKeyNotInClear: a store's error about the value of one
// key (algorithms.ErrKeyState) names the store's key, which holds the
// client's, as the Redis store's does: its record gives the kind of error,
// not its text, unless LogRawKeys. (The error handler still gets it all.)
func TestLogStoreErrorKeyNotInClear(t *testing.T) {
	for _, raw := range []bool{false, true} {
		var buf bytes.Buffer
		opts := []middleware.LogOption{}
		if raw {
			opts = append(opts, middleware.LogRawKeys())
		}
		lo, err := middleware.NewLogObserver(slog.New(slog.NewJSONHandler(&buf, nil)), opts...)
		if err != nil {
			t.Fatal(err)
		}
		mem, _ := newStore(t)
		keyErr := fmt.Errorf("redisstore: take: ERR redisstore: key rk:{per-key:sk_live_abc}:fw:1:60000000000 holds a value the store did not write: %w", algorithms.ErrKeyState)
		s := &scripted{mem: mem, fail: []error{keyErr}}
		var handled error
		m := middleware.MustNew(s, []*policy.Policy{fixed("per-key", 1, time.Minute, apiKey)}, middleware.WithObserver(lo),
			middleware.WithErrorHandler(func(_ *http.Request, err error) { handled = err }))
		apiLimited{m.Handler(ok)}.ServeHTTP(httptest.NewRecorder(), "sk_live_abc")
		if !strings.Contains(buf.String(), "ratekeeper: store failed") || strings.Contains(buf.String(), "sk_live_abc") != raw {
			t.Errorf("LogRawKeys %v: log %s; want a store failure record with the key only with LogRawKeys", raw, buf.String())
		}
		if !errors.Is(handled, keyErr) {
			t.Errorf("LogRawKeys %v: error handler got %v, want the store's error", raw, handled)
		}
	}
}
