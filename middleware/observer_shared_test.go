package middleware_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// sharedLog records, in order, what the observers of a test are told,
// each line prefixed with the observer's name.
type sharedLog struct {
	mu  sync.Mutex
	got []string
}

func (l *sharedLog) add(who, what string) {
	l.mu.Lock()
	l.got = append(l.got, who+" "+what)
	l.mu.Unlock()
}

func (l *sharedLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.got
	l.got = nil
	return out
}

// loggedObserver is a RemovalObserver and CloseObserver that logs what it
// is told under its name.
type loggedObserver struct {
	name string
	log  *sharedLog
}

func (o *loggedObserver) ObserveRequest(e middleware.Event) {
	o.log.add(o.name, "request "+e.Outcome.String())
}

func (o *loggedObserver) ObserveState(from, to middleware.State) {
	o.log.add(o.name, "state "+from.String()+"->"+to.String())
}

func (o *loggedObserver) ObserveLimit(policy string, limit, configured int64) {
	o.log.add(o.name, "limit "+policy+"="+strconv.FormatInt(limit, 10))
}

func (o *loggedObserver) ObservePolicyRemoved(policy string) { o.log.add(o.name, "removed "+policy) }

func (o *loggedObserver) ObserveClose(last middleware.State) {
	o.log.add(o.name, "close "+last.String())
}

// sharedObserver is a SharedObserver whose ForMiddleware returns
// loggedObservers named name/1, name/2, ... (or what bind returns, when
// set); it logs under name what it is told itself.
type sharedObserver struct {
	loggedObserver
	mu    sync.Mutex
	bound int
	bind  func() middleware.Observer
}

func (s *sharedObserver) ForMiddleware() middleware.Observer {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bound++
	if s.bind != nil {
		return s.bind()
	}
	return &loggedObserver{name: s.name + "/" + strconv.Itoa(s.bound), log: s.log}
}

// TestWithObserverBindsSharedObserver: a SharedObserver given to
// WithObserver is not called by the middleware: each middleware built
// with the option (one Option value given to two New calls) gets its own
// ForMiddleware, and reports its limits, requests, removed policies and
// Close to that one alone. An observer that is no SharedObserver, given
// beside it, is called as is, by both. Through chi and a ServeMux.
func TestWithObserverBindsSharedObserver(t *testing.T) {
	mem, _ := newStore(t)
	var log sharedLog
	shared := &sharedObserver{loggedObserver: loggedObserver{name: "shared", log: &log}}
	plain := &loggedObserver{name: "plain", log: &log}
	opt := middleware.WithObserver(plain, shared)

	first := middleware.MustNew(mem, []*policy.Policy{fixed("a", 10, time.Minute, remote), fixed("b", 5, time.Minute, remote)}, opt)
	if got, want := log.take(), []string{"plain limit a=10", "shared/1 limit a=10", "plain limit b=5", "shared/1 limit b=5"}; !slices.Equal(got, want) {
		t.Errorf("first built: told\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	second := middleware.MustNew(mem, []*policy.Policy{fixed("a", 20, time.Minute, remote)}, opt)
	if got, want := log.take(), []string{"plain limit a=20", "shared/2 limit a=20"}; !slices.Equal(got, want) {
		t.Errorf("second built: told\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if shared.bound != 2 {
		t.Errorf("ForMiddleware called %d times for two middlewares built with one Option, want 2", shared.bound)
	}

	r := chi.NewRouter()
	r.Use(first.Handler)
	r.Get("/", ok)
	mux := http.NewServeMux()
	mux.Handle("GET /", second.Handler(ok))
	serve(r, "GET", "/")
	serve(mux, "GET", "/")
	if got, want := log.take(), []string{"plain request allowed", "shared/1 request allowed", "plain request allowed", "shared/2 request allowed"}; !slices.Equal(got, want) {
		t.Errorf("a request through each: told\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := first.SetPolicies([]*policy.Policy{first.Configured("b")}); err != nil {
		t.Fatal(err)
	}
	if got, want := log.take(), []string{"plain removed a", "shared/1 removed a"}; !slices.Equal(got, want) {
		t.Errorf("first reloaded without a: told\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	first.Close()
	if got, want := log.take(), []string{"plain close healthy", "shared/1 close healthy"}; !slices.Equal(got, want) {
		t.Errorf("first closed: told\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	second.Close()
	if got, want := log.take(), []string{"plain close healthy", "shared/2 close healthy"}; !slices.Equal(got, want) {
		t.Errorf("second closed: told\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if shared.bound != 2 {
		t.Errorf("ForMiddleware called %d times, want 2 (once per middleware built)", shared.bound)
	}
}

// TestWithObserverBindsOnce: the observer ForMiddleware returns is
// installed as is, even if it is a SharedObserver itself: WithObserver
// does not ask it for a ForMiddleware in turn.
func TestWithObserverBindsOnce(t *testing.T) {
	mem, _ := newStore(t)
	var log sharedLog
	inner := &sharedObserver{loggedObserver: loggedObserver{name: "inner", log: &log}}
	outer := &sharedObserver{loggedObserver: loggedObserver{name: "outer", log: &log},
		bind: func() middleware.Observer { return inner }}
	middleware.MustNew(mem, []*policy.Policy{fixed("a", 10, time.Minute, remote)}, middleware.WithObserver(outer))
	if got, want := log.take(), []string{"inner limit a=10"}; !slices.Equal(got, want) {
		t.Errorf("told %q, want %q", got, want)
	}
	if outer.bound != 1 || inner.bound != 0 {
		t.Errorf("ForMiddleware called %d times on the observer given, %d on the one it returned; want 1 and 0", outer.bound, inner.bound)
	}
}

// TestWithObserverSharedNil: a SharedObserver whose ForMiddleware returns
// nil (or a nil pointer) is New's error, naming ForMiddleware; a nil
// pointer of a SharedObserver type is refused as nil before ForMiddleware
// is called on it.
func TestWithObserverSharedNil(t *testing.T) {
	mem, _ := newStore(t)
	for _, tc := range []struct {
		name string
		bind func() middleware.Observer
	}{
		{"nil", func() middleware.Observer { return nil }},
		{"nil pointer", func() middleware.Observer { return (*loggedObserver)(nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shared := &sharedObserver{loggedObserver: loggedObserver{name: "shared", log: new(sharedLog)}, bind: tc.bind}
			_, err := middleware.New(mem, []*policy.Policy{fixed("a", 10, time.Minute, remote)}, middleware.WithObserver(shared))
			if err == nil || !strings.Contains(err.Error(), "ForMiddleware") {
				t.Errorf("New with a ForMiddleware returning %s: error %v, want one naming ForMiddleware", tc.name, err)
			}
		})
	}
	var none *sharedObserver
	_, err := middleware.New(mem, []*policy.Policy{fixed("a", 10, time.Minute, remote)}, middleware.WithObserver(none))
	if err == nil || !strings.Contains(err.Error(), "observer is nil") {
		t.Errorf("New with a nil *sharedObserver: error %v, want observer is nil", err)
	}
}
