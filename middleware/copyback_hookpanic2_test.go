package middleware_test

import (
	"errors"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/formtest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestHookPanicLeavesNoFile: the user callbacks other than next and the
// refusal handlers (see TestRefusalHandlerPanicLeavesNoFile) that are
// handed the request or a copy of it, and may parse its multipart form
// (a key function keying by the user name, as the README's loginName),
// then panic, by a bug a caller further out recovers: the caller gets the
// form, and net/http removes its files. The shadow report was handed the
// copy next would have been, and a key function asked for a route it did
// not know yet was retried on a copy carrying the route: what they set
// on those copies was given back only once they returned. The error
// handler, a CountIf and an observer are handed the request itself, or
// the copy next is, whose give-back is deferred already. Through a
// ServeMux under net/http, and chi (whose middlewares are served a copy
// of its own, whose files are left with or without the middleware).
func TestHookPanicLeavesNoFile(t *testing.T) {
	parseAndPanic := func(t *testing.T, r *http.Request) {
		if err := r.ParseMultipartForm(1); err != nil {
			t.Errorf("ParseMultipartForm: %v", err)
		}
		panic("hook bug")
	}
	deny := policy.Must(policy.Per("p", 1, time.Hour, constKey))
	for _, c := range []struct {
		name   string
		warm   bool // the policy's one unit spent first
		policy func(t *testing.T) *policy.Policy
		opts   func(t *testing.T) []middleware.Option
	}{
		{"shadow report", true,
			func(*testing.T) *policy.Policy { return deny },
			func(t *testing.T) []middleware.Option {
				return []middleware.Option{middleware.WithShadow(func(r *http.Request, _ *middleware.Result) { parseAndPanic(t, r) })}
			}},
		{"shadow report, store failing", false,
			func(*testing.T) *policy.Policy { return deny },
			func(t *testing.T) []middleware.Option {
				return []middleware.Option{
					middleware.WithShadow(func(r *http.Request, _ *middleware.Result) { parseAndPanic(t, r) }),
					middleware.OnStoreError(middleware.FailClosed(time.Second)),
				}
			}},
		{"key function asked for the route", false,
			func(t *testing.T) *policy.Policy {
				name := func(r *http.Request) (string, error) { parseAndPanic(t, r); return "", nil }
				return policy.Must(policy.Per("p", 1, time.Hour, keyfunc.Must(keyfunc.Join(keyfunc.Route(), name))))
			},
			func(*testing.T) []middleware.Option {
				return []middleware.Option{middleware.WithPatternFunc(func(*http.Request) string { return "/items/{id}" })}
			}},
		{"key function", false,
			func(t *testing.T) *policy.Policy {
				return policy.Must(policy.Per("p", 1, time.Hour, func(r *http.Request) (string, error) { parseAndPanic(t, r); return "", nil }))
			},
			func(*testing.T) []middleware.Option { return nil }},
		{"cost function", false,
			func(t *testing.T) *policy.Policy {
				return policy.Must(policy.Per("p", 1, time.Hour, constKey,
					policy.WithCost(func(r *http.Request) int64 { parseAndPanic(t, r); return 1 })))
			},
			func(*testing.T) []middleware.Option { return nil }},
		{"error handler", false,
			func(*testing.T) *policy.Policy {
				return policy.Must(policy.Per("p", 1, time.Hour, func(*http.Request) (string, error) { return "", errors.New("no key") }))
			},
			func(t *testing.T) []middleware.Option {
				return []middleware.Option{middleware.WithErrorHandler(func(r *http.Request, _ error) { parseAndPanic(t, r) })}
			}},
		{"count if", false,
			func(t *testing.T) *policy.Policy {
				return policy.Must(policy.Per("p", 1, time.Hour, constKey,
					policy.CountIf(func(r *http.Request, _ int) bool { parseAndPanic(t, r); return true })))
			},
			func(*testing.T) []middleware.Option { return nil }},
		{"observer", false,
			func(*testing.T) *policy.Policy { return deny },
			func(t *testing.T) []middleware.Option {
				return []middleware.Option{middleware.WithObserver(observerFunc(func(e middleware.Event) { parseAndPanic(t, e.Request) }))}
			}},
	} {
		for _, router := range []string{"ServeMux", "chi"} {
			t.Run(router+"/"+c.name, func(t *testing.T) {
				tmp := t.TempDir()
				t.Setenv("TMPDIR", tmp)
				var store algorithms.Store
				if c.name == "shadow report, store failing" {
					store = &failing{}
				} else {
					store, _ = newStore(t)
				}
				m := middleware.MustNew(store, []*policy.Policy{c.policy(t)}, c.opts(t)...)
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
				srv := formtest.NewServer(t, formtest.Routes(t, router, recovering, m.Handler, func(http.ResponseWriter, *http.Request) {}))
				if c.warm {
					srv.Do("GET", "/items/1", "", nil)
				}
				ct, body := formtest.Multipart(t)
				srv.Do("POST", "/items/7", ct, body)
				want := `form map[a:[1]] post map[a:[1]] multipart map[a:[1]] [f=f.txt(4096)] pattern "" id ""`
				if c.name == "count if" {
					// Called once next is done: the router had routed the
					// copy it was handed, as it would the caller's.
					want = map[string]string{
						"ServeMux": `form map[a:[1]] post map[a:[1]] multipart map[a:[1]] [f=f.txt(4096)] pattern "POST /items/{id}" id "7"`,
						"chi":      `form map[a:[1]] post map[a:[1]] multipart map[a:[1]] [f=f.txt(4096)] pattern "/items/{id}" id "7"`,
					}[router]
				}
				if seen != want {
					t.Errorf("the caller saw %s\nwant %s", seen, want)
				}
				if router == "chi" {
					return // chi's copy's files are left with or without the middleware
				}
				if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
					t.Errorf("%d files left on disk, want none", len(entries))
				}
			})
		}
	}
}

// observerFunc is an Observer whose ObserveRequest is a function.
type observerFunc func(middleware.Event)

func (f observerFunc) ObserveRequest(e middleware.Event) { f(e) }
func (observerFunc) ObserveState(_, _ middleware.State)  {}
func (observerFunc) ObserveLimit(string, int64, int64)   {}
