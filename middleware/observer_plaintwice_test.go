package middleware_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// countTo is an Observer of a comparable value type: two with one counter
// are equal, and record into it alike.
type countTo struct{ n *atomic.Int64 }

func (c countTo) ObserveRequest(middleware.Event)      { c.n.Add(1) }
func (countTo) ObserveState(from, to middleware.State) {}
func (countTo) ObserveLimit(string, int64, int64)      {}

// countFunc is an Observer of a type that is not comparable (a func).
type countFunc func(middleware.Event)

func (f countFunc) ObserveRequest(e middleware.Event)    { f(e) }
func (countFunc) ObserveState(from, to middleware.State) {}
func (countFunc) ObserveLimit(string, int64, int64)      {}

// countHolder is an Observer of a struct type whose field holds a value
// that is not comparable: reflect finds it so only by looking inside.
type countHolder struct {
	n     *atomic.Int64
	extra any
}

func (h countHolder) ObserveRequest(middleware.Event)      { h.n.Add(1) }
func (countHolder) ObserveState(from, to middleware.State) {}
func (countHolder) ObserveLimit(string, int64, int64)      {}

// routeEach serves "/" through m under chi and under a ServeMux.
func routeEach(m *middleware.Middleware) map[string]http.Handler {
	r := chi.NewRouter()
	r.Use(m.Handler)
	r.Get("/", ok)
	mux := http.NewServeMux()
	mux.Handle("GET /", m.Handler(ok))
	return map[string]http.Handler{"chi": r, "ServeMux": mux}
}

// denialRecords counts the denial records a LogObserver wrote to buf.
func denialRecords(buf *bytes.Buffer) int {
	return strings.Count(buf.String(), `"msg":"ratekeeper: request denied"`)
}

// denialsOfOne serves two requests through m under router, whose policy
// admits one a minute, and returns how many denial records the denied
// second one wrote to buf.
func denialsOfOne(t *testing.T, m *middleware.Middleware, router string, buf *bytes.Buffer) int {
	t.Helper()
	h := routeEach(m)[router]
	serve(h, "GET", "/") // the one allowed
	buf.Reset()
	if code := serve(h, "GET", "/").Code; code != http.StatusTooManyRequests {
		t.Fatalf("second request: status %d, want 429", code)
	}
	return denialRecords(buf)
}

// TestObserverGivenTwice: one Observer that is not a SharedObserver (a
// LogObserver, or one of the application's) given twice to one
// middleware, in one WithObserver or two (a base option list and the
// application's own both adding it), was called twice for every request:
// a denial logged twice, a request counted twice. New refuses it, naming
// its type, as it refuses a SharedObserver given twice. Two observers of
// one type that are not one (two LogObservers, on one logger or two; two
// counters of one type with counters apart) stay allowed, each recording
// once; one of a type that is not comparable cannot be told from
// another, and passes without a panic. Through chi and a ServeMux.
func TestObserverGivenTwice(t *testing.T) {
	p := func() []*policy.Policy { return []*policy.Policy{fixed("p", 1, time.Minute, remote)} }
	logTo := func(buf *bytes.Buffer) *middleware.LogObserver {
		lo, err := middleware.NewLogObserver(slog.New(slog.NewJSONHandler(buf, nil)))
		if err != nil {
			t.Fatal(err)
		}
		return lo
	}

	for _, router := range []string{"chi", "ServeMux"} {
		// One LogObserver given twice: a denied request was logged twice.
		for _, tc := range []struct {
			name string
			opts func(lo *middleware.LogObserver) []middleware.Option
		}{
			{"LogObserver in one option", func(lo *middleware.LogObserver) []middleware.Option {
				return []middleware.Option{middleware.WithObserver(lo, lo)}
			}},
			{"LogObserver in two options", func(lo *middleware.LogObserver) []middleware.Option {
				return []middleware.Option{middleware.WithObserver(lo), middleware.WithObserver(&nopObserver{}), middleware.WithObserver(lo)}
			}},
		} {
			t.Run(router+"/"+tc.name, func(t *testing.T) {
				store, _ := newStore(t)
				var buf bytes.Buffer
				m, err := middleware.New(store, p(), tc.opts(logTo(&buf))...)
				if err != nil {
					if want := "the *middleware.LogObserver is given twice"; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "give it once") {
						t.Fatalf("New: %v, want an error saying %q and what to do", err, want)
					}
					return
				}
				t.Errorf("New accepted one LogObserver given twice: one denied request wrote %d denial records, want New to refuse it", denialsOfOne(t, m, router, &buf))
			})
		}

		// One counter of a comparable value type given twice.
		t.Run(router+"/value given twice", func(t *testing.T) {
			store, _ := newStore(t)
			c := countTo{new(atomic.Int64)}
			m, err := middleware.New(store, p(), middleware.WithObserver(c), middleware.WithObserver(countTo{c.n}))
			if err != nil {
				if want := "the middleware_test.countTo is given twice"; !strings.Contains(err.Error(), want) {
					t.Fatalf("New: %v, want an error saying %q", err, want)
				}
				return
			}
			serve(routeEach(m)[router], "GET", "/")
			t.Errorf("New accepted one observer given twice: one request counted %d times, want New to refuse it", c.n.Load())
		})

		// Two observers of one type that are not one: each records once.
		t.Run(router+"/two of one type", func(t *testing.T) {
			store, _ := newStore(t)
			var buf1, buf2 bytes.Buffer
			lo1, lo2 := logTo(&buf1), logTo(&buf2)
			c1, c2 := countTo{new(atomic.Int64)}, countTo{new(atomic.Int64)}
			m, err := middleware.New(store, p(), middleware.WithObserver(lo1, c1), middleware.WithObserver(lo2, c2))
			if err != nil {
				t.Fatalf("New with two LogObservers and two counters: %v", err)
			}
			h := routeEach(m)[router]
			serve(h, "GET", "/")
			buf1.Reset()
			serve(h, "GET", "/")
			if n1, n2 := denialRecords(&buf1), denialRecords(&buf2); n1 != 1 || n2 != 1 {
				t.Errorf("one denied request: %d and %d denial records in the two logs, want 1 each", n1, n2)
			}
			if n1, n2 := c1.n.Load(), c2.n.Load(); n1 != 2 || n2 != 2 {
				t.Errorf("two requests counted %d and %d times, want 2 each", n1, n2)
			}
			// Two LogObservers writing to one log are two observers too:
			// the application chose them.
			if _, err := middleware.New(store, p(), middleware.WithObserver(lo1), middleware.WithObserver(logTo(&buf1))); err != nil {
				t.Errorf("New with two LogObservers writing to one log: %v", err)
			}
		})

		// Not comparable: given twice, it cannot be told from another,
		// and New must not panic comparing it.
		t.Run(router+"/not comparable", func(t *testing.T) {
			store, _ := newStore(t)
			var n atomic.Int64
			f := countFunc(func(middleware.Event) { n.Add(1) })
			h := countHolder{n: new(atomic.Int64), extra: []int{1}}
			m, err := middleware.New(store, p(), middleware.WithObserver(f, h), middleware.WithObserver(f, h))
			if err != nil {
				t.Fatalf("New with observers that are not comparable: %v", err)
			}
			serve(routeEach(m)[router], "GET", "/")
			if got, hold := n.Load(), h.n.Load(); got != 2 || hold != 2 {
				t.Errorf("one request: %d and %d calls, want 2 each (each given twice, not told apart)", got, hold)
			}
		})
	}
}

// boundTo is a BoundObserver of the application's, bound to s.
type boundTo struct {
	nopObserver
	s middleware.SharedObserver
}

func (b *boundTo) BoundTo() middleware.SharedObserver { return b.s }

// TestBoundObserverBesideItsShared: a BoundObserver of the application's
// given beside the SharedObserver it is bound to, or beside another bound
// to it, is refused as prommetrics' and otelmetrics' Bindings are, naming
// both types; one bound to another SharedObserver of the type, or to none
// (nil), is not; one bound to a SharedObserver of a type that is not
// comparable cannot be told, and passes without a panic.
func TestBoundObserverBesideItsShared(t *testing.T) {
	store, _ := newStore(t)
	p := []*policy.Policy{fixed("p", 10, time.Minute, remote)}
	a, b := &ptrShared{}, &ptrShared{}
	s := sliceShared{&nopObserver{}}
	for _, tc := range []struct {
		name string
		opts []middleware.Option
		want string // in the error; "": none
	}{
		{"shared, then bound", []middleware.Option{middleware.WithObserver(a), middleware.WithObserver(&boundTo{s: a})},
			"the *middleware_test.boundTo is an observer of the *middleware_test.ptrShared given too"},
		{"bound, then shared", []middleware.Option{middleware.WithObserver(&boundTo{s: a}, a)},
			"the *middleware_test.boundTo is an observer of the *middleware_test.ptrShared given too"},
		{"two bound", []middleware.Option{middleware.WithObserver(&boundTo{s: a}), middleware.WithObserver(&boundTo{s: a})},
			"two *middleware_test.boundTo of one *middleware_test.ptrShared"},
		{"bound to another", []middleware.Option{middleware.WithObserver(a), middleware.WithObserver(&boundTo{s: b})}, ""},
		{"bound to none", []middleware.Option{middleware.WithObserver(&boundTo{}, &boundTo{}, a)}, ""},
		{"bound to one not comparable", []middleware.Option{middleware.WithObserver(s, &boundTo{s: s}, &boundTo{s: s})}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := middleware.New(store, p, tc.opts...)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("New: %v, want no error", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("New: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}
