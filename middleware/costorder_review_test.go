package middleware_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// costNames returns the names of the policies a *policy.CostError names,
// in its order, or nil when err is none.
func costNames(err error) []string {
	var ce *policy.CostError
	if !errors.As(err, &ce) {
		return nil
	}
	var names []string
	for p := range ce.All() {
		names = append(names, p.Name())
	}
	return names
}

// decodeProblem parses a problem+json body strictly.
func decodeProblem(t *testing.T, body string) problem {
	t.Helper()
	var p problem
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("body %q is not the problem object: %v", body, err)
	}
	return p
}

// TestCostErrorOrderThroughRouters: the order of Prepare's errors as a
// client sees it through a ServeMux and a chi router. A policy without a
// key that rejects (400) before the first policy the cost is out of wins:
// the request is answered 400, as before the change; after it, the 429
// names the policies the cost is out of, not that one. A SkipPolicy
// policy without a key is never named, nor a policy left out by its
// methods, routes or match function, nor one sharing a key function with
// a named one but whose cost is in range; a negative and a zero cost are
// out of range. Names with '.', '-' and '_' (the characters a name may
// hold besides letters and digits) come back intact from the JSON body.
func TestCostErrorOrderThroughRouters(t *testing.T) {
	cost := policy.WithCost(headerCost)
	for _, tc := range []struct {
		name     string
		policies func() []*policy.Policy
		header   []string
		status   int
		violated []string
	}{
		{"key error first", func() []*policy.Policy {
			return []*policy.Policy{
				fixed("by.user", 10, time.Minute, user, cost),
				fixed("medium", 10, time.Minute, remote, cost),
				fixed("small", 5, time.Minute, remote, cost),
			}
		}, []string{"X-Cost", "20"}, http.StatusBadRequest, nil},
		{"key error after", func() []*policy.Policy {
			return []*policy.Policy{
				fixed("medium", 10, time.Minute, remote, cost),
				fixed("by.user", 10, time.Minute, user, cost),
				fixed("small", 5, time.Minute, remote, cost),
			}
		}, []string{"X-Cost", "20"}, http.StatusTooManyRequests, []string{"medium", "small"}},
		{"skipped, left out, in range", func() []*policy.Policy {
			return []*policy.Policy{
				fixed("a-1", 10, time.Minute, remote, cost),
				fixed("skip_me", 1, time.Minute, user, cost, policy.OnKeyError(policy.SkipPolicy)),
				fixed("gets.only", 1, time.Minute, remote, cost, policy.WithMethods("GET")),
				fixed("other.route", 1, time.Minute, remote, cost, policy.WithRoutes("POST /other")),
				fixed("never", 1, time.Minute, remote, cost, policy.WithMatch(func(*http.Request) bool { return false })),
				fixed("roomy", 100, time.Minute, remote, cost),
				fixed("b_2", 5, time.Minute, remote, cost),
			}
		}, []string{"X-Cost", "20"}, http.StatusTooManyRequests, []string{"a-1", "b_2"}},
		{"negative", func() []*policy.Policy {
			return []*policy.Policy{
				fixed("medium", 10, time.Minute, remote, cost),
				fixed("free", 10, time.Minute, remote),
				fixed("small", 5, time.Minute, remote, cost),
			}
		}, []string{"X-Cost", "-3"}, http.StatusTooManyRequests, []string{"medium", "small"}},
		{"zero", func() []*policy.Policy {
			return []*policy.Policy{
				fixed("medium", 10, time.Minute, remote, cost),
				fixed("small", 5, time.Minute, remote, cost),
			}
		}, []string{"X-Cost", "0"}, http.StatusTooManyRequests, []string{"medium", "small"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, _ := newStore(t)
			m := middleware.MustNew(store, tc.policies(), middleware.WithPatternFunc(func(r *http.Request) string { return "POST /upload" }))
			for router, h := range costRouters(m) {
				w := serve(h, "POST", "/upload", tc.header...)
				if w.Code != tc.status {
					t.Fatalf("%s: status %d, want %d (body %s)", router, w.Code, tc.status, w.Body)
				}
				p := decodeProblem(t, w.Body.String())
				if !slices.Equal(p.Violated, tc.violated) {
					t.Errorf("%s: violated-policies %q, want %q", router, p.Violated, tc.violated)
				}
				for _, name := range tc.violated {
					if !strings.Contains(p.Detail, "policy "+name+" ") {
						t.Errorf("%s: detail %q does not name %s", router, p.Detail, name)
					}
				}
				if tc.status == http.StatusTooManyRequests {
					for _, f := range []string{"Retry-After", "RateLimit", "RateLimit-Policy"} {
						if v, ok := w.Header()[f]; ok {
							t.Errorf("%s: %s %q, want none", router, f, v)
						}
					}
					if w.Header().Get("Cache-Control") != "no-store" || w.Header().Get("Content-Type") != middleware.ContentTypeProblem {
						t.Errorf("%s: headers %v, want Cache-Control no-store and problem+json", router, w.Header())
					}
				}
			}
		})
	}
}

// TestCostErrorShadowed: in shadow mode a request whose cost is out of two
// policies' capacity reaches the handler (with no rate-limit header), the
// shadow report and the observer's ShadowDenied event carry the CostError
// naming both, the log's record says shadow and gives the error text, and
// the same holds with WithoutContext.
func TestCostErrorShadowed(t *testing.T) {
	const text = `policy: "medium": cost 20 exceeds the capacity 10; "small": cost 20 exceeds the capacity 5`
	for _, noCtx := range []bool{false, true} {
		store, _ := newStore(t)
		var reported, observed []string
		var outcomes []middleware.Outcome
		var buf bytes.Buffer
		lo, err := middleware.NewLogObserver(slog.New(slog.NewJSONHandler(&buf, nil)))
		if err != nil {
			t.Fatal(err)
		}
		opts := []middleware.Option{
			middleware.WithShadow(func(r *http.Request, res *middleware.Result) { reported = costNames(res.Err()) }),
			middleware.WithObserver(lo, errRecorder{request: func(e middleware.Event) {
				outcomes, observed = append(outcomes, e.Outcome), costNames(e.Result.Err())
			}}),
		}
		if noCtx {
			opts = append(opts, middleware.WithoutContext())
		}
		m := middleware.MustNew(store, costPolicies(), opts...)
		for router, h := range costRouters(m) {
			reported, observed, outcomes = nil, nil, nil
			buf.Reset()
			w := serve(h, "POST", "/upload", "X-Cost", "20")
			if w.Code != http.StatusOK || w.Body.String() != "stored" {
				t.Fatalf("noCtx %v %s: %d %q, want the handler's 200", noCtx, router, w.Code, w.Body)
			}
			if _, ok := w.Header()["Ratelimit"]; ok {
				t.Errorf("noCtx %v %s: RateLimit %q on an undecided request", noCtx, router, w.Header()["Ratelimit"])
			}
			want := []string{"medium", "small"}
			if !slices.Equal(reported, want) || !slices.Equal(observed, want) || !slices.Equal(outcomes, []middleware.Outcome{middleware.ShadowDenied}) {
				t.Errorf("noCtx %v %s: report %q, observer %q %v; want %q, one ShadowDenied", noCtx, router, reported, observed, outcomes, want)
			}
			var rec struct {
				Msg, Policy, Error string
				Shadow             bool
			}
			if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
				t.Fatalf("noCtx %v %s: log %q: %v", noCtx, router, buf.String(), err)
			}
			if rec.Msg != "ratekeeper: request denied" || rec.Policy != "medium" || rec.Error != text || !rec.Shadow {
				t.Errorf("noCtx %v %s: log %s, want a shadow denial of medium with %q", noCtx, router, buf.String(), text)
			}
		}
	}
}

// TestCostErrorHooks: the deny hook, with and without context, gets the
// CostError naming both policies, a Result without decisions, and (with
// context) finds that Result in its request's context; a policy without
// a key before them sends the request to the reject hook instead, with
// its KeyError, and the deny hook is not called.
func TestCostErrorHooks(t *testing.T) {
	for _, noCtx := range []bool{false, true} {
		store, _ := newStore(t)
		var denied, rejected []string
		var taken, inCtx bool
		opts := []middleware.Option{
			middleware.WithDenyHandler(func(w http.ResponseWriter, r *http.Request, res *middleware.Result) {
				denied, taken = costNames(res.Err()), res.Taken() || res.Len() != 0
				got, _ := middleware.FromContext(r.Context())
				inCtx = got == res
				w.WriteHeader(http.StatusTeapot)
			}),
			middleware.WithRejectHandler(func(w http.ResponseWriter, r *http.Request, rej middleware.Rejection) {
				var ke *policy.KeyError
				if errors.As(rej.Err, &ke) {
					rejected = append(rejected, ke.Policy.Name())
				}
				w.WriteHeader(rej.Status)
			}),
		}
		if noCtx {
			opts = append(opts, middleware.WithoutContext())
		}
		cost := policy.WithCost(headerCost)
		m := middleware.MustNew(store, []*policy.Policy{
			fixed("medium", 10, time.Minute, remote, cost),
			fixed("by-user", 10, time.Minute, user, cost, policy.WithMethods("PUT")),
			fixed("small", 5, time.Minute, remote, cost),
		}, opts...)
		mux := http.NewServeMux()
		mux.Handle("/upload", m.Handler(ok))
		if w := serve(mux, "POST", "/upload", "X-Cost", "20"); w.Code != http.StatusTeapot {
			t.Fatalf("noCtx %v: POST status %d, want the deny hook's 418", noCtx, w.Code)
		}
		if !slices.Equal(denied, []string{"medium", "small"}) || taken || inCtx == noCtx {
			t.Errorf("noCtx %v: deny hook saw %q taken %v in context %v; want medium, small, nothing taken, in context %v", noCtx, denied, taken, inCtx, !noCtx)
		}
		denied = nil
		// by-user applies to PUT only; medium's cost error is found first,
		// so the request without a user is refused for its cost.
		if w := serve(mux, "PUT", "/upload", "X-Cost", "20"); w.Code != http.StatusTeapot || len(rejected) != 0 {
			t.Errorf("noCtx %v: PUT status %d, reject hook %q; want 418 and no KeyError", noCtx, w.Code, rejected)
		}
		if !slices.Equal(denied, []string{"medium", "small"}) {
			t.Errorf("noCtx %v: PUT deny hook saw %q, want medium, small", noCtx, denied)
		}
	}
}

// TestCostErrorNested: an outer middleware admits a request costing 7
// (its policy's capacity is 10) and an inner one refuses it for its cost,
// naming its two policies (5 and 3) and not the outer's; a request costing
// 20 is refused by the outer one alone, naming its policy, the inner one
// never seeing it. Through chi (the outer with r.Use, the inner on a
// route group) and a ServeMux (handlers wrapped twice).
func TestCostErrorNested(t *testing.T) {
	cost := policy.WithCost(headerCost)
	var innerSaw int
	// pair returns an outer and an inner middleware on a store of their own.
	pair := func() (outer, inner *middleware.Middleware) {
		store, _ := newStore(t)
		outer = middleware.MustNew(store, []*policy.Policy{fixed("outer", 10, time.Minute, remote, cost)})
		inner = middleware.MustNew(store, []*policy.Policy{
			fixed("inner.a", 5, time.Minute, remote, cost),
			fixed("inner.b", 3, time.Minute, remote, cost),
		}, middleware.WithObserver(errRecorder{request: func(middleware.Event) { innerSaw++ }}))
		return outer, inner
	}
	up := func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("stored")) }
	outer, inner := pair()
	mux := http.NewServeMux()
	mux.Handle("POST /upload", outer.Handler(inner.Handler(http.HandlerFunc(up))))
	outer, inner = pair()
	r := chi.NewRouter()
	r.Use(outer.Handler)
	r.Group(func(r chi.Router) {
		r.Use(inner.Handler)
		r.Post("/upload", up)
	})
	for router, h := range map[string]http.Handler{"ServeMux": mux, "chi": r} {
		for _, tc := range []struct {
			cost     string
			violated []string
			inner    int
		}{
			{"7", []string{"inner.a", "inner.b"}, 1},
			{"20", []string{"outer"}, 0},
		} {
			innerSaw = 0
			w := serve(h, "POST", "/upload", "X-Cost", tc.cost)
			if w.Code != http.StatusTooManyRequests {
				t.Fatalf("%s cost %s: status %d, want 429", router, tc.cost, w.Code)
			}
			if p := decodeProblem(t, w.Body.String()); !slices.Equal(p.Violated, tc.violated) {
				t.Errorf("%s cost %s: violated-policies %q, want %q", router, tc.cost, p.Violated, tc.violated)
			}
			if innerSaw != tc.inner {
				t.Errorf("%s cost %s: the inner middleware observed %d requests, want %d", router, tc.cost, innerSaw, tc.inner)
			}
			if v := w.Header().Get("Retry-After"); v != "" {
				t.Errorf("%s cost %s: Retry-After %q on a request no wait admits", router, tc.cost, v)
			}
		}
	}
}
