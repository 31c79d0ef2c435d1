package middleware_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/formtest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// copyRig serves POST and GET /items/{id} through http.ServeMux or chi,
// with ratekeeper wired one way or another between the router's handler
// and a caller: a middleware further out (a logger's, a metrics') that
// reads the request it was handed once its handler returned, as net/http
// itself does (it removes the files of its own request's MultipartForm).
type copyRig struct {
	t      *testing.T
	srv    *formtest.Server
	tmp    string // TMPDIR, where a multipart form's files go
	parse  func(r *http.Request) string
	panics bool          // the handler panics after parsing, recovered by the caller
	seen   []string      // what the handler and the caller saw, in order
	passed *http.Request // the request the handler was handed
	outer  *http.Request // the caller's
	ms     []*middleware.Middleware
}

// wirings are the ways the middleware sits between the caller and the
// router, and what each does with the requests of the script (after a
// warm-up request, see script): passes them on with their decision in a
// copy of the request (allowed; shadow-denied; let through in shadow
// mode without a key; let through by a failing store; held for a
// leaky_queue Delay; counted as unrouted, with no policy left or one
// decided; nested in another middleware, in shadow mode or not; timed
// for a Feedback; its status read for a CountIf), or passes the caller's
// request itself (WithoutContext), or there is no middleware (the
// baseline).
var wirings = []string{"none", "default", "WithoutContext", "shadow denied", "shadow no key", "failed open", "held",
	"unrouted", "unrouted and global", "nested", "adopted", "Feedback", "CountIf"}

func newCopyRig(t *testing.T, wiring, router string) *copyRig {
	t.Helper()
	rig := &copyRig{t: t, tmp: t.TempDir()}
	// multipart puts the files of a form that does not fit in memory
	// under os.TempDir.
	t.Setenv("TMPDIR", rig.tmp)
	store, _ := newStore(t)
	// Every request has the same key (constKey): a warm-up request sets
	// the state the script's are decided on.
	perHour := func(name string, limit int64, opts ...policy.Option) *policy.Policy {
		return policy.Must(policy.Per(name, limit, time.Hour, constKey, opts...))
	}
	queue := policy.Must(policy.New("queue", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: time.Hour}, constKey))
	// The setup warnings (a policy met unrouted, one decided twice) go
	// to the error handler, not to the test's log.
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	mw := func(p *policy.Policy, opts ...middleware.Option) func(http.Handler) http.Handler {
		m := middleware.MustNew(store, []*policy.Policy{p}, append(opts, quiet)...)
		rig.ms = append(rig.ms, m)
		return m.Handler
	}
	mw2 := func(ps ...*policy.Policy) func(http.Handler) http.Handler {
		m := middleware.MustNew(store, ps, quiet)
		rig.ms = append(rig.ms, m)
		return m.Handler
	}
	var wrap func(http.Handler) http.Handler
	switch wiring {
	case "none":
		wrap = func(h http.Handler) http.Handler { return h }
	case "default":
		wrap = mw(perHour("p", 1000))
	case "WithoutContext":
		wrap = mw(perHour("p", 1000), middleware.WithoutContext())
	case "shadow denied":
		wrap = mw(perHour("p", 1), middleware.WithShadow(nil))
	case "shadow no key":
		noKey := func(*http.Request) (string, error) { return "", errors.New("no key") }
		wrap = mw(policy.Must(policy.Per("p", 1000, time.Hour, noKey)), middleware.WithShadow(nil))
	case "failed open":
		m := middleware.MustNew(&failing{}, []*policy.Policy{perHour("p", 1000)}, quiet)
		rig.ms = append(rig.ms, m)
		wrap = m.Handler
	case "held":
		// The clock stands still: each request after the first waits
		// its turn, the wait returning at once.
		wrap = mw(queue, middleware.WithWait(func(context.Context, time.Duration) error { return nil }))
	case "unrouted":
		// Wrapping the router without its patterns: the route of no
		// request is known.
		wrap = mw(perHour("login", 1000, policy.WithRoutes("POST /login")))
	case "unrouted and global":
		wrap = mw2(perHour("global", 1000), perHour("login", 1000, policy.WithRoutes("POST /login")))
	case "nested":
		outer, inner := mw(perHour("global", 1000)), mw(perHour("items", 1000))
		wrap = func(h http.Handler) http.Handler { return outer(inner(h)) }
	case "adopted":
		// The inner middleware leaves out the policy that only the shadow
		// one further out counted, and passes the request on under the
		// context saying so.
		p := perHour("p", 1000)
		outer, inner := mw(p, middleware.WithShadow(nil)), mw(p)
		wrap = func(h http.Handler) http.Handler { return outer(inner(h)) }
	case "CountIf":
		wrap = mw(perHour("p", 1000, policy.CountIf(func(*http.Request, int) bool { return false })))
	case "Feedback":
		m := middleware.MustNew(store, []*policy.Policy{perHour("p", 1000)}, quiet)
		m.SetFeedback(feedbackFunc(func(time.Duration, int) {}))
		rig.ms = append(rig.ms, m)
		wrap = m.Handler
	default:
		t.Fatalf("unknown wiring %q", wiring)
	}
	handler := func(w http.ResponseWriter, r *http.Request) {
		rig.passed = r
		rig.seen = append(rig.seen, "handler: "+rig.parse(r))
		if rig.panics {
			panic("handler panics")
		}
	}
	caller := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rig.outer = r
			defer func() {
				rig.seen = append(rig.seen, "caller: "+formtest.Describe(r))
				if v := recover(); v != nil {
					rig.seen = append(rig.seen, fmt.Sprint("recovered: ", v))
					w.WriteHeader(http.StatusInternalServerError)
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
	rig.srv = formtest.NewServer(t, formtest.Routes(t, router, caller, wrap, handler))
	return rig
}

type feedbackFunc func(time.Duration, int)

func (f feedbackFunc) Observe(latency time.Duration, status int) { f(latency, status) }

// do sends a request and waits until net/http is done with it (see
// formtest.Server), and returns what the handler and the caller saw.
func (rig *copyRig) do(method, target, contentType string, body io.Reader) string {
	rig.t.Helper()
	rig.seen, rig.passed, rig.outer = nil, nil, nil
	rig.srv.Do(method, target, contentType, body)
	return strings.Join(rig.seen, "; ")
}

// leftOnDisk tells the files left in the rig's TMPDIR, and removes them.
func (rig *copyRig) leftOnDisk() string {
	rig.t.Helper()
	entries, err := os.ReadDir(rig.tmp)
	if err != nil {
		rig.t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		os.RemoveAll(filepath.Join(rig.tmp, e.Name()))
	}
	return fmt.Sprintf("files left on disk: %d", len(names))
}

// script sends the requests of TestTheCallerSeesWhatNextSetOnTheRequest
// and returns what the handler and the caller saw of each, and how many
// files the multipart forms left on disk.
func (rig *copyRig) script() []string {
	t := rig.t
	t.Helper()
	formValue := func(r *http.Request) string { return "a=" + r.FormValue("a") }
	multipartValue := func(r *http.Request) string {
		// 1 byte of memory: the file goes to disk.
		if err := r.ParseMultipartForm(1); err != nil {
			return err.Error()
		}
		return "a=" + r.FormValue("a")
	}
	// A warm-up request: the state the script's requests are decided
	// on (a shadow policy exhausted, a queue with a request ahead).
	rig.parse = formValue
	rig.do("GET", "/items/0", "", nil)

	var got []string
	// A form urlencoded, parsed by the handler.
	got = append(got, rig.do("POST", "/items/7?q=3", "application/x-www-form-urlencoded", strings.NewReader("a=1&b=2")))
	// A multipart form whose file goes to disk.
	rig.parse = multipartValue
	ct, body := formtest.Multipart(t)
	got = append(got, rig.do("POST", "/items/7", ct, body), rig.leftOnDisk())
	// The same, the handler panicking after it parsed the form, the
	// panic recovered by the caller (net/http then ends the request as
	// usual, removing the files of its request's form).
	rig.panics = true
	ct, body = formtest.Multipart(t)
	got = append(got, rig.do("POST", "/items/8", ct, body), rig.leftOnDisk())
	rig.panics = false
	// No body.
	rig.parse = formValue
	got = append(got, rig.do("GET", "/items/9?q=3", "", nil))
	return got
}

// TestTheCallerSeesWhatNextSetOnTheRequest: the middleware hands its
// handler a copy of the request, with the decision in its context
// (FromContext). What the handler or the router in it set on that copy
// was lost to the caller's request: the forms it parsed (r.Form,
// r.PostForm, r.MultipartForm), so that net/http, which removes the files
// of its own request's MultipartForm once the handler returned, left
// those of every multipart upload on disk; and the pattern and path
// values that http.ServeMux and chi set on the request they route, which
// a metrics or logging middleware further out reads after its handler
// returned. The caller now sees what it sees without the middleware,
// however the middleware passes the request on, and a handler that
// panics after parsing (recovered further out) leaves no file either.
// Under chi, which serves its middlewares a copy of its own, the files
// are left without ratekeeper too: that is chi's.
func TestTheCallerSeesWhatNextSetOnTheRequest(t *testing.T) {
	// Where the request is net/http's own (ServeMux), everything.
	own := []string{
		`handler: a=1; caller: form map[a:[1] b:[2] q:[3]] post map[a:[1] b:[2]] multipart nil pattern "POST /items/{id}" id "7"`,
		`handler: a=1; caller: form map[a:[1]] post map[a:[1]] multipart map[a:[1]] [f=f.txt(4096)] pattern "POST /items/{id}" id "7"`,
		`files left on disk: 0`,
		`handler: a=1; caller: form map[a:[1]] post map[a:[1]] multipart map[a:[1]] [f=f.txt(4096)] pattern "POST /items/{id}" id "8"; recovered: handler panics`,
		`files left on disk: 0`,
		`handler: a=; caller: form map[q:[3]] post map[] multipart nil pattern "GET /items/{id}" id "9"`,
	}
	for _, router := range []string{"ServeMux", "chi"} {
		baseline := newCopyRig(t, "none", router).script()
		if router == "ServeMux" {
			for i := range own {
				if baseline[i] != own[i] {
					t.Errorf("%s without the middleware, request %d:\n got %s\nwant %s", router, i, baseline[i], own[i])
				}
			}
		}
		for _, wiring := range wirings[1:] {
			t.Run(router+"/"+wiring, func(t *testing.T) {
				rig := newCopyRig(t, wiring, router)
				got := rig.script()
				for i := range baseline {
					if got[i] != baseline[i] {
						t.Errorf("request %d:\n got %s\nwant %s (as without the middleware)", i, got[i], baseline[i])
					}
				}
				rig.check(wiring)
			})
		}
	}
}

// check checks that the script's requests went the way the wiring says
// (see wirings).
func (rig *copyRig) check(wiring string) {
	t := rig.t
	t.Helper()
	if wiring == "WithoutContext" {
		// The handler was handed the caller's request itself: nothing to
		// give back.
		if rig.passed != rig.outer {
			t.Errorf("WithoutContext: the handler was handed a copy of the caller's request")
		}
		return
	}
	// The counter of the (outer) middleware that says the requests went
	// that way: the script's 4 after the warm-up, or all 5.
	st := rig.ms[0].Stats()
	counters := map[string]struct {
		name      string
		got, want int64
	}{
		"shadow denied":       {"ShadowDenied", st.ShadowDenied, 4},
		"shadow no key":       {"ShadowDenied", st.ShadowDenied, 5},
		"held":                {"Delayed", st.Delayed, 4},
		"failed open":         {"FailedOpen", st.FailedOpen, 5},
		"CountIf":             {"GivenBack", st.GivenBack, 5},
		"unrouted":            {"Unrouted", st.Unrouted, 5},
		"unrouted and global": {"Unrouted", st.Unrouted, 5},
	}
	if c, ok := counters[wiring]; ok && c.got != c.want {
		t.Errorf("Stats().%s = %d, want %d", c.name, c.got, c.want)
	}
	if rig.passed == rig.outer {
		t.Errorf("%s: the handler was handed the caller's request, not a copy: this test tests nothing", wiring)
	}
}
