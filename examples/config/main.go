// Command config serves with its limits in a configuration file: the
// policies, header profile, failure mode and trusted proxies of
// ratekeeper.yaml (annotated beside this file), reloaded without a restart
// when the file changes or on SIGHUP, lowered by the adaptive controller
// when the service is slow and failing, and reported on /metrics
// (Prometheus) and in the log (log/slog, JSON).
//
//	cp examples/config/ratekeeper.yaml /tmp/ratekeeper.yaml
//	go build -o /tmp/rk-config ./examples/config
//	/tmp/rk-config -config /tmp/ratekeeper.yaml &
//	sleep 1
//	curl -i http://127.0.0.1:8080/
//	curl -s http://127.0.0.1:8080/metrics | grep ^ratekeeper_
//	kill -HUP $!
//
// Edit the copy (say, per-minute's limit to 3) and the next responses carry
// the new limit; save a broken file and the log says where the error is
// while the previous rules keep running. Edit a copy: the tests read the
// sample. Signal the built binary: under go run, $! is the go command,
// which SIGHUP ends without reaching the server. A SIGHUP sent while the
// server starts (its flags, its listener, the file's first reading) never
// ends it: the file it loads is the one the signal asks for.
//
// A policy's routes must be routes of the server (see Routes below): one it
// lacks, a typo such as "POST /logn", is a rule that would never apply,
// silently (login unlimited). Such a file stops the server at start, the
// log naming the route (middleware.Middleware.CheckRoutes); at a reload it
// is refused as a broken file is (reload.WithCheck with
// middleware.Middleware.CheckConfigRoutes): after the grace a file being
// saved is given, the log says "config rejected" and names the route, and
// the rules in force keep running, unchanged, since applying the rest of
// the file would drop the limit the typo was meant to set. Routes: GET / (hello), POST /login
// (the login policy; user from X-Login-User), GET /search (search-daily;
// Basic auth user name taken on trust), GET /fail (answers 500, to feed
// the adaptive controller), GET /metrics (not limited). SIGINT or SIGTERM
// stops it: the requests in flight are finished, the file's watch closed.
// The handler (app.Hello), the Basic-auth stand-in for sign-in
// (app.SignedIn), the check that no argument follows the flags
// (app.NoArgs), listening (app.Listen) and the http.Server with its
// timeouts (app.NewServer) are helpers of
// examples/internal/app, which another module cannot import: copy them
// with the example.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/examples/internal/app"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/middleware/prommetrics"
	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

func main() {
	// SIGHUP is ignored first thing: one sent before run catches it,
	// while the flags are parsed or the address is listened on, would end
	// the process (Go's default for a signal nobody asked for). The file
	// is read after it anyway. (Before main, while the Go runtime and the
	// packages start, the default action stands: nothing can catch it.)
	signal.Ignore(syscall.SIGHUP)
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	path := flag.String("config", "examples/config/ratekeeper.yaml", "configuration file (YAML or JSON)")
	flag.Parse()
	app.NoArgs("-config /tmp/ratekeeper.yaml")
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	// SIGINT and SIGTERM stop the server gracefully.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := app.Listen(*addr, "-addr")
	if err == nil {
		err = run(ctx, ln, *path, logger)
	}
	if errors.Is(err, fs.ErrNotExist) && !flagSet("config") {
		// The default is relative to the repository's root.
		err = fmt.Errorf("%w (the default -config is relative to the repository's root: run from there, or give -config PATH)", err)
	}
	if err != nil {
		logger.Error("ratekeeper example stopped", slog.Any("error", err))
		os.Exit(1)
	}
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// shutdownTimeout bounds the wait for the requests in flight at shutdown.
const shutdownTimeout = 10 * time.Second

// run serves on ln with the configuration at path, read again on SIGHUP,
// until ctx is done, then stops taking requests, waits for those in
// flight (at most shutdownTimeout), stops watching the file and returns.
func run(ctx context.Context, ln net.Listener, path string, logger *slog.Logger) error {
	// SIGHUP asks for the file to be read again. It is caught before the
	// slow start (the store, the file, the watcher): one sent meanwhile
	// waits in hup, read once the watcher runs, instead of ending the
	// process (Go's default for a signal not caught; the command's main
	// ignores it until run catches it, and again once run returns).
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	store, err := algorithms.NewMemoryStore(algorithms.WithMaxKeys(1_000_000))
	if err != nil {
		ln.Close()
		return err
	}
	defer store.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s, err := newServer(path, serverOptions{store: store, reg: reg, log: logger})
	if err != nil {
		ln.Close()
		return err
	}
	defer s.Close()

	hupCtx, stopHup := context.WithCancel(ctx)
	hupDone := make(chan struct{})
	defer func() { stopHup(); <-hupDone }()
	go func() {
		defer close(hupDone)
		for {
			select {
			case <-hupCtx.Done():
				return
			case <-hup:
				// A new version is logged ("config reloaded", or the
				// error); the same content is not applied again.
				if err := s.watcher.Reload(); err == nil {
					logger.Info("SIGHUP: configuration file read", slog.String("config", path))
				}
			}
		}
	}()

	// Timeouts bound a client that trickles its request in or leaves its
	// connection idle: with ReadHeaderTimeout alone, both held it for ever.
	srv := app.NewServer(s)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	logger.Info("listening", slog.String("url", "http://"+ln.Addr().String()), slog.String("config", path))
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err = srv.Shutdown(sctx)
	<-served // http.ErrServerClosed
	return err
}

// serverOptions are what a test replaces.
type serverOptions struct {
	store algorithms.Store
	reg   *prometheus.Registry
	log   *slog.Logger
	clock algorithms.Clock // of the adaptive controller; nil: the system's
	// reload options added to the server's (a test's debounce and hook).
	reload []reload.Option
}

// server is the example application behind its rate limiter, with the
// watcher of its configuration file.
type server struct {
	http.Handler
	mw       *middleware.Middleware
	ctrl     *adaptive.Controller
	watcher  *reload.Watcher
	observer *prommetrics.Metrics
}

// newServer loads the configuration at path and builds the server, watching
// the file until Close.
func newServer(path string, o serverOptions) (*server, error) {
	cfg, err := policy.Load(path)
	if err != nil {
		return nil, err
	}
	metrics, err := prommetrics.New(o.reg)
	if err != nil {
		return nil, err
	}
	logs, err := middleware.NewLogObserver(o.log)
	if err != nil {
		return nil, err
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", app.Hello)
	mux.HandleFunc("POST /login", app.Hello)
	mux.HandleFunc("GET /search", app.Hello)
	mux.HandleFunc("GET /fail", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "failing on purpose", http.StatusInternalServerError)
	})

	// The policies restricted to routes (login, search-daily) find the
	// route pattern by asking the mux, since the limiter runs before it.
	pattern := policy.ServeMuxPattern(mux)
	m, err := middleware.FromConfig(o.store, cfg,
		middleware.WithObserver(metrics, logs),
		middleware.WithPatternFunc(pattern))
	if err != nil {
		return nil, err
	}
	// Each route of the policies must be one of mux's (a typo is a policy
	// that never applies): checked at start, and before each reload.
	if err := m.CheckRoutes(nil); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// Every policy drops to 80% when the p99 latency is above twice its
	// baseline and more than 1% of responses are 5xx (seed 001).
	ctrl, err := adaptive.New(m, adaptive.Config{Clock: o.clock, Logger: o.log})
	if err != nil {
		return nil, err
	}
	// InForce: an edit made since the file was loaded above is applied
	// at once, not at the next change.
	// WithCheck: a new version naming a route mux lacks is refused before
	// it is applied, as a file that does not load is.
	check := reload.WithCheck(func(c *policy.Config) error { return m.CheckConfigRoutes(c, nil) })
	w, err := reload.New(path, reloadFunc(m, ctrl), append([]reload.Option{reload.WithLogger(o.log), reload.InForce(cfg), check}, o.reload...)...)
	if err != nil {
		return nil, err
	}

	// /metrics is not limited. (Not a route of an outer ServeMux: that
	// mux's pattern, "/", would hide mux's from the route-restricted
	// policies.)
	metricsPage := promhttp.HandlerFor(o.reg, promhttp.HandlerOpts{})
	// The middleware feeds the controller the latency and status of every
	// request it passes on.
	m.SetFeedback(ctrl)
	limited := app.SignedIn(m.Handler(mux))
	root := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			metricsPage.ServeHTTP(w, r)
			return
		}
		limited.ServeHTTP(w, r)
	})
	return &server{Handler: root, mw: m, ctrl: ctrl, watcher: w, observer: metrics}, nil
}

// Close stops watching the configuration file.
func (s *server) Close() error { return s.watcher.Close() }

// reloadFunc returns the function the watcher calls with each new version
// of the file that passed its check (the routes). A reload keeps the
// adaptive level: the controller applies it to the new limits at once.
//
// The watcher takes an error matching middleware.ErrRestartNeeded for a
// reload applied (with a warning) and any other for a failure (logged as
// one; Reload tries again): the function returns ErrRestartNeeded only
// when the controller succeeded too, never joined with its error.
func reloadFunc(m *middleware.Middleware, ctrl *adaptive.Controller) func(*policy.Config) error {
	return func(cfg *policy.Config) error {
		err := m.ApplyConfig(cfg) // nil, or ErrRestartNeeded: the new rules are in force either way
		if err != nil && !errors.Is(err, middleware.ErrRestartNeeded) {
			return err // refused: the rules in force keep running
		}
		if aerr := ctrl.Apply(); aerr != nil {
			return fmt.Errorf("new rules in force, adaptive level not: %w", aerr) // a failure, whatever err was
		}
		return err // nil, or a warning: headers or failure_mode wait for a restart
	}
}
