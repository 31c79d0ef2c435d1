package middleware_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestLoggerGivenTwice: WithLogger builds a LogObserver of its own each
// time it is applied, so WithLogger(l) given twice to one middleware, or
// beside a LogObserver the application built on l (in either order),
// wrote every record twice: one denied request, two denial records. New
// refuses both, naming the options and what to do. Two loggers stay
// allowed (two *slog.Loggers, even on one handler, as l and l.With(...)),
// each writing once, each with the pks of the middleware's headers.
// Through chi and a ServeMux.
func TestLoggerGivenTwice(t *testing.T) {
	p := func() []*policy.Policy { return []*policy.Policy{fixed("p", 1, time.Minute, remote)} }
	logOn := func(l *slog.Logger) *middleware.LogObserver {
		lo, err := middleware.NewLogObserver(l)
		if err != nil {
			t.Fatal(err)
		}
		return lo
	}

	for _, router := range []string{"chi", "ServeMux"} {
		for _, tc := range []struct {
			name string
			opts func(l *slog.Logger) []middleware.Option
			want []string
		}{
			{"WithLogger twice", func(l *slog.Logger) []middleware.Option {
				return []middleware.Option{middleware.WithLogger(l), middleware.WithObserver(&nopObserver{}), middleware.WithLogger(l)}
			}, []string{"WithLogger: the logger is given twice", "give WithLogger once"}},
			{"WithLogger then its LogObserver", func(l *slog.Logger) []middleware.Option {
				return []middleware.Option{middleware.WithLogger(l), middleware.WithObserver(logOn(l))}
			}, []string{"WithLogger and WithObserver", "*middleware.LogObserver", "give WithLogger alone, or the LogObserver alone"}},
			{"LogObserver then WithLogger", func(l *slog.Logger) []middleware.Option {
				return []middleware.Option{middleware.WithObserver(&nopObserver{}, logOn(l)), middleware.WithLogger(l)}
			}, []string{"WithLogger and WithObserver", "*middleware.LogObserver", "give WithLogger alone, or the LogObserver alone"}},
		} {
			t.Run(router+"/"+tc.name, func(t *testing.T) {
				store, _ := newStore(t)
				var buf bytes.Buffer
				m, err := middleware.New(store, p(), tc.opts(slog.New(slog.NewJSONHandler(&buf, nil)))...)
				if err != nil {
					for _, want := range tc.want {
						if !strings.Contains(err.Error(), want) {
							t.Errorf("New: %v, want an error saying %q", err, want)
						}
					}
					return
				}
				t.Errorf("New accepted it: one denied request wrote %d denial records, want New to refuse it", denialsOfOne(t, m, router, &buf))
			})
		}

		// A nil logger is slog.Default, as it is when the option is
		// applied: WithLogger(nil) beside WithLogger(slog.Default()) is
		// one logger given twice. Compared without a panic.
		t.Run(router+"/nil and the default", func(t *testing.T) {
			store, _ := newStore(t)
			_, err := middleware.New(store, p(), middleware.WithLogger(nil), middleware.WithLogger(slog.Default()))
			if err == nil || !strings.Contains(err.Error(), "WithLogger: the logger is given twice") {
				t.Errorf("New(WithLogger(nil), WithLogger(slog.Default())): error %v, want the logger given twice", err)
			}
		})

		// Two loggers, or a LogObserver on another: each writes once,
		// and the pks of both are the headers'.
		t.Run(router+"/two loggers", func(t *testing.T) {
			store, _ := newStore(t)
			var buf1, buf2, buf3 bytes.Buffer
			l1 := slog.New(slog.NewJSONHandler(&buf1, nil))
			l2 := slog.New(slog.NewJSONHandler(&buf2, nil)).With("limiter", "b")
			secret := []byte("0123456789abcdef0123456789abcdef")
			m, err := middleware.New(store, p(),
				middleware.WithLogger(l1), middleware.WithLogger(l2), middleware.WithLogger(l1.With("limiter", "c")),
				middleware.WithObserver(logOn(slog.New(slog.NewJSONHandler(&buf3, nil)))),
				middleware.WithPartitionKey(secret))
			if err != nil {
				t.Fatalf("New with three loggers and a LogObserver on a fourth: %v", err)
			}
			h := routeEach(m)[router]
			serve(h, "GET", "/")
			buf1.Reset()
			buf2.Reset()
			buf3.Reset()
			rec := serve(h, "GET", "/")
			if rec.Code != http.StatusTooManyRequests {
				t.Fatalf("second request: status %d, want 429", rec.Code)
			}
			// l1 and l1.With(...) are two loggers on one handler.
			if n1, n2, n3 := denialRecords(&buf1), denialRecords(&buf2), denialRecords(&buf3); n1 != 2 || n2 != 1 || n3 != 1 {
				t.Errorf("one denied request: %d, %d and %d denial records, want 2 (two loggers on one handler), 1, 1", n1, n2, n3)
			}
			header := rec.Header().Get("RateLimit")
			for i, buf := range []*bytes.Buffer{&buf1, &buf2} {
				for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
					var r struct{ Msg, Pk string }
					if err := json.Unmarshal([]byte(line), &r); err != nil {
						t.Fatalf("log line %q: %v", line, err)
					}
					if r.Msg == "ratekeeper: request denied" && (r.Pk == "" || !strings.Contains(header, ";pk="+r.Pk)) {
						t.Errorf("logger %d: denial pk %q is not the RateLimit header's (%q)", i+1, r.Pk, header)
					}
				}
			}
		})
	}
}
