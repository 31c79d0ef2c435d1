package middleware_test

import (
	"errors"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/internal/formtest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestRefusalHandlerPanicLeavesNoFile: a deny or reject handler that
// parsed the multipart form of the request it refuses and then panicked
// (to drop the response, or by a bug a caller further out recovers, as
// next may) left the form's files on disk: what it set on its copy of the
// request was given back only once it returned, not after a panic, as
// next's is. A client over its limit could so fill the temp dir. Through
// a ServeMux under net/http (chi serves its middlewares a copy of its own,
// whose files are left with or without the middleware).
func TestRefusalHandlerPanicLeavesNoFile(t *testing.T) {
	noKey := func(*http.Request) (string, error) { return "", errors.New("no key") }
	for _, c := range []struct {
		name   string
		policy *policy.Policy
		warm   bool
	}{
		{"deny handler", policy.Must(policy.Per("p", 1, time.Hour, constKey)), true},
		{"reject handler", policy.Must(policy.Per("p", 1, time.Hour, noKey)), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			parseAndPanic := func(r *http.Request) {
				if err := r.ParseMultipartForm(1); err != nil {
					t.Errorf("ParseMultipartForm: %v", err)
				}
				panic("refusal handler bug")
			}
			s, _ := newStore(t)
			m := middleware.MustNew(s, []*policy.Policy{c.policy},
				middleware.WithErrorHandler(func(*http.Request, error) {}),
				middleware.WithDenyHandler(func(_ http.ResponseWriter, r *http.Request, _ *middleware.Result) { parseAndPanic(r) }),
				middleware.WithRejectHandler(func(_ http.ResponseWriter, r *http.Request, _ middleware.Rejection) { parseAndPanic(r) }))
			var seen string
			recovering := func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					defer func() {
						if v := recover(); v != nil {
							seen = formtest.Describe(r)
							w.WriteHeader(http.StatusInternalServerError)
						}
					}()
					next.ServeHTTP(w, r)
				})
			}
			srv := formtest.NewServer(t, formtest.Routes(t, "ServeMux", recovering, m.Handler, func(http.ResponseWriter, *http.Request) {}))
			if c.warm {
				srv.Do("GET", "/items/1", "", nil) // the policy's one unit
			}
			ct, body := formtest.Multipart(t)
			srv.Do("POST", "/items/7", ct, body)
			if want := `form map[a:[1]] post map[a:[1]] multipart map[a:[1]] [f=f.txt(4096)] pattern "" id ""`; seen != want {
				t.Errorf("the caller saw %s\nwant %s", seen, want)
			}
			if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
				t.Errorf("%d files left on disk, want none", len(entries))
			}
		})
	}
}
