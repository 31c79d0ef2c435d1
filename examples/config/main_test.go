package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// wait bounds the wait for a file event; a passing test does not wait for
// it.
const wait = 20 * time.Second

// await returns what c gives, failing the test with "<fail> within <wait>"
// if it gives nothing within wait, counted in the time the test process
// runs (see hangguard): a guard against a hang, not a wait that makes a
// test pass.
func await[T any](t *testing.T, c <-chan T, fail string) T {
	t.Helper()
	return hangguard.Await(t, c, wait, fail)
}

type reloaded struct {
	cfg *policy.Config
	err error
}

// A served is the example serving a copy (path) of the annotated sample
// config (sample) over real HTTP (srv), on a memory store, logging JSON
// to logs; each reload's outcome goes to events.
type served struct {
	sample []byte
	path   string
	srv    *httptest.Server
	events chan reloaded
	logs   *syncBuffer
}

// serveSample starts a served, its store and adaptive controller on
// clock (nil: the system's), its server reloading the file 20ms after a
// change; all is closed when t ends.
func serveSample(t *testing.T, clock algorithms.Clock) *served {
	t.Helper()
	sample, err := os.ReadFile("ratekeeper.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w := &served{sample: sample, path: filepath.Join(t.TempDir(), "ratekeeper.yaml"), events: make(chan reloaded, 10), logs: new(syncBuffer)}
	save(t, w.path, sample)
	var opts []algorithms.MemoryOption
	if clock != nil {
		opts = append(opts, algorithms.WithClock(clock))
	}
	store, err := algorithms.NewMemoryStore(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	s, err := newServer(w.path, serverOptions{
		store: store, reg: prometheus.NewRegistry(), clock: clock,
		log: slog.New(slog.NewJSONHandler(w.logs, nil)),
		reload: []reload.Option{reload.WithDebounce(20 * time.Millisecond),
			reload.OnReload(func(cfg *policy.Config, err error) { w.events <- reloaded{cfg, err} })},
	})
	if err != nil {
		t.Fatal(err)
	}
	w.srv = httptest.NewServer(s)
	t.Cleanup(func() { w.srv.Close(); s.Close() })
	return w
}

// TestServeConfig runs the example on a copy of the annotated sample
// config, over real HTTP: the file's limits are served; an edit of the file
// changes them without a restart; a broken file keeps them and is reported
// with its line, column and field; /metrics shows the decisions.
func TestServeConfig(t *testing.T) {
	w := serveSample(t, algotest.NewClock(time.Unix(1_700_000_040, 0)))
	sample, path, srv, events, logs := w.sample, w.path, w.srv, w.events, w.logs

	get := func(path string) *http.Response {
		t.Helper()
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	next := func() reloaded {
		t.Helper()
		return await(t, events, "the file changed; no reload")
	}

	// The sample's limits.
	resp := get("/")
	if got, want := resp.Header.Get("RateLimit-Policy"), `"per-second";q=20;w=1, "per-minute";q=300;w=60`; resp.StatusCode != 200 || got != want {
		t.Fatalf("GET /: %d %q, want 200 %q", resp.StatusCode, got, want)
	}
	req, _ := http.NewRequest("POST", srv.URL+"/login", nil)
	req.Header.Set("X-Login-User", "ann")
	lresp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	lresp.Body.Close()
	if got := lresp.Header.Get("RateLimit-Policy"); !strings.HasSuffix(got, `"login";q=5;w=60`) {
		t.Errorf("POST /login: RateLimit-Policy %q, want the login policy applied", got)
	}

	// Edit the file as an editor saves it (a new file renamed over the
	// old): per-minute down to 3. Two requests were counted already (this
	// one and the login) under the 300, whose counters guard the new Spec
	// for a while, judged at 3 (see middleware.Middleware.SetPolicies):
	// one more is admitted in this minute, not a fresh 3.
	edited := bytes.Replace(sample, []byte("limit: 300"), []byte("limit: 3"), 1)
	save(t, path, edited)
	if e := next(); e.err != nil {
		t.Fatalf("reload of the edited file: %v", e.err)
	}
	if resp := get("/"); resp.StatusCode != 200 || resp.Header.Get("RateLimit-Policy") != `"per-second";q=20;w=1, "per-minute";q=3;w=60` {
		t.Fatalf("request 1 after the edit: %d %q", resp.StatusCode, resp.Header.Get("RateLimit-Policy"))
	}
	if resp := get("/"); resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("2nd request at limit 3, 2 used before the edit: %d Retry-After %q, want 429", resp.StatusCode, resp.Header.Get("Retry-After"))
	}

	// Break it: an unknown field. The previous rules keep running; the
	// error names the file, line, column and field.
	broken := bytes.Replace(edited, []byte("    window: 1m  "), []byte("    windw: 1m   "), 1)
	if bytes.Equal(broken, edited) {
		t.Fatal("the sample changed: no per-minute window to break")
	}
	save(t, path, broken)
	e := next()
	ces := policy.ConfigErrors(e.err)
	if e.err == nil || len(ces) == 0 {
		t.Fatalf("reload of a broken file: %v, want ConfigErrors", e.err)
	}
	found := false
	for _, ce := range ces {
		if ce.File == path && ce.Line > 0 && ce.Column > 0 && ce.Field == "policies[1].windw" && strings.Contains(ce.Reason, "unknown field") {
			found = true
		}
	}
	if !found {
		t.Errorf("errors %v: none is the unknown field policies[1].windw with its position", e.err)
	}
	if resp := get("/"); resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("RateLimit-Policy") != `"per-second";q=20;w=1, "per-minute";q=3;w=60` {
		t.Errorf("after the broken file: %d %q, want the previous rules (limit 3, still used up)", resp.StatusCode, resp.Header.Get("RateLimit-Policy"))
	}
	var rec struct{ Level, Msg, Error string }
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "config rejected") {
			json.Unmarshal([]byte(line), &rec)
		}
	}
	if rec.Level != "ERROR" || !strings.Contains(rec.Error, path+":") || !strings.Contains(rec.Error, "windw") {
		t.Errorf("log of the broken file: %+v, want an ERROR with the file's position and the field", rec)
	}

	// /metrics, not limited itself, shows the decisions.
	mresp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(mresp.Body)
	mresp.Body.Close()
	for _, want := range []string{
		`ratekeeper_requests_total{outcome="denied",policy="per-minute"} 2`,
		`ratekeeper_requests_total{outcome="allowed",policy="per-minute"} 3`,
		`ratekeeper_requests_total{outcome="allowed",policy="login"} 1`,
		`ratekeeper_effective_limit{policy="per-minute"} 3`,
		`ratekeeper_failure_state{state="healthy"} 1`,
		`ratekeeper_decision_seconds_count 5`,
	} {
		if !strings.Contains(string(body), want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if mresp.StatusCode != 200 || mresp.Header.Get("RateLimit-Policy") != "" {
		t.Errorf("/metrics: %d, RateLimit-Policy %q; want 200 and no limit", mresp.StatusCode, mresp.Header.Get("RateLimit-Policy"))
	}
}

// TestAdaptiveSurvivesReload: the service is slow and failing, so the
// adaptive controller holds the limits at 80%; a reload applies that level
// to the new limits at once.
func TestAdaptiveSurvivesReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ratekeeper.yaml")
	save(t, path, []byte("policies:\n  - {name: api, limit: 100, window: 1m}\n"))
	clock := algotest.NewClock(time.Unix(1_700_000_040, 0))
	s := quietServer(t, path, clock)
	// A period to learn the baseline (1ms), then one slow and failing.
	for _, p := range []struct {
		latency time.Duration
		status  int
	}{{time.Millisecond, 200}, {50 * time.Millisecond, 500}} {
		for range 30 {
			s.ctrl.Observe(p.latency, p.status)
		}
		clock.Advance(time.Minute)
		if err := s.ctrl.Evaluate(); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.mw.Set().PolicyHeader(1); got != `"api";q=80;w=60` {
		t.Fatalf("after a slow, failing period: %s, want q=80", got)
	}
	save(t, path, []byte("policies:\n  - {name: api, limit: 200, window: 1m}\n"))
	if err := s.watcher.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := s.mw.Set().PolicyHeader(1); got != `"api";q=160;w=60` {
		t.Errorf("after the reload: %s, want q=160 (80%% of the new 200)", got)
	}
}

// save writes data as editors do: a new file renamed over the old.
func save(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp~"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// sampleFile returns the sample configuration (ratekeeper.yaml) and the
// path of a copy of it in a directory of t's own.
func sampleFile(t *testing.T) ([]byte, string) {
	t.Helper()
	sample, err := os.ReadFile("ratekeeper.yaml")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ratekeeper.yaml")
	save(t, path, sample)
	return sample, path
}

// startRun starts run, serving on a loopback listener of its own with the
// configuration file at path and logger, and returns the listener's
// address, the cancel function that ends run (also called when t ends) and
// the channel run's result arrives on.
func startRun(t *testing.T, path string, logger *slog.Logger) (string, context.CancelFunc, <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ran := make(chan error, 1)
	go func() { ran <- run(ctx, ln, path, logger) }()
	return ln.Addr().String(), cancel, ran
}

// syncBuffer is a bytes.Buffer for a logger written from the watcher's
// goroutine and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestRunShutsDown: run serves until its context is done, then stops
// serving and returns nil, leaving no goroutine behind (the server's, the
// Watcher's, the SIGHUP reader's).
func TestRunShutsDown(t *testing.T) {
	_, path := sampleFile(t)
	addr, cancel, ran := startRun(t, path, slog.New(slog.DiscardHandler))
	url := "http://" + addr
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get(url + "/")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("RateLimit-Policy") == "" {
		t.Fatalf("GET /: %d, RateLimit-Policy %q; want 200 and the file's policies", resp.StatusCode, resp.Header.Get("RateLimit-Policy"))
	}
	cancel()
	if err := await(t, ran, "run did not return after its context was done"); err != nil {
		t.Errorf("run after its context was done: %v, want nil", err)
	}
	if _, err := client.Get(url + "/"); err == nil {
		t.Error("a request after shutdown was served")
	}
	goleak.VerifyNone(t)
}

// TestRunClosesIdleConnections: the server run starts bounds how long a
// connection may sit without a request, as an http.Server with its
// ReadTimeout (or IdleTimeout) set does; with only ReadHeaderTimeout, a
// connection kept alive after its first answer was held open for ever (a
// client opening many holds as many of the server's file descriptors),
// and a body trickled in was read for as long as the client kept sending.
// The wait is the server's own timeout (seconds), bounded by wait.
func TestRunClosesIdleConnections(t *testing.T) {
	_, path := sampleFile(t)
	addr, cancel, ran := startRun(t, path, slog.New(slog.DiscardHandler))
	defer func() { cancel(); await(t, ran, "run did not return after its context was done") }()

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: example\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Close {
		t.Fatalf("GET /: %d, Connection: close %v; want 200 and the connection kept alive", resp.StatusCode, resp.Close)
	}
	// The client now sends nothing. The read deadline is the test's
	// bound on the server's timeout, not a timeout of the example's.
	start := time.Now()
	c.SetReadDeadline(start.Add(wait))
	n, err := br.Read(make([]byte, 1))
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("an idle connection was still open %s after its answer: the server never closes it", wait)
	}
	if err != io.EOF || n != 0 {
		t.Errorf("reading an idle connection: %d bytes, %v; want io.EOF, the server closing it", n, err)
	}
	t.Logf("idle connection closed by the server after %s", time.Since(start).Round(time.Second))
}

// TestWarnsAboutIgnoredForwarding: a file that declares no trusted proxies,
// served behind one (requests carry X-Forwarded-For), keys every client by
// the proxy's address; the example logs that once, as a warning.
func TestWarnsAboutIgnoredForwarding(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ratekeeper.yaml")
	save(t, path, []byte("policies:\n  - name: per-ip\n    limit: 100\n    window: 1m\n"))
	store, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var logs syncBuffer
	s, err := newServer(path, serverOptions{store: store, reg: prometheus.NewRegistry(), clock: algorithms.SystemClock,
		log: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	srv := httptest.NewServer(s)
	defer srv.Close()
	for range 3 {
		req, _ := http.NewRequest("GET", srv.URL+"/", nil)
		req.Header.Set("X-Forwarded-For", "198.51.100.7")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET /: %d", resp.StatusCode)
		}
	}
	if n := strings.Count(logs.String(), `"level":"WARN","msg":"ratekeeper: setup warning","error":"middleware: a request carries a forwarding header`); n != 1 {
		t.Errorf("%d forwarding warnings logged, want 1; logs:\n%s", n, logs.String())
	}
}

// TestAdaptiveFedByRequests: the controller learns from the requests the
// server answers (the middleware feeds it, Middleware.SetFeedback): after
// a period of 20 requests over HTTP it has a baseline latency, the normal
// that a slow period is judged against. Without the feed it learned
// nothing, and no period was ever slow: the limits were never lowered.
func TestAdaptiveFedByRequests(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ratekeeper.yaml")
	save(t, path, []byte("policies:\n  - {name: api, limit: 100, window: 1m}\n"))
	clock := algotest.NewClock(time.Unix(1_700_000_040, 0))
	s := quietServer(t, path, clock)
	srv := httptest.NewServer(s)
	defer srv.Close()
	for i := range 20 { // adaptive.Config's default MinSamples
		resp, err := srv.Client().Get(srv.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET / %d: %d, want 200", i+1, resp.StatusCode)
		}
	}
	clock.Advance(time.Minute)
	if err := s.ctrl.Evaluate(); err != nil {
		t.Fatal(err)
	}
	if got := s.ctrl.Baseline(); got <= 0 {
		t.Errorf("after a period of 20 requests served: the controller's baseline is %v, want one learned from them", got)
	}
}

// editOnFirstRead is a clock that, the first time it is read, runs edit:
// newServer reads its clock once between loading the file and watching it
// (adaptive.New), where an edit is seen by no file event.
type editOnFirstRead struct {
	*algotest.Clock
	once sync.Once
	edit func()
}

func (c *editOnFirstRead) Now() time.Time {
	c.once.Do(c.edit)
	return c.Clock.Now()
}

// TestEditBeforeWatchApplied: a file edited after the server loaded it and
// before its watch began (reload.InForce) is applied as the server starts,
// not at the file's next change, which may never come: the rules in force
// would be the old file's while the file on disk says otherwise.
func TestEditBeforeWatchApplied(t *testing.T) {
	sample, err := os.ReadFile("ratekeeper.yaml")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ratekeeper.yaml")
	save(t, path, sample)
	edited := bytes.Replace(sample, []byte("limit: 300"), []byte("limit: 3"), 1)
	clock := &editOnFirstRead{Clock: algotest.NewClock(time.Unix(1_700_000_040, 0)), edit: func() { save(t, path, edited) }}
	s := quietServer(t, path, clock)
	if got, want := s.mw.Set().PolicyHeader(3), `"per-second";q=20;w=1, "per-minute";q=3;w=60`; got != want {
		t.Errorf("started on a file edited before its watch began: %s, want the edit in force, %s", got, want)
	}
}
