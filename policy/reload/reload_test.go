package reload_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// wait is how long a test waits for a file event: generous, since the
// machine may be loaded; a passing test does not wait for it. It is
// counted by a [hangguard.Guard], in the time the test process runs.
const wait = 20 * time.Second

// await returns what c gives, failing the test with "<fail> within <wait>"
// if it gives nothing within wait.
func await[T any](t *testing.T, c <-chan T, fail string) T {
	t.Helper()
	return hangguard.Await(t, c, wait, fail)
}

var quiet = slog.New(slog.DiscardHandler)

// writeIn makes dir and its parents and writes in it the file name
// holding config(limit), atomically; it returns the file's path.
func writeIn(t *testing.T, dir, name string, limit int) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	writeAtomic(t, path, config(limit))
	return path
}

// writeAtomic saves data as editors do: a new file renamed over the old.
func writeAtomic(t *testing.T, path, data string) {
	t.Helper()
	tmp := path + ".tmp~"
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func config(limits ...int) string {
	var b strings.Builder
	b.WriteString("policies:\n")
	for i, l := range limits {
		fmt.Fprintf(&b, "  - {name: p%d, limit: %d, window: 1h, algorithm: fixed_window}\n", i, l)
	}
	return b.String()
}

type event struct {
	cfg *policy.Config
	err error
}

// setup writes the first config, builds a middleware from it and a
// Watcher feeding it, and returns them with the channel of reload events.
// loaded writes data to a file of its own and loads it, as a program
// starting does before it makes its Watcher.
func loaded(t *testing.T, data string) (string, *policy.Config) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ratekeeper.yaml")
	writeAtomic(t, path, data)
	cfg, err := policy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, cfg
}

func setup(t *testing.T, first string, opts ...reload.Option) (string, *middleware.Middleware, *reload.Watcher, chan event) {
	t.Helper()
	path, cfg := loaded(t, first)
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(algotest.NewClock(time.Unix(1_700_000_000, 0))))
	if err != nil {
		t.Fatal(err)
	}
	m, err := middleware.FromConfig(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan event, 100)
	opts = append([]reload.Option{reload.WithLogger(quiet), reload.WithDebounce(20 * time.Millisecond),
		reload.OnReload(func(cfg *policy.Config, err error) { events <- event{cfg, err} })}, opts...)
	w, err := reload.New(path, m.ApplyConfig, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return path, m, w, events
}

func next(t *testing.T, events chan event) event {
	t.Helper()
	g := hangguard.New(wait)
	defer g.Stop()
	for {
		select {
		case e := <-events:
			return e
		case <-g.C:
			if g.Expired() {
				t.Fatalf("no reload within %v", wait)
			}
		}
	}
}

func limits(m *middleware.Middleware) string {
	var s []string
	for _, p := range m.Set().Policies() {
		s = append(s, p.Name()+"="+strconv.FormatInt(p.Spec().Limit, 10))
	}
	return strings.Join(s, " ")
}

func TestWatchFile(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path, m, w, events := setup(t, config(5))

	writeAtomic(t, path, config(7, 3)) // rename over the file
	if e := next(t, events); e.err != nil || len(e.cfg.Policies) != 2 {
		t.Fatalf("reload after rename: %+v", e)
	}
	if got, want := limits(m), "p0=7 p1=3"; got != want {
		t.Errorf("after rename: %s, want %s", got, want)
	}

	writeAtomic(t, path, "policies:\n  - {name: p0, limit: -1, window: 1h}\n")
	e := next(t, events)
	var ce *policy.ConfigError
	if e.err == nil || !errors.As(e.err, &ce) || ce.Field == "" {
		t.Fatalf("broken file: %+v, want a ConfigError naming the field", e)
	}
	if got, want := limits(m), "p0=7 p1=3"; got != want {
		t.Errorf("after a broken file: %s, want the previous rules %s", got, want)
	}

	if err := os.WriteFile(path, []byte(config(9)), 0o644); err != nil { // in place
		t.Fatal(err)
	}
	if e := next(t, events); e.err != nil {
		t.Fatalf("reload after an in-place write: %v", e.err)
	}
	if got, want := limits(m), "p0=9"; got != want {
		t.Errorf("after an in-place write: %s, want %s", got, want)
	}
	if got := w.Config(); got == nil || got.Policies[0].Spec().Limit != 9 {
		t.Errorf("Config() = %+v, want the last applied", got)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestDebounce(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path, m, w, events := setup(t, config(1), reload.WithDebounce(time.Second))
	for i := 2; i <= 6; i++ {
		writeAtomic(t, path, config(i))
	}
	e := next(t, events)
	// Five writes well within the debounce: normally one reload, of the
	// last version; a machine stalled for a second could see two.
	for e.err == nil && e.cfg.Policies[0].Spec().Limit != 6 {
		e = next(t, events)
	}
	if e.err != nil {
		t.Fatal(e.err)
	}
	if got := limits(m); got != "p0=6" {
		t.Errorf("after five writes: %s, want p0=6", got)
	}
	w.Close()
	if n := len(events); n > 0 {
		t.Errorf("%d more reloads after the last version", n)
	}
}

func TestReloadExplicit(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path := filepath.Join(t.TempDir(), "rk.json")
	os.WriteFile(path, []byte(`{"policies":[{"name":"a","limit":1,"window":"1m"}]}`), 0o644)
	var applied []int64
	var logs bytes.Buffer
	w, err := reload.New(path, func(cfg *policy.Config) error {
		applied = append(applied, cfg.Policies[0].Spec().Limit)
		if cfg.Policies[0].Spec().Limit == 13 {
			return errors.New("unlucky")
		}
		return nil
	}, reload.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))), reload.WithDebounce(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Reload(); err != nil || len(applied) != 0 {
		t.Errorf("Reload of the content seen at New: %v, applied %v; want nil and nothing applied", err, applied)
	}
	os.WriteFile(path, []byte(`{"policies":[{"name":"a","limit":2,"window":"1m"}]}`), 0o644)
	if err := w.Reload(); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, []byte(`{"policies":[`), 0o644)
	logs.Reset()
	if err := w.Reload(); err == nil {
		t.Error("Reload of broken JSON = nil")
	}
	var rec struct{ Level, Msg, File, Error string }
	if err := json.Unmarshal(logs.Bytes(), &rec); err != nil || rec.Level != "ERROR" ||
		!strings.Contains(rec.Msg, "previous rules keep running") || rec.File != path || rec.Error == "" {
		t.Errorf("log of a broken file: %q (%v)", logs.String(), err)
	}
	os.WriteFile(path, []byte(`{"policies":[{"name":"a","limit":13,"window":"1m"}]}`), 0o644)
	if err := w.Reload(); err == nil || !strings.Contains(err.Error(), "unlucky") || !strings.HasPrefix(err.Error(), "reload: ") {
		t.Errorf("Reload with a failing apply = %v", err)
	}
	os.Remove(path)
	if err := w.Reload(); err == nil {
		t.Error("Reload of a missing file = nil")
	}
	if fmt.Sprint(applied) != "[2 13]" {
		t.Errorf("applied %v, want [2 13]", applied)
	}
	if _, err := reload.New(filepath.Join(t.TempDir(), "no", "dir.yaml"), func(*policy.Config) error { return nil }); err == nil {
		t.Error("New in a missing directory = nil error")
	}
	if _, err := reload.New(path, nil); err == nil {
		t.Error("New(nil apply) = nil error")
	}
}

// TestReloadUnderTraffic reloads in a loop while requests are in flight
// (run with -race): every response carries the headers of one version,
// and the policy common to all versions keeps its counters throughout.
func TestReloadUnderTraffic(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	const keep = "  - {name: keep, limit: 1000000, window: 1h, algorithm: fixed_window}\n"
	versions := []string{
		"policies:\n" + keep + "  - {name: a, limit: 1000000, window: 1m}\n",
		"policies:\n" + keep,
		"policies:\n" + keep + "  - {name: b, limit: 999999, window: 1h}\n  - {name: c, limit: 999998, window: 1h}\n",
	}
	path, m, w, _ := setup(t, versions[0], reload.WithDebounce(time.Hour))
	valid := map[string]bool{
		`"keep";q=1000000;w=3600, "a";q=1000000;w=60`:                       true,
		`"keep";q=1000000;w=3600`:                                           true,
		`"keep";q=1000000;w=3600, "b";q=999999;w=3600, "c";q=999998;w=3600`: true,
	}
	h := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	// The workers serve until the reloads are over (at least minRequests
	// each), so that every reload happens under traffic.
	const workers, minRequests = 4, 50
	var wg sync.WaitGroup
	var bad, served atomic.Int64
	var stop atomic.Bool
	started := make(chan struct{}, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < minRequests || !stop.Load(); i++ {
				rw := httptest.NewRecorder()
				h.ServeHTTP(rw, httptest.NewRequest("GET", "/", nil))
				served.Add(1)
				if !valid[rw.Header().Get("RateLimit-Policy")] || rw.Code != 200 {
					bad.Add(1)
				}
				if i == 0 {
					started <- struct{}{}
				}
			}
		}()
	}
	for range workers {
		<-started
	}
	for i := range 60 {
		writeAtomic(t, path, versions[i%len(versions)])
		if err := w.Reload(); err != nil {
			t.Fatal(err)
		}
		if i == 30 {
			writeAtomic(t, path, "policies: [")
			if err := w.Reload(); err == nil {
				t.Fatal("broken file accepted")
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	if n := bad.Load(); n > 0 {
		t.Errorf("%d responses carried no single version's headers", n)
	}
	rw := httptest.NewRecorder()
	h.ServeHTTP(rw, httptest.NewRequest("GET", "/", nil))
	want := fmt.Sprintf(`"keep";r=%d;`, 1_000_000-served.Load()-1)
	if got := rw.Header().Get("RateLimit"); !strings.HasPrefix(got, want) {
		t.Errorf("RateLimit %q, want it to start %q: keep's counter survived every reload", got, want)
	}
}

// TestConfigMapSwap updates the file as a Kubernetes ConfigMap volume
// does: the file is a link through "..data", which is replaced by a rename
// to point at a new directory; the file itself sees no event.
func TestConfigMapSwap(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	dir := t.TempDir()
	got, events := watchLimit(t, configMap(t, dir, "ratekeeper.yaml", config(5)))
	configMapUpdate(t, dir, "..v2", "ratekeeper.yaml", config(8))
	if e := next(t, events); e.err != nil {
		t.Fatal(e.err)
	}
	if got.Load() != 8 {
		t.Errorf("after the ConfigMap swap: limit %d, want 8", got.Load())
	}
}

// TestReloadRecoveryReported: after a broken or removed file, putting back
// the content in force is a reload too: the hook hears that the error is
// over (with the Config in force) and the log says so, instead of the
// rejection staying the last word.
func TestReloadRecoveryReported(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path, m, w, events := setup(t, config(5), reload.WithDebounce(time.Hour))
	writeAtomic(t, path, config(6))
	if err := w.Reload(); err != nil {
		t.Fatal(err)
	}
	<-events
	for _, breakIt := range []func(){
		func() { writeAtomic(t, path, "policies: [") },
		func() { os.Remove(path) },
	} {
		breakIt()
		if err := w.Reload(); err == nil {
			t.Fatal("Reload of a broken or missing file = nil")
		}
		if e := <-events; e.err == nil {
			t.Fatalf("hook after a broken file: %+v", e)
		}
		writeAtomic(t, path, config(6)) // back to the content in force
		if err := w.Reload(); err != nil {
			t.Fatal(err)
		}
		select {
		case e := <-events:
			if e.err != nil || e.cfg == nil || e.cfg.Policies[0].Spec().Limit != 6 {
				t.Errorf("hook after the file was restored: %+v, want the Config in force", e)
			}
		default:
			t.Error("restoring the file was not reported: the last word is still the error")
		}
		if got := limits(m); got != "p0=6" {
			t.Errorf("limits %s, want p0=6", got)
		}
	}
	// An unchanged file after a success reports nothing.
	if err := w.Reload(); err != nil || len(events) != 0 {
		t.Errorf("Reload of unchanged content: %v, %d events", err, len(events))
	}
}

// TestSymlinkToAnotherDirectory: the configured path is a link to a file
// kept elsewhere (/etc/ratekeeper.yaml -> /srv/conf/ratekeeper.yaml); an
// editor saving the real file by renaming a new one over it changes
// nothing in the link's directory, and must still be seen.
func TestSymlinkToAnotherDirectory(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	real := filepath.Join(t.TempDir(), "real.yaml")
	writeAtomic(t, real, config(5))
	path := filepath.Join(t.TempDir(), "ratekeeper.yaml")
	if err := os.Symlink(real, path); err != nil {
		t.Fatal(err)
	}
	got, events := watchLimit(t, path)
	writeAtomic(t, real, config(8))
	expectLimit(t, events, got, 8, "saving the link's target")
	// The link is pointed at a file in a third directory: seen (the
	// link's directory changes), and so are later edits of the new target.
	other := filepath.Join(t.TempDir(), "other.yaml")
	writeAtomic(t, other, config(11))
	relink(t, other, path)
	expectLimit(t, events, got, 11, "re-pointing the link")
	writeAtomic(t, other, config(12))
	expectLimit(t, events, got, 12, "saving the new target")
	// A link to a file beside it (ratekeeper.yaml -> ratekeeper.prod.yaml).
	sibling := filepath.Join(filepath.Dir(path), "ratekeeper.prod.yaml")
	writeAtomic(t, sibling, config(13))
	relink(t, filepath.Base(sibling), path)
	expectLimit(t, events, got, 13, "pointing the link beside it")
	writeAtomic(t, sibling, config(14))
	expectLimit(t, events, got, 14, "saving the sibling target")
}

// TestEventOverflow: while a reload is slow, a flood of events in the
// directory overflows the kernel's event queue, and the save that follows
// is lost with it; fsnotify reports the overflow as an error. The Watcher
// must then read the file anyway, or the new version waits for a change
// that may never come.
func TestEventOverflow(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	max, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Skipf("no inotify queue limit to overflow here: %v", err)
	}
	queue, err := strconv.Atoi(strings.TrimSpace(string(max)))
	if err != nil || queue > 1<<17 {
		t.Skipf("inotify queue of %q events: too long to overflow in a test", max)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "ratekeeper.yaml")
	writeAtomic(t, path, config(5))
	entered, release := make(chan struct{}), make(chan struct{})
	var got atomic.Int64
	var once sync.Once
	events := make(chan event, 10)
	w, err := reload.New(path, func(cfg *policy.Config) error {
		once.Do(func() {
			close(entered)
			<-release // a slow apply: the Watcher reads no events meanwhile
		})
		got.Store(cfg.Policies[0].Spec().Limit)
		return nil
	}, reload.WithLogger(quiet), reload.WithDebounce(20*time.Millisecond),
		reload.OnReload(func(cfg *policy.Config, err error) { events <- event{cfg, err} }))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	writeAtomic(t, path, config(6))
	await(t, entered, "no reload")
	junk := filepath.Join(dir, "junk")
	for range queue {
		if err := os.WriteFile(junk, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		os.Remove(junk)
	}
	writeAtomic(t, path, config(7)) // its events find the queue full
	close(release)
	for e := next(t, events); e.err != nil || e.cfg.Policies[0].Spec().Limit != 7; e = next(t, events) {
		// the reload of version 6, then the one the overflow calls for
	}
	if got.Load() != 7 {
		t.Errorf("after an event overflow: limit %d, want 7 (the file saved during the overflow)", got.Load())
	}
}

// TestRestartNeededIsApplied: an apply that put the policies in force but
// not another setting (middleware.ApplyConfig's ErrRestartNeeded) leaves
// the new Config in force, reports it with the error to the hook, and logs
// a warning, not "apply failed".
func TestRestartNeededIsApplied(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path, cfg := loaded(t, "policies:\n  - {name: a, limit: 5, window: 1m}\n")
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
	var got []event
	w, err := reload.New(path, m.ApplyConfig, reload.WithDebounce(time.Hour),
		reload.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))),
		reload.OnReload(func(c *policy.Config, err error) { got = append(got, event{c, err}) }))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := os.WriteFile(path, []byte("headers: legacy\npolicies:\n  - {name: a, limit: 2, window: 1m}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = w.Reload()
	if !errors.Is(err, policy.ErrRestartNeeded) || !errors.Is(err, middleware.ErrRestartNeeded) {
		t.Fatalf("Reload = %v, want ErrRestartNeeded", err)
	}
	if c := w.Config(); c == nil || c.Policies[0].Spec().Limit != 2 {
		t.Errorf("Config() = %v, want the new config (limit 2) in force", c)
	}
	if len(got) != 1 || got[0].cfg == nil || !errors.Is(got[0].err, policy.ErrRestartNeeded) {
		t.Errorf("hook got %+v, want the new Config with ErrRestartNeeded", got)
	}
	var rec struct{ Level, Msg string }
	if err := json.Unmarshal(logs.Bytes(), &rec); err != nil || rec.Level != "WARN" || !strings.Contains(rec.Msg, "restart") {
		t.Errorf("log = %q (%v), want one warning naming the restart", logs.String(), err)
	}
	// The new limit is enforced: the third request in the minute is denied.
	h := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	var codes []int
	for range 3 {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/", nil)
		h.ServeHTTP(rec, r)
		codes = append(codes, rec.Code)
	}
	if fmt.Sprint(codes) != "[200 200 429]" {
		t.Errorf("statuses %v, want [200 200 429] (limit 2 in force)", codes)
	}
}

// TestInForceCatchesEditBeforeNew: a file edited between policy.Load and
// New raises no event once the Watcher exists; with InForce, New finds the
// file no longer holds the Config in force and applies it at once. Without
// InForce the edit waits for the next change (the documented default).
func TestInForceCatchesEditBeforeNew(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	for _, inForce := range []bool{true, false} {
		path, cfg := loaded(t, config(5))
		if err := os.WriteFile(path, []byte(config(2)), 0o644); err != nil { // the edit in between
			t.Fatal(err)
		}
		var applied []int64
		opts := []reload.Option{reload.WithLogger(quiet), reload.WithDebounce(time.Hour)}
		if inForce {
			opts = append(opts, reload.InForce(cfg))
		}
		w, err := reload.New(path, func(c *policy.Config) error {
			applied = append(applied, c.Policies[0].Spec().Limit)
			return nil
		}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		want := "[2]"
		if !inForce {
			want = "[]"
		}
		if fmt.Sprint(applied) != want {
			t.Errorf("InForce %v: applied %v at New, want %s", inForce, applied, want)
		}
		if inForce && (w.Config() == nil || w.Config().Policies[0].Spec().Limit != 2) {
			t.Errorf("InForce: Config() = %v, want the edited file's", w.Config())
		}
	}
	// Unchanged since Load: nothing is applied, and Config() is the one in force.
	path, cfg := loaded(t, config(5))
	calls := 0
	w, err := reload.New(path, func(*policy.Config) error { calls++; return nil }, reload.WithLogger(quiet), reload.InForce(cfg))
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if calls != 0 || w.Config() != cfg {
		t.Errorf("unchanged file: %d applies, Config() = %p; want 0 and %p", calls, w.Config(), cfg)
	}
	if _, err := reload.New(path, func(*policy.Config) error { return nil }, reload.InForce(nil)); err == nil {
		t.Error("InForce(nil) accepted")
	}
}

// TestInForceFileBrokenOrMissingAtNew: with InForce, a file that is broken
// or gone when New starts watching changes nothing: New succeeds, apply is
// not called, the hook and Reload report the error, Config() stays the one
// in force; putting the file back as it was reports the error over, with
// that Config.
func TestInForceFileBrokenOrMissingAtNew(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	for _, c := range []struct {
		name  string
		spoil func(path string) error
	}{
		{"broken", func(path string) error { return os.WriteFile(path, []byte("policies: [\n"), 0o644) }},
		{"missing", os.Remove},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, cfg := loaded(t, config(5))
			if err := c.spoil(path); err != nil {
				t.Fatal(err)
			}
			applies := 0
			var reports []string
			w, err := reload.New(path, func(*policy.Config) error { applies++; return nil },
				reload.WithLogger(quiet), reload.WithDebounce(time.Hour), reload.InForce(cfg),
				reload.OnReload(func(got *policy.Config, err error) {
					reports = append(reports, fmt.Sprintf("in force %v, error %v", got == cfg, err != nil))
				}))
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			defer w.Close()
			if err := w.Reload(); err == nil {
				t.Error("Reload of the spoilt file: no error")
			}
			if err := os.WriteFile(path, []byte(config(5)), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := w.Reload(); err != nil {
				t.Errorf("Reload of the restored file: %v", err)
			}
			// At New, at the Reload of the spoilt file, at the restored one.
			want := "[in force false, error true in force false, error true in force true, error false]"
			if applies != 0 || w.Config() != cfg || fmt.Sprint(reports) != want {
				t.Errorf("%d applies, Config() in force %v, reports %v; want 0, true, %s", applies, w.Config() == cfg, reports, want)
			}
		})
	}
}

// watchLimit returns a Watcher of path whose apply records the first
// policy's limit, and its channel of reload events.
func watchLimit(t *testing.T, path string) (*atomic.Int64, chan event) {
	t.Helper()
	events := make(chan event, 10)
	var got atomic.Int64
	w, err := reload.New(path, func(cfg *policy.Config) error {
		got.Store(cfg.Policies[0].Spec().Limit)
		return nil
	}, reload.WithLogger(quiet), reload.WithDebounce(20*time.Millisecond),
		reload.OnReload(func(cfg *policy.Config, err error) { events <- event{cfg, err} }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return &got, events
}

// relink points the link at link to target, atomically (ln -sfn's way).
func relink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link+".new"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(link+".new", link); err != nil {
		t.Fatal(err)
	}
}

// configMap lays dir out as the kubelet does a ConfigMap volume: the
// version directory ..v1 holding file with data, the link ..data to it, and
// file, a link through ..data. It returns file's path.
func configMap(t *testing.T, dir, file, data string) string {
	t.Helper()
	configMapUpdate(t, dir, "..v1", file, data)
	path := filepath.Join(dir, file)
	if err := os.Symlink(filepath.Join("..data", file), path); err != nil {
		t.Fatal(err)
	}
	return path
}

// configMapUpdate writes data as file in the new version directory name
// and swaps dir's ..data link to it as the kubelet does: a link ..data_tmp
// renamed over ..data. The file's own link sees no event.
func configMapUpdate(t *testing.T, dir, name, file, data string) {
	t.Helper()
	if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name, file), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(name, filepath.Join(dir, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
}

// expectLimit waits for the next reload and fails the test unless it
// applied the limit want without an error; after says what led to it.
func expectLimit(t *testing.T, events chan event, got *atomic.Int64, want int64, after string) {
	t.Helper()
	if e := next(t, events); e.err != nil || got.Load() != want {
		t.Fatalf("after %s: %v, limit %d, want %d", after, e.err, got.Load(), want)
	}
}

// TestSymlinkChain: the config file links to a link in another directory
// (update-alternatives' way); re-pointing that middle link is a new file,
// and so is saving the file it now ends at.
func TestSymlinkChain(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	first := filepath.Join(t.TempDir(), "first.yaml")
	writeAtomic(t, first, config(5))
	second := filepath.Join(t.TempDir(), "second.yaml")
	writeAtomic(t, second, config(9))
	mid := filepath.Join(t.TempDir(), "alternative.yaml")
	relink(t, first, mid)
	path := filepath.Join(t.TempDir(), "ratekeeper.yaml")
	relink(t, mid, path)
	got, events := watchLimit(t, path)
	relink(t, second, mid)
	expectLimit(t, events, got, 9, "re-pointing the middle link")
	writeAtomic(t, second, config(10))
	expectLimit(t, events, got, 10, "saving the file the chain ends at")
}

// TestDirectoryLinkRepointed: the file's directory is a link to a release
// (/srv/app/current -> releases/a), re-pointed at the next release on
// deployment; the new release's file is applied, and its later edits.
func TestDirectoryLinkRepointed(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	base := t.TempDir()
	for name, limit := range map[string]int{"a": 5, "b": 9} {
		writeIn(t, filepath.Join(base, "releases", name), "ratekeeper.yaml", limit)
	}
	relink(t, filepath.Join("releases", "a"), filepath.Join(base, "current"))
	got, events := watchLimit(t, filepath.Join(base, "current", "ratekeeper.yaml"))
	relink(t, filepath.Join("releases", "b"), filepath.Join(base, "current"))
	expectLimit(t, events, got, 9, "re-pointing the directory link")
	writeAtomic(t, filepath.Join(base, "releases", "b", "ratekeeper.yaml"), config(10))
	expectLimit(t, events, got, 10, "saving the new release's file")
}

// TestDirectoryRemovedAndMadeAgain: the file's directory is removed (the
// file goes with it: reported) and made again, also two levels deep; the
// file written in it is applied, and its later edits.
func TestDirectoryRemovedAndMadeAgain(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "windows" {
		t.Skipf("on %s the Watcher does not watch the parent directories (kqueue holds a descriptor per file)", runtime.GOOS)
	}
	t.Cleanup(func() { goleak.VerifyNone(t) })
	base := t.TempDir()
	dir := filepath.Join(base, "etc", "ratekeeper")
	path := writeIn(t, dir, "ratekeeper.yaml", 5)
	got, events := watchLimit(t, path)
	for i, remove := range []string{dir, filepath.Join(base, "etc")} {
		if err := os.RemoveAll(remove); err != nil {
			t.Fatal(err)
		}
		if e := next(t, events); !errors.Is(e.err, os.ErrNotExist) {
			t.Fatalf("removing %s: %v, want the file missing", remove, e.err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		limit := 10 * (i + 1)
		writeAtomic(t, path, config(limit))
		e := next(t, events)
		for e.err != nil && errors.Is(e.err, os.ErrNotExist) {
			e = next(t, events) // a late reload of the removal
		}
		if e.err != nil || got.Load() != int64(limit) {
			t.Fatalf("after removing %s and making it again: %v, limit %d, want %d", remove, e.err, got.Load(), limit)
		}
		writeAtomic(t, path, config(limit+1))
		expectLimit(t, events, got, int64(limit+1), "saving the file again")
	}
}
