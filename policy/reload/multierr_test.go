package reload_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// records decodes the JSON log lines in logs.
func records(t *testing.T, logs *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// TestRejectedFileEveryProblem: a file with several problems is rejected
// with every one: Reload's error and the hook's hold them, each a
// *policy.ConfigError (policy.ConfigErrors lists them, errors.Is
// ErrConfig holds), and the one ERROR record logged names the file and
// holds them all in its error, one per line, each with its position.
func TestRejectedFileEveryProblem(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rk.yaml")
	writeAtomic(t, path, config(1))
	var logs bytes.Buffer
	var hooked error
	w, err := reload.New(path, func(*policy.Config) error { return nil },
		reload.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))), reload.WithDebounce(time.Hour),
		reload.OnReload(func(_ *policy.Config, err error) { hooked = err }))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	writeAtomic(t, path, "policies:\n  - {name: a b, limit: 0, window: 0s}\n")
	err = w.Reload()
	want := []string{
		fmt.Sprintf(`policy: %s:2:12: policies[0].name: "a b" contains ' '; use A-Z, a-z, 0-9, '-', '_' and '.'`, path),
		fmt.Sprintf("policy: %s:2:24: policies[0].limit: must be positive, got 0", path),
		fmt.Sprintf("policy: %s:2:35: policies[0].window: must be positive, got 0s", path),
	}
	var got []string
	for _, ce := range policy.ConfigErrors(err) {
		got = append(got, ce.Error())
	}
	if !slices.Equal(got, want) || !errors.Is(err, policy.ErrConfig) {
		t.Errorf("Reload = %v (ConfigErrors %q, errors.Is ErrConfig %v), want %q", err, got, errors.Is(err, policy.ErrConfig), want)
	}
	if hooked != err {
		t.Errorf("OnReload got %v, want Reload's error", hooked)
	}
	var rejected []map[string]any
	for _, r := range records(t, &logs) {
		if r["level"] == "ERROR" {
			rejected = append(rejected, r)
		}
	}
	if len(rejected) != 1 {
		t.Fatalf("ERROR records %v, want one", rejected)
	}
	r := rejected[0]
	if r["msg"] != "ratekeeper: config rejected; previous rules keep running" || r["file"] != path || r["error"] != strings.Join(want, "\n") {
		t.Errorf("record %v, want the rejection of %s with every problem, one per line", r, path)
	}
}

// TestApplyFailedEveryProblem: apply's error holding several problems
// (the middleware's SetPolicies refusing a set, joined by package policy)
// is wrapped with %w: errors.Is, errors.As and policy.Errors see every
// one through "reload: apply FILE: middleware: ", and the record logged
// holds them all. The policies in force are kept.
func TestApplyFailedEveryProblem(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rk.yaml")
	writeAtomic(t, path, config(5))
	cfg, err := policy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(algotest.NewClock(time.Unix(1_700_000_000, 0))))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	m, err := middleware.FromConfig(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	// An apply that adds a nil policy and a second of one name.
	apply := func(c *policy.Config) error { return m.SetPolicies(append(c.Policies, nil, c.Policies[0])) }
	w, err := reload.New(path, apply, reload.InForce(cfg),
		reload.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))), reload.WithDebounce(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	writeAtomic(t, path, config(7))
	err = w.Reload()
	want := fmt.Sprintf("reload: apply %s: middleware: SetPolicies: policy: Policies hold a nil or zero Policy at index 1\n", path) +
		`policy: "p0": Name is the name of policies 0 and 2 of the set`
	if err == nil || err.Error() != want {
		t.Fatalf("Reload = %v, want\n%s", err, want)
	}
	var pe *policy.Error
	if !errors.Is(err, policy.ErrConfig) || !errors.As(err, &pe) || pe.Field != "Policies" || len(policy.Errors(err)) != 2 {
		t.Errorf("Reload's error: errors.Is ErrConfig %v, errors.As %v, policy.Errors %v; want true, the first, both",
			errors.Is(err, policy.ErrConfig), pe, policy.Errors(err))
	}
	var failed map[string]any
	for _, r := range records(t, &logs) {
		if r["msg"] == "ratekeeper: config apply failed" {
			failed = r
		}
	}
	if failed == nil || failed["file"] != path || failed["error"] != want {
		t.Errorf("apply failure record %v, want the file and the whole error", failed)
	}
	if got := m.Set().Policy(0).Spec().Limit; got != 5 {
		t.Errorf("limit in force %d after the failed apply, want 5", got)
	}
}
