package reload_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// TestErrorsNameTheFile: every error a reload gives (Reload's result, the
// OnReload hook's, the log's) names the configuration file, whatever went
// wrong: a reader of a log line or an alert need not know which Watcher
// it came from. Each kind of failure is checked on its own.
func TestErrorsNameTheFile(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	errRefused := errors.New("refused by the application")
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, path string)
	}{
		{"invalid YAML", func(t *testing.T, path string) { writeAtomic(t, path, "policies: [") }},
		{"invalid field", func(t *testing.T, path string) {
			writeAtomic(t, path, "policies:\n  - {name: p0, limit: -1, window: 1h}\n")
		}},
		{"empty", func(t *testing.T, path string) { writeAtomic(t, path, "") }},
		{"too large", func(t *testing.T, path string) {
			writeAtomic(t, path, config(1)+"#"+strings.Repeat("x", 300<<10)+"\n")
		}},
		{"missing", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}},
		{"a directory", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{"apply fails", func(t *testing.T, path string) { writeAtomic(t, path, config(13)) }},
		{"restart needed", func(t *testing.T, path string) { writeAtomic(t, path, config(14)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, cfg := loaded(t, config(5))
			var logs bytes.Buffer
			var hooked []error
			w, err := reload.New(path, func(c *policy.Config) error {
				switch c.Policies[0].Spec().Limit {
				case 13:
					return errRefused
				case 14:
					return fmt.Errorf("headers: %w", policy.ErrRestartNeeded)
				}
				return nil
			}, reload.InForce(cfg), reload.WithDebounce(time.Hour),
				reload.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
				reload.OnReload(func(_ *policy.Config, err error) { hooked = append(hooked, err) }))
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			tc.spoil(t, path)
			err = w.Reload()
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Errorf("Reload = %v, want an error naming %s", err, path)
			}
			if len(hooked) != 1 || hooked[0] == nil || !strings.Contains(hooked[0].Error(), path) {
				t.Errorf("hook got %v, want one error naming %s", hooked, path)
			}
			if !strings.Contains(logs.String(), path) {
				t.Errorf("log %q does not name %s", logs.String(), path)
			}
		})
	}
}

// TestReloadAfterClose: Close's doc says Reload still works after it: the
// file is read and a new version applied, with the watch gone.
func TestReloadAfterClose(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path, cfg := loaded(t, config(5))
	var applied []int64
	w, err := reload.New(path, func(c *policy.Config) error {
		applied = append(applied, c.Policies[0].Spec().Limit)
		return nil
	}, reload.WithLogger(quiet), reload.InForce(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	writeAtomic(t, path, config(6))
	if err := w.Reload(); err != nil {
		t.Fatalf("Reload after Close: %v", err)
	}
	if fmt.Sprint(applied) != "[6]" || w.Config() == nil || w.Config().Policies[0].Spec().Limit != 6 {
		t.Errorf("after Close and Reload: applied %v, Config %v; want [6] and the new file's", applied, w.Config())
	}
}

// TestDefaultDebounceAndGrace: a Watcher built without WithDebounce or
// WithGrace waits DefaultDebounce after an event and gives a file that
// does not load DefaultGrace, and those are the 250 ms and 2 s the README
// gives.
func TestDefaultDebounceAndGrace(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	if reload.DefaultDebounce != 250*time.Millisecond || reload.DefaultGrace != 2*time.Second {
		t.Errorf("DefaultDebounce %v, DefaultGrace %v; the README says 250ms and 2s", reload.DefaultDebounce, reload.DefaultGrace)
	}
	path, cfg := loaded(t, config(5))
	clock := newFakeClock()
	w, err := reload.New(path, func(*policy.Config) error { return nil },
		reload.WithLogger(quiet), reload.InForce(cfg), reload.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	writeAtomic(t, path, "")
	if d := await(t, clock.resets, "no event for the emptied file"); d != reload.DefaultDebounce {
		t.Errorf("the timer was set for %v after an event, want DefaultDebounce (%v)", d, reload.DefaultDebounce)
	}
	// Fire the debounce (resets from later events of the same save set
	// the same debounce); the empty file is given the default grace.
	for {
		clock.advance(reload.DefaultDebounce)
		d := await(t, clock.resets, "no grace given to the empty file")
		if d == reload.DefaultDebounce {
			continue
		}
		if d != reload.DefaultGrace {
			t.Errorf("the empty file is read again after %v, want DefaultGrace (%v)", d, reload.DefaultGrace)
		}
		break
	}
}

// TestOnReloadOnEachReloadOfAnError: besides each reload that found new
// content, the hook hears every Reload that finds a file that does not
// load, the same as before or not (Reload gives no grace and says it
// again), and every Reload that calls apply again for content whose apply
// failed; a Reload of content applied already says nothing.
func TestOnReloadOnEachReloadOfAnError(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path, cfg := loaded(t, config(5))
	failApply := true
	var hooked []string
	w, err := reload.New(path, func(*policy.Config) error {
		if failApply {
			return errors.New("refused")
		}
		return nil
	}, reload.WithLogger(quiet), reload.InForce(cfg), reload.WithDebounce(time.Hour),
		reload.OnReload(func(c *policy.Config, err error) { hooked = append(hooked, fmt.Sprintf("%v/%v", c != nil, err != nil)) }))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	writeAtomic(t, path, "policies: [")
	for range 2 {
		if err := w.Reload(); err == nil {
			t.Fatal("Reload of a broken file = nil")
		}
	}
	writeAtomic(t, path, config(6))
	for range 2 {
		if err := w.Reload(); err == nil {
			t.Fatal("Reload with a failing apply = nil")
		}
	}
	failApply = false
	for range 2 {
		if err := w.Reload(); err != nil {
			t.Fatal(err)
		}
	}
	// Broken twice, apply failed twice, applied once (then nothing).
	if got, want := fmt.Sprint(hooked), "[false/true false/true false/true false/true true/false]"; got != want {
		t.Errorf("hook calls %s, want %s", got, want)
	}
}

// TestLogLevels: WithLogger's doc gives the levels: a reload is logged at
// Info (as "config reloaded", the README's words, with the file and the
// number of policies), a rejected file and a failed apply at Error; the
// file put back as it was is Info, and a Config applied whose other
// settings wait for a restart a warning (Reload's doc).
func TestLogLevels(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path, cfg := loaded(t, config(5))
	var logs bytes.Buffer
	w, err := reload.New(path, func(c *policy.Config) error {
		switch c.Policies[0].Spec().Limit {
		case 13:
			return errors.New("refused")
		case 14:
			return fmt.Errorf("headers: %w", policy.ErrRestartNeeded)
		}
		return nil
	}, reload.InForce(cfg), reload.WithDebounce(time.Hour), reload.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, step := range []struct {
		data, level, msg string
		policies         int
	}{
		{config(6, 7), "INFO", "config reloaded", 2},
		{"policies: [", "ERROR", "config rejected", 0},
		{config(6, 7), "INFO", "config restored", 0},
		{config(13), "ERROR", "config apply failed", 0},
		{config(14), "WARN", "config reloaded; some settings take effect only at restart", 1},
	} {
		logs.Reset()
		writeAtomic(t, path, step.data)
		_ = w.Reload()
		var rec struct {
			Level, Msg, File string
			Policies         int
		}
		if err := json.Unmarshal(logs.Bytes(), &rec); err != nil {
			t.Fatalf("after %q: log %q is not one JSON record: %v", step.data, logs.String(), err)
		}
		if rec.Level != step.level || !strings.HasPrefix(rec.Msg, "ratekeeper: "+step.msg) || rec.File != path || rec.Policies != step.policies {
			t.Errorf("after %q: logged %+v, want level %s, message %q, file %s, %d policies", step.data, rec, step.level, step.msg, path, step.policies)
		}
	}
}
