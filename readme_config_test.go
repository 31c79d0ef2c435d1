package ratekeeper_test

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/readmetest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/middleware/prommetrics"
	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// readmeConfig is the README's "In code" example of its configuration
// section, verbatim but for its last line (TestReadmeConfigCode compares the
// two), which hands the server to serve instead of listening on :8080.
func readmeConfig(store algorithms.Store, mux *http.ServeMux, serve func(*http.Server) error) error {
	// README:begin
	cfg, err := policy.Load("ratekeeper.yaml")
	if err != nil {
		return err // every problem, each with its line, column and field
	}
	metrics, err := prommetrics.New(prometheus.DefaultRegisterer)
	if err != nil {
		return err
	}
	m, err := middleware.FromConfig(store, cfg, middleware.WithObserver(metrics),
		middleware.WithLogger(nil),                              // nil: slog.Default
		middleware.WithPatternFunc(policy.ServeMuxPattern(mux))) // without it, a policy with routes never applies
	if err != nil {
		return err
	}
	ctrl, err := adaptive.New(m, adaptive.Config{}) // p99 > 2x baseline and errors > 1%: 80%
	if err != nil {
		return err
	}
	w, err := reload.New("ratekeeper.yaml", func(cfg *policy.Config) error {
		err := m.ApplyConfig(cfg) // nil, or ErrRestartNeeded: the new rules are in force either way
		if err != nil && !errors.Is(err, middleware.ErrRestartNeeded) {
			return err // refused: the rules in force keep running
		}
		if aerr := ctrl.Apply(); aerr != nil { // the adaptive level kept
			return fmt.Errorf("new rules in force, adaptive level not: %w", aerr) // a failure: w.Reload() retries
		}
		return err // nil, or a warning: headers or failure_mode wait for a restart
	}, reload.InForce(cfg)) // file changes; w.Reload() on SIGHUP
	if err != nil {
		return err
	}
	defer w.Close()
	m.SetFeedback(ctrl) // the middleware feeds it each handled request
	srv := &http.Server{Addr: ":8080", Handler: m.Handler(mux),
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, // a client trickling its request in
		IdleTimeout: 10 * time.Second} // or leaving its connection idle is cut off
	// README:end
	return serve(srv)
}

// TestReadmeConfigCode compiles and runs the README's configuration code as
// a new user would copy it: the README block must be the code above plus its
// srv.ListenAndServe line, and its server (serving here on a test listener)
// bounds a slow or idle client. Over HTTP, the sample file's limits are in the
// headers, its route-restricted login policy applies (the pattern function
// at work), and the metrics reach the default registerer. (Hot reload
// itself is tested in policy/reload, on an injected clock.)
func TestReadmeConfigCode(t *testing.T) {
	readme := readmeGoBlock(t, "In code (what `examples/config` does)")
	tested := markedCode(t, "readme_config_test.go")
	want := append(slices.Clone(tested), `return srv.ListenAndServe()`)
	if !slices.Equal(readme, want) {
		t.Fatalf("the README's configuration code is not the code tested here:\nREADME:\n%s\ntested:\n%s",
			strings.Join(readme, "\n"), strings.Join(want, "\n"))
	}

	sample, err := os.ReadFile("examples/config/ratekeeper.yaml")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	if err := os.WriteFile("ratekeeper.yaml", sample, 0o644); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	defer func(r prometheus.Registerer) { prometheus.DefaultRegisterer = r }(prometheus.DefaultRegisterer)
	prometheus.DefaultRegisterer = reg

	_, store := clockedStore(t)
	mux := http.NewServeMux()
	mux.Handle("/", hello)
	mux.Handle("POST /login", hello)
	get := func(method, path string, h http.Header, srv *httptest.Server) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range h {
			req.Header[k] = v
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	err = readmeConfig(store, mux, func(hs *http.Server) error {
		if hs.ReadHeaderTimeout <= 0 || hs.ReadTimeout <= 0 || hs.IdleTimeout < 0 {
			t.Errorf("the README's server: ReadHeaderTimeout %v, ReadTimeout %v, IdleTimeout %v; want a slow or idle client cut off",
				hs.ReadHeaderTimeout, hs.ReadTimeout, hs.IdleTimeout)
		}
		srv := httptest.NewUnstartedServer(nil)
		srv.Config = hs // the README's server, on the test's listener
		srv.Start()
		defer srv.Close()
		resp := get("GET", "/", nil, srv)
		if got, want := strings.Join(resp.Header.Values("RateLimit-Policy"), ", "),
			`"per-second";q=20;w=1, "per-minute";q=300;w=60`; resp.StatusCode != 200 || got != want {
			t.Errorf("GET /: %d, RateLimit-Policy %q; want 200, %q", resp.StatusCode, got, want)
		}
		ann := http.Header{"X-Login-User": {"ann"}}
		for i := 1; i <= 6; i++ {
			resp := get("POST", "/login", ann, srv)
			if want := map[bool]int{true: 429, false: 200}[i == 6]; resp.StatusCode != want {
				t.Errorf("login %d: status %d, want %d", i, resp.StatusCode, want)
			}
		}
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		registered := false
		for _, f := range families {
			registered = registered || f.GetName() == "ratekeeper_requests_total"
		}
		if !registered {
			t.Errorf("ratekeeper_requests_total is not in prometheus.DefaultRegisterer")
		}

		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// readmeGoBlock returns the lines of the first Go code block after the
// README.md paragraph that starts with intro, indentation removed.
func readmeGoBlock(t *testing.T, intro string) []string {
	t.Helper()
	block := readmeBlockAfter(t, intro, "go")
	return trimLines(strings.Split(strings.TrimSuffix(block, "\n"), "\n"))
}

// markedCode returns the lines of file between its "// README:begin" and
// "// README:end" markers, indentation removed.
func markedCode(t *testing.T, file string) []string {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, code, ok := strings.Cut(string(src), "// README:begin\n")
	if !ok {
		t.Fatalf("%s has no README:begin marker", file)
	}
	code, _, _ = strings.Cut(code, "\t// README:end")
	return trimLines(strings.Split(strings.TrimSuffix(code, "\n"), "\n"))
}

func trimLines(lines []string) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, strings.TrimLeft(l, "\t "))
	}
	return out
}

// readmeBlockAfter returns the first code block of kind ("yaml", or "" for
// a plain block) after the README.md paragraph that starts with intro,
// lines as written.
func readmeBlockAfter(t *testing.T, intro, kind string) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	return readmetest.BlockAfter(t, string(b), intro, kind)
}

// TestReadmeConfigFiles loads the README's configuration files as a new
// user would copy them: the annotated schema and the five-line file are
// valid, the five-line file has the defaults the README names, and the
// broken file gives exactly the problems the README shows `check`
// printing.
func TestReadmeConfigFiles(t *testing.T) {
	schema := readmeBlockAfter(t, "The schema (YAML, or JSON", "yaml")
	if _, err := policy.ParseConfig([]byte(schema), "ratekeeper.yaml"); err != nil {
		t.Errorf("the README's schema is not a valid file: %v", err)
	}

	short := readmeBlockAfter(t, "A five-line file is enough", "yaml")
	if n := strings.Count(short, "\n"); n != 5 {
		t.Errorf("the README's five-line file has %d lines", n)
	}
	cfg, err := policy.ParseConfig([]byte(short), "ratekeeper.yaml")
	if err != nil {
		t.Fatalf("the README's five-line file is not valid: %v", err)
	}
	for _, d := range cfg.Definitions {
		if d.Spec.Algorithm != algorithms.SlidingWindow || d.KeyString() != "ip" {
			t.Errorf("policy %s: %s keyed by %s, want sliding_window keyed by ip", d.Name, d.Spec.Algorithm, d.KeyString())
		}
	}
	if cfg.Headers != policy.HeadersIETF || cfg.FailureMode != policy.FailureOpen {
		t.Errorf("five-line file: headers %q, failure mode %q; want ietf, open", cfg.Headers, cfg.FailureMode)
	}

	broken := readmeBlockAfter(t, "Every problem is reported", "yaml")
	printed := readmeBlockAfter(t, "`go run ./cmd/ratekeeper check ratekeeper.yaml` prints", "")
	_, err = policy.ParseConfig([]byte(broken), "ratekeeper.yaml")
	var got []string
	for _, ce := range policy.ConfigErrors(err) {
		got = append(got, strings.TrimPrefix(ce.Error(), "policy: ")) // as check prints it
	}
	want := strings.Split(strings.TrimSuffix(printed, "\n"), "\n")
	problems := strconv.Itoa(len(got)) + " problems"
	if len(got) == 1 {
		problems = "1 problem"
	}
	if n := len(want) - 1; n < 0 || want[n] != "ratekeeper.yaml: "+problems || !slices.Equal(got, want[:n]) {
		t.Errorf("the README's broken file gives\n%s\nand %s; the README shows\n%s", strings.Join(got, "\n"), problems, printed)
	}
}

// TestReadmeSchemaIPSource: the README's schema says what its ip_source
// needs, as the loader has it. Copied without the schema's trusted_proxies
// and trusted_hops (a server reached directly), the file is refused at
// ip_source, which needs one of them: the README's comment on ip_source
// once named a need for its header: form only, so that a user who kept
// ip_source: x-forwarded-for, the default, met an error the README did not
// announce.
func TestReadmeSchemaIPSource(t *testing.T) {
	schema := readmeBlockAfter(t, "The schema (YAML, or JSON", "yaml")
	var kept []string
	var comment []string // the ip_source line's comment, continuation lines included
	inSource := false
	for _, l := range strings.Split(schema, "\n") {
		field, _, _ := strings.Cut(l, ":")
		switch {
		case field == "ip_source":
			inSource = true
			_, c, _ := strings.Cut(l, "#")
			comment = append(comment, strings.TrimSpace(c))
		case inSource && strings.HasPrefix(strings.TrimSpace(l), "#"):
			comment = append(comment, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "#")))
		default:
			inSource = false
		}
		if field == "trusted_proxies" || field == "trusted_hops" {
			continue // their comments' continuation lines stay: comments alone
		}
		kept = append(kept, l)
	}
	if len(comment) == 0 {
		t.Fatalf("the README's schema has no ip_source line:\n%s", schema)
	}
	doc := strings.Join(kept, "\n")
	_, err := policy.ParseConfig([]byte(doc), "ratekeeper.yaml")
	errs := policy.ConfigErrors(err)
	if len(errs) != 1 || errs[0].Field != "ip_source" || !strings.HasPrefix(errs[0].Reason, "needs trusted_proxies or trusted_hops") {
		t.Fatalf("the README's schema without trusted_proxies and trusted_hops gives %v; want one error at ip_source: needs trusted_proxies or trusted_hops\n%s", err, doc)
	}
	said := strings.Join(comment, " ")
	if !strings.Contains(said, "needs trusted_proxies or trusted_hops") {
		t.Errorf("the README's schema says of ip_source %q; the loader refuses it without trusted_proxies or trusted_hops (%s): say so", said, errs[0].Reason)
	}
	if !strings.Contains(said, "header: trusted_proxies only") {
		t.Errorf("the README's schema says of ip_source %q; want it to say that header:NAME takes trusted_proxies only, as the loader has it", said)
	}
}

// readmeReloadApply is the function the README's configuration code gives
// reload.New (TestReadmeReloadApplyErrors compares the two), with the
// middleware and the controller it closes over as arguments.
func readmeReloadApply(m *middleware.Middleware, ctrl *adaptive.Controller) func(*policy.Config) error {
	return func(cfg *policy.Config) error {
		// README apply:begin
		err := m.ApplyConfig(cfg) // nil, or ErrRestartNeeded: the new rules are in force either way
		if err != nil && !errors.Is(err, middleware.ErrRestartNeeded) {
			return err // refused: the rules in force keep running
		}
		if aerr := ctrl.Apply(); aerr != nil { // the adaptive level kept
			return fmt.Errorf("new rules in force, adaptive level not: %w", aerr) // a failure: w.Reload() retries
		}
		return err // nil, or a warning: headers or failure_mode wait for a restart
		// README apply:end
	}
}

// refusingLimits is a middleware as an adaptive controller's target whose
// SetLimit fails: a Controller.Apply that fails.
type refusingLimits struct{ *middleware.Middleware }

func (refusingLimits) SetLimit(name string, limit int64) error {
	return errors.New("SetLimit refused by the test")
}

// TestReadmeReloadApplyErrors runs the README's reload function under a
// reload.Watcher. A file that changes the headers makes ApplyConfig return
// ErrRestartNeeded (its policies applied): alone, that is a reload applied
// with a warning; beside a Controller.Apply that fails, it must not hide
// the failure, or the watcher counts the reload as applied (Watcher.Config
// returns the new file, the log says "config reloaded") while the adaptive
// level was not set, and w.Reload() never tries again. A file
// ApplyConfig refuses is a failure too.
func TestReadmeReloadApplyErrors(t *testing.T) {
	block := readmeGoBlock(t, "In code (what `examples/config` does)")
	start := slices.IndexFunc(block, func(l string) bool { return strings.HasPrefix(l, "w, err := reload.New(") })
	end := slices.IndexFunc(block, func(l string) bool { return strings.HasPrefix(l, "}, reload.InForce(cfg))") })
	if start < 0 || end < start {
		t.Fatalf("the README's configuration code has no reload.New(..., func(cfg *policy.Config) error {...}, reload.InForce(cfg)):\n%s", strings.Join(block, "\n"))
	}
	src, err := os.ReadFile("readme_config_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, tested, _ := strings.Cut(string(src), "// README apply:begin\n")
	tested, _, _ = strings.Cut(tested, "// README apply:end")
	if want := trimLines(strings.Split(strings.TrimRight(tested, "\t\n"), "\n")); !slices.Equal(block[start+1:end], want) {
		t.Fatalf("the README's reload function is not the one tested here:\nREADME:\n%s\ntested:\n%s",
			strings.Join(block[start+1:end], "\n"), strings.Join(want, "\n"))
	}

	const base = "policies:\n  - {name: per-ip, limit: 100, window: 1m}\n"
	for _, tc := range []struct {
		name        string
		file        string // the new version
		ctrlFails   bool
		applied     bool // the Watcher counts it applied
		restartOnly bool // its error matches ErrRestartNeeded
	}{
		{name: "restart needed", file: "headers: draft-7\n" + base, applied: true, restartOnly: true},
		{name: "restart needed, controller fails", file: "headers: draft-7\n" + base, ctrlFails: true},
		{name: "controller fails", file: strings.Replace(base, "100", "50", 1), ctrlFails: true},
		{name: "refused", file: strings.Replace(base, "}", ", count: failed}", 1)}, // CountIf over a store that cannot give back
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := t.TempDir() + "/ratekeeper.yaml"
			if err := os.WriteFile(path, []byte(base), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := policy.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			_, mem := clockedStore(t)
			store := struct{ algorithms.Store }{mem} // Take alone: no GiveBacker
			m, err := middleware.FromConfig(store, cfg, middleware.WithLogger(slog.New(slog.DiscardHandler)))
			if err != nil {
				t.Fatal(err)
			}
			var target adaptive.Target = m
			if tc.ctrlFails {
				target = refusingLimits{m}
			}
			ctrl, err := adaptive.New(target, adaptive.Config{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			var hooked *policy.Config
			w, err := reload.New(path, readmeReloadApply(m, ctrl), reload.InForce(cfg),
				reload.WithLogger(slog.New(slog.DiscardHandler)),
				reload.OnReload(func(c *policy.Config, _ error) { hooked = c }))
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			err = w.Reload()
			if got := errors.Is(err, policy.ErrRestartNeeded); got != tc.restartOnly || (err == nil) != (tc.applied && !tc.restartOnly) {
				t.Errorf("Reload() = %v; matches ErrRestartNeeded: %v, want %v", err, got, tc.restartOnly)
			}
			if tc.ctrlFails && (err == nil || !strings.Contains(err.Error(), "new rules in force, adaptive level not: ")) {
				t.Errorf("Reload() = %v; want an error saying the new rules are in force and the adaptive level is not", err)
			}
			if got := w.Config() != cfg; got != tc.applied {
				t.Errorf("the Watcher counts the new file applied: %v, want %v (Reload() = %v)", got, tc.applied, err)
			}
			if got := hooked != nil; got != tc.applied {
				t.Errorf("OnReload got the new Config: %v, want %v (Reload() = %v)", got, tc.applied, err)
			}
		})
	}
}

// TestReadmeRestartSettingsWarning: the README's Reload bullet says who
// warns of a headers, failure_mode or failure_retry_after change. It said
// "ApplyConfig applies the policies and logs a warning naming them", but
// ApplyConfig logs no warning (on the middleware's logger or slog.Default):
// it returns an error matching ErrRestartNeeded that names them, and the
// reload Watcher logs that error as a warning; an application calling
// ApplyConfig itself is told by that error alone.
func TestReadmeRestartSettingsWarning(t *testing.T) {
	logged := captureDefaultLog(t)
	cfg, err := policy.ParseConfig([]byte("policies:\n  - {name: a, limit: 5, window: 1m}\n"), "ratekeeper.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, store := clockedStore(t)
	m, err := middleware.FromConfig(store, cfg, middleware.WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	next, err := policy.ParseConfig([]byte("headers: draft-7\npolicies:\n  - {name: a, limit: 3, window: 1m}\n"), "ratekeeper.yaml")
	if err != nil {
		t.Fatal(err)
	}
	err = m.ApplyConfig(next)
	if !errors.Is(err, middleware.ErrRestartNeeded) || !strings.Contains(err.Error(), "headers") {
		t.Fatalf("ApplyConfig of a file changing headers = %v; want ErrRestartNeeded naming headers", err)
	}
	if log := logged(); strings.Contains(log, "WARN") || strings.Contains(log, "restart") {
		t.Fatalf("ApplyConfig logged a warning of its own:\n%s", log)
	}

	_, bullet, _ := strings.Cut(readmeText(t), "\n- **Reload** (`policy/reload`)")
	bullet, _, _ = strings.Cut(bullet, "\n- **")
	bullet = strings.Join(strings.Fields(bullet), " ")
	if strings.Contains(bullet, "`ApplyConfig` applies the policies and logs a warning") {
		t.Errorf("the README's Reload bullet says ApplyConfig logs a warning; it returns an error matching ErrRestartNeeded, which the watcher logs:\n%s", bullet)
	}
	if !strings.Contains(bullet, "`middleware.ErrRestartNeeded`") {
		t.Errorf("the README's Reload bullet does not name middleware.ErrRestartNeeded, the error ApplyConfig returns for those settings:\n%s", bullet)
	}
}

// TestReadmeConfigCodeServesMetrics: the README's configuration code
// registers its metrics with prometheus.DefaultRegisterer and serves only
// the limited mux, so a user who copies it has metrics and no page for
// them (the shell block before it curls /metrics of examples/config). The
// text around the code says how to serve them: promhttp.Handler(), outside
// the limiter, as examples/config serves /metrics.
func TestReadmeConfigCodeServesMetrics(t *testing.T) {
	_, after, _ := strings.Cut(readmeText(t), "\nIn code (what `examples/config` does)")
	_, after, _ = strings.Cut(after, "\n```\n") // past the code block
	para, _, _ := strings.Cut(after, "\n- **Reload**")
	para = strings.Join(strings.Fields(para), " ")
	if !strings.Contains(para, "promhttp.Handler()") || !strings.Contains(para, "/metrics") {
		t.Errorf("the README does not say, after its configuration code, how to serve the metrics it registers (promhttp.Handler(), /metrics):\n%s", para)
	}
}
