package adaptive_test

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/internal/formtest"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// formsRig serves POST and GET /items/{id} through Controller.Handler or
// a middleware with the Controller as its Feedback, under chi or
// http.ServeMux, behind a caller: a middleware further out (a logger's, a
// metrics') that reads the request after its handler returned, as net/http
// itself does (it removes the files of its request's MultipartForm).
type formsRig struct {
	t      *testing.T
	srv    *formtest.Server
	parse  func(w http.ResponseWriter, r *http.Request) string
	caller func(r *http.Request)
	seen   []string // what the handler and the caller saw, in order
}

func newFormsRig(t *testing.T, wiring, router string) *formsRig {
	t.Helper()
	clock := algotest.NewClock(t0)
	spec := algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 1_000_000, Window: time.Minute}
	m := clockedMiddleware(t, clock, []*policy.Policy{policy.Must(policy.New("p0", spec, ip))})
	c, err := adaptive.New(m, adaptive.Config{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	var wrap func(http.Handler) http.Handler
	switch wiring {
	case "Handler":
		wrap = c.Handler
	case "SetFeedback":
		m.SetFeedback(c)
		wrap = m.Handler
	case "no Controller": // Handler's baseline
		wrap = func(h http.Handler) http.Handler { return h }
	case "no Feedback": // SetFeedback's baseline
		wrap = m.Handler
	}
	rig := &formsRig{t: t}
	handler := func(w http.ResponseWriter, r *http.Request) {
		rig.seen = append(rig.seen, "handler: "+rig.parse(w, r))
	}
	caller := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if rig.caller != nil {
				rig.caller(r)
			}
			next.ServeHTTP(w, r)
			rig.seen = append(rig.seen, "caller: "+formtest.Describe(r))
		})
	}
	rig.srv = formtest.NewServer(t, formtest.Routes(t, router, caller, wrap, handler))
	return rig
}

// do sends a request and waits until net/http is done with it (its
// connection idle again), and returns what the handler and the caller
// saw.
func (rig *formsRig) do(method, target, contentType string, body io.Reader) string {
	rig.t.Helper()
	rig.seen = nil
	rig.srv.Do(method, target, contentType, body)
	return strings.Join(rig.seen, "; ")
}

// script sends the requests of TestFormsParsedByTheHandlerReachTheCaller
// and returns what the handlers and the caller saw of each, and whether
// the multipart form's file was left on disk once the request was over.
func (rig *formsRig) script() []string {
	t := rig.t
	t.Helper()
	var got []string
	formValue := func(w http.ResponseWriter, r *http.Request) string {
		return "a=" + r.FormValue("a")
	}

	// A form urlencoded, parsed by the handler.
	rig.parse = formValue
	got = append(got, rig.do("POST", "/items/7?q=3", "application/x-www-form-urlencoded", strings.NewReader("a=1&b=2")))

	// A multipart form whose file goes to disk.
	var tmp string
	rig.parse = func(w http.ResponseWriter, r *http.Request) string {
		if err := r.ParseMultipartForm(1); err != nil {
			return err.Error()
		}
		f, err := r.MultipartForm.File["f"][0].Open()
		if err != nil {
			return err.Error()
		}
		defer f.Close()
		if osf, ok := f.(*os.File); ok {
			tmp = osf.Name()
		}
		return "a=" + r.FormValue("a")
	}
	ct, body := formtest.Multipart(t)
	got = append(got, rig.do("POST", "/items/7", ct, body))
	if tmp == "" {
		t.Fatal("the multipart form's file is not on disk: nothing to see removed")
	}
	_, err := os.Stat(tmp)
	left := !errors.Is(err, fs.ErrNotExist)
	if left {
		os.Remove(tmp)
	}
	got = append(got, fmt.Sprintf("file left on disk: %v", left))

	// A form the caller parsed before its handler.
	rig.caller = func(r *http.Request) { r.ParseForm() }
	rig.parse = formValue
	got = append(got, rig.do("POST", "/items/7", "application/x-www-form-urlencoded", strings.NewReader("a=1")))
	rig.caller = nil

	// No body: the handler serves the caller's request itself.
	got = append(got, rig.do("GET", "/items/7?q=3", "", nil))
	return got
}

// TestFormsParsedByTheHandlerReachTheCaller: with a body, the handler
// serves a copy of the request (net/http looks at its own request's Body
// as the response goes out; see timing.Serve), and what it parses or its
// router sets on that copy is given to the request it was handed, as the
// handler would have set it there without the Controller: the forms it
// parses (r.Form, r.PostForm, r.MultipartForm, whose files net/http then
// removes when the request is its own) and the pattern it matched and its
// path values, as http.ServeMux and chi set them, which a caller further
// out (a metrics middleware naming the route) reads after its handler
// returned. A form the caller parsed first is the handler's too. The
// caller and net/http see what they see without the Controller; on
// ServeMux (where the request is net/http's own), that is every form, the
// pattern and the path value, and no file left: with Controller.Handler,
// and with SetFeedback, the middleware giving its caller what was set on
// the copy it passes on too (see TestTheCallerSeesWhatNextSetOnTheRequest
// in package middleware). The pattern and path values were lost to the
// caller of a request with a body.
func TestFormsParsedByTheHandlerReachTheCaller(t *testing.T) {
	for _, wiring := range [][2]string{{"Handler", "no Controller"}, {"SetFeedback", "no Feedback"}} {
		for _, router := range []string{"chi", "ServeMux"} {
			t.Run(wiring[0]+"/"+router, func(t *testing.T) {
				got := newFormsRig(t, wiring[0], router).script()
				want := newFormsRig(t, wiring[1], router).script()
				for i := range want {
					if got[i] != want[i] {
						t.Errorf("request %d:\n got %s\nwant %s (%s)", i, got[i], want[i], wiring[1])
					}
				}
				if router != "ServeMux" {
					return
				}
				// And where the request is net/http's own: everything.
				want = []string{
					`handler: a=1; caller: form map[a:[1] b:[2] q:[3]] post map[a:[1] b:[2]] multipart nil pattern "POST /items/{id}" id "7"`,
					`handler: a=1; caller: form map[a:[1]] post map[a:[1]] multipart map[a:[1]] [f=f.txt(4096)] pattern "POST /items/{id}" id "7"`,
					`file left on disk: false`,
					`handler: a=1; caller: form map[a:[1]] post map[a:[1]] multipart nil pattern "POST /items/{id}" id "7"`,
					`handler: a=; caller: form map[q:[3]] post map[] multipart nil pattern "GET /items/{id}" id "7"`,
				}
				for i := range want {
					if got[i] != want[i] {
						t.Errorf("request %d:\n got %s\nwant %s", i, got[i], want[i])
					}
				}
			})
		}
	}
}
