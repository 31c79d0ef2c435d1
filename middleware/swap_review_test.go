package middleware_test

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// queue10 is a leaky_queue of one request per 10 s, holding up to maxDelay.
func queue10(name string, maxDelay time.Duration) *policy.Policy {
	spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: 10 * time.Second, MaxDelay: maxDelay}
	return policy.Must(policy.New(name, spec, remote))
}

// TestHeldRequestStraddlesSwap: a request held for its leaky_queue Delay
// while the rule set is swapped (its policy removed, changed, or rebuilt
// unchanged, as a reload does) is decided under the set it started with:
// it is served after its Delay, its headers and FromContext report the
// policy it was decided under; a client that leaves during the hold gives
// its place back to the state it took it from, which the new set uses
// when the policy's name and Spec are unchanged (the next request's wait
// shrinks) and does not use when the Spec changed (the new Spec's queue
// starts empty). Through a chi router and a ServeMux.
func TestHeldRequestStraddlesSwap(t *testing.T) {
	routers := map[string]func(h func(http.Handler) http.Handler, app http.Handler) http.Handler{
		"chi": func(h func(http.Handler) http.Handler, app http.Handler) http.Handler {
			r := chi.NewRouter()
			r.Use(h)
			r.Get("/q", app.ServeHTTP)
			return r
		},
		"ServeMux": func(h func(http.Handler) http.Handler, app http.Handler) http.Handler {
			mux := http.NewServeMux()
			mux.Handle("GET /q", app)
			return h(mux)
		},
	}
	for _, tc := range []struct {
		name  string
		next  []*policy.Policy // the set swapped in during the hold
		leave bool             // the client leaves during the hold
		// the wait of the request made 4 s into the hold, under next
		thirdWait   time.Duration
		thirdPolicy string // its RateLimit-Policy
	}{
		{"removed, served", []*policy.Policy{fixed("other", 100, time.Minute, remote)}, false, 0, `"other";q=100;w=60`},
		{"changed, served", []*policy.Policy{queue10("q", 30*time.Second)}, false, 0, `"q";q=4;w=10`},
		// Served after 10 s: the third, 4 s into the hold, waits for
		// the second's departure at 10 s and its own 10 s beyond.
		{"unchanged, served", []*policy.Policy{queue10("q", time.Minute)}, false, 16 * time.Second, `"q";q=7;w=10`},
		// Left at 4 s: its place goes back; the third departs at 10 s.
		{"unchanged, left", []*policy.Policy{queue10("q", time.Minute)}, true, 6 * time.Second, `"q";q=7;w=10`},
		// The changed Spec's queue is empty whether or not the place
		// went back to the old one.
		{"changed, left", []*policy.Policy{queue10("q", 30*time.Second)}, true, 0, `"q";q=4;w=10`},
	} {
		for rname, route := range routers {
			t.Run(tc.name+"/"+rname, func(t *testing.T) {
				store, clock := newStore(t)
				var m *middleware.Middleware
				var waits []time.Duration
				swap := false
				m = middleware.MustNew(store, []*policy.Policy{queue10("q", time.Minute)},
					middleware.WithClock(clock),
					middleware.WithWait(func(ctx context.Context, d time.Duration) error {
						waits = append(waits, d)
						if !swap {
							clock.Advance(d)
							return nil
						}
						swap = false
						if err := m.SetPolicies(tc.next); err != nil {
							t.Fatal(err)
						}
						if tc.leave {
							clock.Advance(4 * time.Second)
							return context.Canceled
						}
						clock.Advance(d)
						return nil
					}))
				var seen []string
				app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					res, ok := middleware.FromContext(r.Context())
					if !ok {
						seen = append(seen, "none")
						return
					}
					seen = append(seen, res.Policy(0).Name()+"/"+res.Policy(0).Spec().MaxDelay.String())
				})
				h := route(m.Handler, app)
				if w := serve(h, "GET", "/q"); w.Code != http.StatusOK {
					t.Fatalf("first: %d", w.Code)
				}
				swap = true
				w := serve(h, "GET", "/q")
				if tc.leave {
					if w.Code != http.StatusServiceUnavailable || len(seen) != 1 {
						t.Fatalf("second, left during the hold: %d, served %v; want 503, not served", w.Code, seen)
					}
				} else {
					if w.Code != http.StatusOK || !slices.Equal(seen, []string{"q/1m0s", "q/1m0s"}) {
						t.Fatalf("second, held across the swap: %d, served under %v; want 200 under q/1m0s twice", w.Code, seen)
					}
					if got := w.Header().Get("RateLimit-Policy"); got != `"q";q=7;w=10` {
						t.Errorf("second: RateLimit-Policy %q, want the policy it was decided under", got)
					}
					if !clock.Now().Equal(t0.Add(10 * time.Second)) {
						t.Errorf("second: served at %s, want after its 10 s Delay", clock.Now().Sub(t0))
					}
					// The third comes 4 s into what was the hold.
					clock.Set(t0.Add(4 * time.Second))
				}
				if got, want := m.Stats(), (middleware.Stats{Delayed: 1, Abandoned: map[bool]int64{true: 1}[tc.leave]}); got != want {
					t.Errorf("Stats %+v, want %+v", got, want)
				}
				waits = waits[:0]
				w = serve(h, "GET", "/q")
				var wait time.Duration
				if len(waits) > 0 {
					wait = waits[0]
				}
				if w.Code != http.StatusOK || wait != tc.thirdWait {
					t.Errorf("third, under the new set: %d after %s; want 200 after %s", w.Code, wait, tc.thirdWait)
				}
				if got := w.Header().Get("RateLimit-Policy"); got != tc.thirdPolicy {
					t.Errorf("third: RateLimit-Policy %q, want the new set's %q", got, tc.thirdPolicy)
				}
			})
		}
	}
}

// TestReloadUnderTraffic: a Watcher reloads the file, alternating two
// versions, while requests are served through a chi router and a
// ServeMux (race detector on): every response carries the whole rule set
// of one version, never a mix; the policies whose name and Spec the
// versions share keep their counters, exactly, across all the swaps; the
// observer's limits, replayed, are the final set's; the Stats count no
// failure.
func TestReloadUnderTraffic(t *testing.T) {
	const (
		shared   = "  - {name: steady, algorithm: fixed_window, limit: 1000000, window: 1h}\n  - {name: login, algorithm: fixed_window, limit: 900000, window: 1h, routes: [\"GET /r\"]}\n"
		versionA = "policies:\n" + shared + "  - {name: shifting, algorithm: fixed_window, limit: 500000, window: 1h}\n"
		versionB = "policies:\n" + shared + "  - {name: shifting, algorithm: fixed_window, limit: 600000, window: 1h}\n  - {name: extra, algorithm: fixed_window, limit: 700000, window: 1h}\n"
	)
	lineA := `"steady";q=1000000;w=3600, "login";q=900000;w=3600, "shifting";q=500000;w=3600`
	lineB := `"steady";q=1000000;w=3600, "login";q=900000;w=3600, "shifting";q=600000;w=3600, "extra";q=700000;w=3600`
	routers := map[string]func(m *middleware.Middleware, app http.Handler) http.Handler{
		"chi": func(m *middleware.Middleware, app http.Handler) http.Handler {
			r := chi.NewRouter()
			r.With(m.Handler).Get("/r", app.ServeHTTP)
			return r
		},
		"ServeMux": func(m *middleware.Middleware, app http.Handler) http.Handler {
			mux := http.NewServeMux()
			mux.Handle("GET /r", m.Handler(app))
			return mux
		},
	}
	for rname, route := range routers {
		t.Run(rname, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "ratekeeper.yaml")
			if err := os.WriteFile(path, []byte(versionA), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := policy.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			store, clock := newStore(t)
			rec := &recorder{}
			m, err := middleware.FromConfig(store, cfg, middleware.WithClock(clock), middleware.WithObserver(rec))
			if err != nil {
				t.Fatal(err)
			}
			w, err := reload.New(path, m.ApplyConfig, reload.InForce(cfg), reload.WithLogger(slog.New(slog.DiscardHandler)))
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			h := route(m, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))

			const workers, requests, reloads = 4, 150, 40
			var wg sync.WaitGroup
			bad := make(chan string, workers)
			for range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range requests {
						rw := serve(h, "GET", "/r")
						if p := rw.Header().Get("RateLimit-Policy"); rw.Code != http.StatusOK || p != lineA && p != lineB {
							bad <- strconv.Itoa(rw.Code) + " " + p
							return
						}
					}
				}()
			}
			for i := range reloads {
				v := versionB
				if i%2 == 1 {
					v = versionA
				}
				if err := os.WriteFile(path, []byte(v), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := w.Reload(); err != nil {
					t.Errorf("reload %d: %v", i, err)
				}
			}
			wg.Wait()
			close(bad)
			for b := range bad {
				t.Errorf("a response during the reloads: %s; want 200 with one version's whole set", b)
			}
			// The last version written was A (reloads is even).
			rw := serve(h, "GET", "/r")
			if got := rw.Header().Get("RateLimit-Policy"); got != lineA {
				t.Fatalf("after the reloads: RateLimit-Policy %q, want %q", got, lineA)
			}
			served := int64(workers*requests + 1)
			if got := remaining(t, rw, "steady"); got != 1000000-served {
				t.Errorf("steady: r = %d, want %d: its counters kept across the reloads", got, 1000000-served)
			}
			if got := remaining(t, rw, "login"); got != 900000-served {
				t.Errorf("login: r = %d, want %d: its counters kept across the reloads", got, 900000-served)
			}
			if got := m.Stats(); got != (middleware.Stats{}) {
				t.Errorf("Stats %+v, want no failure, denial or hold", got)
			}
			// The limits the observer was told, replayed, are the final
			// set's: none missing, none removed left.
			told := map[string]string{}
			for _, l := range strings.Fields(rec.limitsString()) {
				if name, ok := strings.CutPrefix(l, "-"); ok {
					delete(told, name)
					continue
				}
				name, lim, _ := strings.Cut(l, "=")
				told[name] = lim
			}
			want := map[string]string{}
			for _, p := range m.Set().Policies() {
				want[p.Name()] = strconv.FormatInt(p.Spec().Limit, 10) + "/" + strconv.FormatInt(p.Spec().Limit, 10)
			}
			if !maps.Equal(told, want) {
				t.Errorf("limits told, replayed: %v; want the final set's %v", told, want)
			}
			rec.mu.Lock()
			n := len(rec.outcomes)
			allowed := 0
			for _, o := range rec.outcomes {
				if o == middleware.Allowed.String() {
					allowed++
				}
			}
			rec.mu.Unlock()
			if int64(n) != served || int64(allowed) != served {
				t.Errorf("observer saw %d requests, %d allowed; want %d, all allowed", n, allowed, served)
			}
		})
	}
}

// TestFailedReloadKeepsEverything: a reload that fails leaves the rules
// in force as they were: the same Set (its effective limits, as an
// adaptive controller set them, too), the counters, the forwarding check
// and the Watcher's Config; whether the file does not parse, or parses
// and the middleware refuses it (count: failed on a store that cannot
// give units back, naming the policy). A file that only changes the
// headers gets its policies applied and the restart warning, the headers
// staying as built; a bad file after it keeps those policies.
func TestFailedReloadKeepsEverything(t *testing.T) {
	const good = "policies:\n  - {name: per-ip, algorithm: fixed_window, limit: 10, window: 1m}\n"
	for _, tc := range []struct{ name, file, errHas string }{
		{"does not parse", "policies:\n  - {name: per-ip, algorithm: fixed_window, limit: 10, window: 60}\n", "window"},
		{"refused by the middleware", "trusted_hops: 1\npolicies:\n  - {name: per-ip, algorithm: fixed_window, limit: 20, window: 1m, count: failed}\n", `"per-ip"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ratekeeper.yaml")
			if err := os.WriteFile(path, []byte(good), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := policy.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			mem, clock := newStore(t)
			var errs []error
			m, err := middleware.FromConfig(takeOnly{mem}, cfg, middleware.WithClock(clock),
				middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) }))
			if err != nil {
				t.Fatal(err)
			}
			w, err := reload.New(path, m.ApplyConfig, reload.InForce(cfg), reload.WithLogger(slog.New(slog.DiscardHandler)))
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if err := m.SetLimit("per-ip", 4); err != nil {
				t.Fatal(err)
			}
			r := chi.NewRouter()
			r.Use(m.Handler)
			r.Get("/", ok)
			for range 2 {
				serve(r, "GET", "/")
			}
			before := m.Set()
			if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := w.Reload(); err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Fatalf("Reload of the bad file: %v, want an error naming %s", err, tc.errHas)
			}
			if m.Set() != before || w.Config() != cfg {
				t.Errorf("a failed reload replaced the Set (%v) or the Watcher's Config", m.Set() != before)
			}
			codes := []int{}
			for range 3 {
				codes = append(codes, serve(r, "GET", "/").Code)
			}
			if want := []int{200, 200, 429}; !slices.Equal(codes, want) {
				t.Errorf("after the failed reload: %v, want %v (the effective limit 4, two spent before)", codes, want)
			}
			// The forwarding check of the rules in force (ip keys, no
			// proxies declared) still reports a forwarding header: the
			// refused file's trusted_hops did not turn it off.
			errs = nil
			serve(r, "GET", "/", "X-Forwarded-For", "203.0.113.9")
			if !slices.ContainsFunc(errs, func(err error) bool { return errors.Is(err, middleware.ErrForwardingIgnored) }) {
				t.Errorf("errors %v, want ErrForwardingIgnored: the check in force", errs)
			}
		})
	}

	t.Run("headers changed, then a bad file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ratekeeper.yaml")
		if err := os.WriteFile(path, []byte(good), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := policy.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		store, clock := newStore(t)
		m, err := middleware.FromConfig(store, cfg, middleware.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		var hooked []error
		w, err := reload.New(path, m.ApplyConfig, reload.InForce(cfg), reload.WithLogger(slog.New(slog.DiscardHandler)),
			reload.OnReload(func(_ *policy.Config, err error) { hooked = append(hooked, err) }))
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		mux := http.NewServeMux()
		mux.Handle("GET /", ok)
		h := m.Handler(mux)
		serve(h, "GET", "/")
		changed := "headers: draft-6\npolicies:\n  - {name: per-ip, algorithm: fixed_window, limit: 10, window: 1m}\n  - {name: added, algorithm: fixed_window, limit: 3, window: 1m}\n"
		if err := os.WriteFile(path, []byte(changed), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := w.Reload(); !errors.Is(err, middleware.ErrRestartNeeded) || !strings.Contains(err.Error(), "headers") {
			t.Fatalf("Reload of a file changing the headers: %v, want ErrRestartNeeded naming headers", err)
		}
		if len(hooked) != 1 || !errors.Is(hooked[0], middleware.ErrRestartNeeded) || w.Config() == cfg {
			t.Errorf("OnReload got %v, Config replaced %v; want the restart warning, the Config applied", hooked, w.Config() != cfg)
		}
		rw := serve(h, "GET", "/")
		if got, want := rw.Header().Get("RateLimit"), `"per-ip";r=8;t=60, "added";r=2;t=60`; got != want || rw.Header().Get("RateLimit-Limit") != "" {
			t.Errorf("after the reload: RateLimit %q (RateLimit-Limit %q), want %q: the policies applied, counters kept, the IETF headers as built", got, rw.Header().Get("RateLimit-Limit"), want)
		}
		applied := m.Set()
		if err := os.WriteFile(path, []byte("headers: draft-6\npolicies: []\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := w.Reload(); err == nil || errors.Is(err, middleware.ErrRestartNeeded) {
			t.Fatalf("Reload of a file without policies: %v, want an error", err)
		}
		if m.Set() != applied {
			t.Error("the bad file replaced the policies applied with the restart warning")
		}
		rw = serve(h, "GET", "/")
		if got, want := rw.Header().Get("RateLimit"), `"per-ip";r=7;t=60, "added";r=1;t=60`; got != want {
			t.Errorf("after the bad file: RateLimit %q, want %q", got, want)
		}
	})
}

// TestHeldRequestsAcrossApplyConfig: requests held by the default wait
// (real goroutines, a timer; in a synctest bubble, on its fake clock)
// while ApplyConfig swaps in a configuration that keeps the queue policy
// as it was and adds another: the one still held is served at its turn,
// under the set it started with; the one whose client leaves gives its
// place back, so a request that comes after the swap waits only for the
// one still ahead of it.
func TestHeldRequestsAcrossApplyConfig(t *testing.T) {
	const queue = "  - {name: q, algorithm: leaky_queue, limit: 1, window: 10s, max_delay: 1m}\n"
	synctest.Test(t, func(t *testing.T) {
		store, err := algorithms.NewMemoryStore()
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		m, err := middleware.FromConfig(store, mustConfig(t, "policies:\n"+queue), middleware.WithErrorHandler(func(*http.Request, error) {}))
		if err != nil {
			t.Fatal(err)
		}
		r := chi.NewRouter()
		r.Use(m.Handler)
		r.Get("/", func(w http.ResponseWriter, r *http.Request) {
			res, _ := middleware.FromContext(r.Context())
			w.Header().Set("X-Set-Len", strconv.Itoa(res.Set().Len()))
		})
		start := time.Now()
		type answer struct {
			code   int
			setLen string
			after  time.Duration
		}
		send := func(ctx context.Context) <-chan answer {
			c := make(chan answer, 1)
			go func() {
				w := httptest.NewRecorder()
				r.ServeHTTP(w, httptest.NewRequest("GET", "/", nil).WithContext(ctx))
				c <- answer{w.Code, w.Header().Get("X-Set-Len"), time.Since(start)}
			}()
			return c
		}
		first := send(context.Background()) // departs at once
		if a := <-first; a.code != http.StatusOK || a.after != 0 {
			t.Fatalf("first: %+v, want 200 at once", a)
		}
		second := send(context.Background()) // its turn at 10 s
		synctest.Wait()                      // held
		leaving, leave := context.WithCancel(context.Background())
		third := send(leaving) // its turn at 20 s
		synctest.Wait()        // both held
		if err := m.ApplyConfig(mustConfig(t, "policies:\n"+queue+"  - {name: other, limit: 100, window: 1m}\n")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(4 * time.Second)
		leave()
		if a := <-third; a.code != http.StatusServiceUnavailable || a.after != 4*time.Second {
			t.Errorf("third, its client gone at 4 s: %+v, want 503 then", a)
		}
		fourth := send(context.Background()) // under the new set, behind the second
		if a := <-second; a.code != http.StatusOK || a.after != 10*time.Second || a.setLen != "1" {
			t.Errorf("second: %+v, want 200 at 10 s under the set it started with (1 policy)", a)
		}
		if a := <-fourth; a.code != http.StatusOK || a.after != 20*time.Second || a.setLen != "2" {
			t.Errorf("fourth: %+v, want 200 at 20 s (the third's place given back) under the new set (2 policies)", a)
		}
		if got, want := m.Stats(), (middleware.Stats{Delayed: 3, Abandoned: 1}); got != want {
			t.Errorf("Stats %+v, want %+v", got, want)
		}
	})
}

// TestSpecBackFindsItsCounters: a policy changed back to an earlier Spec
// (a limit lowered during an attack, then restored, within the window)
// finds that Spec's counters, as the store keys them: the requests
// counted under it before, and those counted under the Spec in between,
// since a reload to a tighter Spec keeps counting under the one it
// replaced for as long as its counters matter (SetPolicies' guard, judged
// at the tighter limit).
func TestSpecBackFindsItsCounters(t *testing.T) {
	store, clock := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, remote)}, middleware.WithClock(clock))
	mux := http.NewServeMux()
	mux.Handle("GET /", ok)
	h := m.Handler(mux)
	serve(h, "GET", "/")
	if err := m.SetPolicies([]*policy.Policy{fixed("p", 3, time.Minute, remote)}); err != nil {
		t.Fatal(err)
	}
	if got := remaining(t, serve(h, "GET", "/"), "p"); got != 1 {
		t.Errorf("under the new Spec: r = %d, want 1 (3 less the request before and this one, the replaced Spec judged at 3)", got)
	}
	if err := m.SetPolicies([]*policy.Policy{fixed("p", 10, time.Minute, remote)}); err != nil {
		t.Fatal(err)
	}
	if got := remaining(t, serve(h, "GET", "/"), "p"); got != 10-3 {
		t.Errorf("back to the first Spec: r = %d, want %d (its request, the one under the Spec in between, and this one)", got, 10-3)
	}
}
