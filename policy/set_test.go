package policy_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

func TestNewSetErrors(t *testing.T) {
	a := policy.Must(policy.PerSecond("a", 1, remoteKey))
	a2 := policy.Must(policy.PerMinute("a", 1, remoteKey))
	many := make([]*policy.Policy, policy.MaxPolicies+1)
	for i := range many {
		many[i] = policy.Must(policy.PerSecond("p"+strconv.Itoa(i), 1, remoteKey))
	}
	tests := []struct {
		name     string
		policies []*policy.Policy
		opts     []policy.SetOption
		field    string
	}{
		{"empty", nil, nil, "Policies"},
		{"too many", many, nil, "Policies"},
		{"nil policy", []*policy.Policy{a, nil}, nil, "Policies"},
		{"zero policy", []*policy.Policy{{}}, nil, "Policies"},
		{"duplicate name", []*policy.Policy{a, a2}, nil, "Name"},
		{"nil option", []*policy.Policy{a}, []policy.SetOption{nil}, "Options"},
		{"nil pattern func", []*policy.Policy{a}, []policy.SetOption{policy.WithPatternFunc(nil)}, "PatternFunc"},
	}
	for _, tt := range tests {
		_, err := policy.NewSet(tt.policies, tt.opts...)
		var pe *policy.Error
		if !errors.As(err, &pe) || pe.Field != tt.field {
			t.Errorf("%s: NewSet error = %v, want a *policy.Error on field %s", tt.name, err, tt.field)
		}
	}
	if s, err := policy.NewSet(many[:policy.MaxPolicies]); err != nil || s.Len() != policy.MaxPolicies {
		t.Errorf("NewSet(64 policies) = %v, %v", s, err)
	}
}

func TestPolicyHeader(t *testing.T) {
	sec := policy.Must(policy.PerSecond("per-second", 10, remoteKey))
	min := policy.Must(policy.PerMinute("per-minute", 100, remoteKey))
	login := policy.Must(policy.PerMinute("login", 5, remoteKey, policy.WithRoutes("POST /login")))
	s, err := policy.NewSet([]*policy.Policy{sec, min, login})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		mask      uint64
		ietf, old string
	}{
		{0b111, `"per-second";q=10;w=1, "per-minute";q=100;w=60, "login";q=5;w=60`, `10;w=1, 100;w=60, 5;w=60`},
		{0b011, `"per-second";q=10;w=1, "per-minute";q=100;w=60`, `10;w=1, 100;w=60`},
		{0b100, `"login";q=5;w=60`, `5;w=60`},
		{0b011, `"per-second";q=10;w=1, "per-minute";q=100;w=60`, `10;w=1, 100;w=60`}, // cached
		{0, ``, ``},
	}
	for _, tt := range tests {
		if got := s.PolicyHeader(tt.mask); got != tt.ietf {
			t.Errorf("PolicyHeader(%b) = %s, want %s", tt.mask, got, tt.ietf)
		}
		if got := s.LegacyPolicyHeader(tt.mask); got != tt.old {
			t.Errorf("LegacyPolicyHeader(%b) = %s, want %s", tt.mask, got, tt.old)
		}
	}
	if got := s.Policies(); len(got) != 3 || got[2] != login {
		t.Errorf("Policies() = %v", got)
	}
}

func TestMatchPattern(t *testing.T) {
	sec := policy.Must(policy.PerSecond("per-second", 10, remoteKey))
	login := policy.Must(policy.PerMinute("login", 5, remoteKey, policy.WithRoutes("POST /login")))
	lookups := 0
	s, err := policy.NewSet([]*policy.Policy{sec, login}, policy.WithPatternFunc(func(r *http.Request) string {
		lookups++
		return r.Header.Get("X-Pattern")
	}))
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("POST", "/login", nil)
	r.Header.Set("X-Pattern", "/login")
	if got := s.Match(r); got != 0b11 {
		t.Errorf("Match(POST /login) = %b, want 11", got)
	}
	r.Header.Set("X-Pattern", "/other")
	if got := s.Match(r); got != 0b01 {
		t.Errorf("Match(POST /other) = %b, want 01", got)
	}
	if lookups != 2 {
		t.Errorf("pattern looked up %d times for 2 matches, want 2", lookups)
	}

	// Without routes the pattern is never looked up.
	s2, _ := policy.NewSet([]*policy.Policy{sec}, policy.WithPatternFunc(func(*http.Request) string {
		t.Error("pattern looked up for a set without routes")
		return ""
	}))
	if got := s2.Match(r); got != 1 {
		t.Errorf("Match = %b, want 1", got)
	}
}

func TestDefaultPatternStdlib(t *testing.T) {
	login := policy.Must(policy.PerMinute("login", 5, remoteKey, policy.WithRoutes("POST /login", "/users/{id}")))
	s, _ := policy.NewSet([]*policy.Policy{login})
	mux := http.NewServeMux()
	var got []uint64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = append(got, s.Match(r)) })
	mux.Handle("POST /login", h)
	mux.Handle("/users/{id}", h)
	mux.Handle("/", h)
	for _, target := range []string{"/login", "/users/7", "/elsewhere"} {
		mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", target, nil))
	}
	if want := []uint64{1, 1, 0}; !slices.Equal(got, want) {
		t.Errorf("Match inside ServeMux = %v, want %v", got, want)
	}

	// Before the mux routes, ServeMuxPattern asks it.
	s2, _ := policy.NewSet([]*policy.Policy{login}, policy.WithPatternFunc(policy.ServeMuxPattern(mux)))
	got = nil
	for _, target := range []string{"/login", "/users/7", "/elsewhere"} {
		got = append(got, s2.Match(httptest.NewRequest("POST", target, nil)))
	}
	if want := []uint64{1, 1, 0}; !slices.Equal(got, want) {
		t.Errorf("Match with ServeMuxPattern = %v, want %v", got, want)
	}
	if got := s.Match(httptest.NewRequest("POST", "/login", nil)); got != 0 {
		t.Errorf("Match before routing = %b, want 0", got)
	}
}

func TestPrepareTake(t *testing.T) {
	sec := policy.Must(policy.PerSecond("per-second", 10, remoteKey))
	min := policy.Must(policy.PerMinute("per-minute", 100, remoteKey))
	user := policy.Must(policy.PerMinute("user", 5, userKey, policy.OnKeyError(policy.SkipPolicy)))
	s, _ := policy.NewSet([]*policy.Policy{sec, min, user})
	for _, into := range []bool{false, true} {
		t.Run("into="+strconv.FormatBool(into), func(t *testing.T) {
			var store algorithms.Store
			fs := &fakeStore{remain: 3}
			store = fs
			var is *intoStore
			if into {
				is = &intoStore{fakeStore: fakeStore{remain: 3}}
				fs, store = &is.fakeStore, is
			}
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = "192.0.2.1:1234"
			var res policy.Result
			if err := s.Prepare(r, s.Match(r), &res); err != nil {
				t.Fatal(err)
			}
			// The user policy is skipped: no X-User.
			if res.Len() != 2 || res.Mask() != 0b011 || res.SkippedMask() != 0b100 {
				t.Fatalf("Prepare: Len %d Mask %b Skipped %b, want 2, 11, 100", res.Len(), res.Mask(), res.SkippedMask())
			}
			if res.Allowed() || res.Taken() || res.Decision(0) != (algorithms.Decision{}) || res.Lowest() != -1 {
				t.Error("Result reports decisions before Take")
			}
			if err := res.Take(context.Background(), store); err != nil {
				t.Fatal(err)
			}
			if len(fs.calls) != 1 || len(fs.calls[0]) != 2 {
				t.Fatalf("store calls = %v, want one call with 2 checks", fs.calls)
			}
			if into && is.into != 1 {
				t.Errorf("TakeInto called %d times, want 1", is.into)
			}
			for i, want := range []string{"per-second:192.0.2.1:1234", "per-minute:192.0.2.1:1234"} {
				if got := res.Key(i); got != want || fs.calls[0][i].Key != want {
					t.Errorf("Key(%d) = %q (store saw %q), want %q", i, got, fs.calls[0][i].Key, want)
				}
				if res.Cost(i) != 1 {
					t.Errorf("Cost(%d) = %d, want 1", i, res.Cost(i))
				}
			}
			if !res.Allowed() || res.Decision(1).Remaining != 4 || res.Policy(1) != min || res.Set() != s {
				t.Errorf("after Take: Allowed %v Decision(1) %+v Policy(1) %s", res.Allowed(), res.Decision(1), res.Policy(1))
			}

			// With the user header the third policy joins; deny it.
			r.Header.Set("X-User", "ann")
			fs.deny = map[string]bool{"user:ann": true}
			fs.calls = nil
			if err := s.Prepare(r, s.Match(r), &res); err != nil {
				t.Fatal(err)
			}
			if err := res.Take(context.Background(), store); err != nil {
				t.Fatal(err)
			}
			if len(fs.calls) != 1 || len(fs.calls[0]) != 3 {
				t.Fatalf("store calls = %d, want one call with 3 checks", len(fs.calls))
			}
			if res.Allowed() {
				t.Error("Allowed() = true with a denied policy")
			}
			// The fake gives check i RetryAfter (i+1)·1.5s and NextAfter (i+1)s.
			if got, want := res.RetryAfter(), 4500*time.Millisecond; got != want {
				t.Errorf("RetryAfter() = %v, want %v", got, want)
			}
			if got := res.Lowest(); got != 2 {
				t.Errorf("Lowest() = %d, want 2 (the denied policy)", got)
			}
		})
	}
}

func TestPrepareErrors(t *testing.T) {
	strict := policy.Must(policy.PerMinute("strict", 5, userKey, policy.OnKeyError(policy.RejectForbidden)))
	costly := policy.Must(policy.PerMinute("costly", 5, remoteKey, policy.WithCost(func(r *http.Request) int64 {
		n, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
		return n
	})))
	s, _ := policy.NewSet([]*policy.Policy{costly, strict})
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-Cost", "2")
	var res policy.Result
	err := s.Prepare(r, s.Match(r), &res)
	var ke *policy.KeyError
	if !errors.As(err, &ke) || ke.Policy != strict || ke.Action.Status() != 403 || !errors.Is(err, policy.ErrKey) {
		t.Fatalf("Prepare without user = %v, want a KeyError for strict with 403", err)
	}
	if !strings.Contains(err.Error(), `"strict"`) || !strings.Contains(err.Error(), "no user") {
		t.Errorf("KeyError text %q names neither the policy nor the cause", err)
	}
	if res.Len() != 0 {
		t.Errorf("Len() after a KeyError = %d, want 0", res.Len())
	}
	r.Header.Set("X-User", "bob")
	if err := s.Prepare(r, s.Match(r), &res); err != nil || res.Cost(0) != 2 {
		t.Fatalf("Prepare = %v, cost %d; want nil, 2", err, res.Cost(0))
	}
	r.Header.Set("X-Cost", "5") // the whole capacity, in one request
	if err := s.Prepare(r, s.Match(r), &res); err != nil || res.Cost(0) != 5 {
		t.Errorf("Prepare with cost 5 of 5 = %v, cost %d; want nil, 5", err, res.Cost(0))
	}
	for _, c := range []string{"0", "-1", "6"} {
		r.Header.Set("X-Cost", c)
		err := s.Prepare(r, s.Match(r), &res)
		var ce *policy.CostError
		if !errors.As(err, &ce) || ce.Policy != costly || !errors.Is(err, policy.ErrCost) || !strings.Contains(err.Error(), c) {
			t.Errorf("Prepare with cost %s = %v, want a CostError", c, err)
		}
	}
	// A store error is wrapped; so is a short answer.
	r.Header.Set("X-Cost", "1")
	_ = s.Prepare(r, s.Match(r), &res)
	boom := errors.New("boom")
	if err := res.Take(context.Background(), &fakeStore{err: boom}); !errors.Is(err, boom) || res.Taken() {
		t.Errorf("Take with a failing store = %v, taken %v", err, res.Taken())
	}
	if err := res.Take(context.Background(), &intoStore{fakeStore: fakeStore{err: boom}}); !errors.Is(err, boom) {
		t.Errorf("TakeInto with a failing store = %v", err)
	}
	if err := res.Take(context.Background(), &fakeStore{short: true}); err == nil {
		t.Error("Take with a store answering too few decisions succeeded")
	}
	// Nothing to check: no store call.
	var empty policy.Result
	if err := s.Prepare(r, 0, &empty); err != nil {
		t.Fatal(err)
	}
	if err := empty.Take(context.Background(), nil); err != nil || !empty.Allowed() {
		t.Errorf("Take of an empty Result = %v, allowed %v", err, empty.Allowed())
	}
}

func TestManyPolicies(t *testing.T) {
	var ps []*policy.Policy
	for i := range 6 {
		ps = append(ps, policy.Must(policy.PerSecond("p"+strconv.Itoa(i), 10, remoteKey)))
	}
	s, _ := policy.NewSet(ps)
	r := httptest.NewRequest("GET", "/", nil)
	fs := &intoStore{}
	var res policy.Result
	for range 2 { // reuse
		if err := s.Prepare(r, s.Match(r), &res); err != nil {
			t.Fatal(err)
		}
		if err := res.Take(context.Background(), fs); err != nil {
			t.Fatal(err)
		}
		if res.Len() != 6 || res.Key(5) != "p5:192.0.2.1:1234" || !res.Allowed() {
			t.Errorf("6 policies: Len %d Key(5) %q", res.Len(), res.Key(5))
		}
	}
}

func TestSharedKeyFuncCalledOnce(t *testing.T) {
	calls := 0
	counted := func(r *http.Request) (string, error) { calls++; return "k", nil }
	other := func(r *http.Request) (string, error) { calls++; return "k", nil }
	s, _ := policy.NewSet([]*policy.Policy{
		policy.Must(policy.PerSecond("a", 10, counted)),
		policy.Must(policy.PerMinute("b", 100, counted)),
		policy.Must(policy.PerHour("c", 1000, other)),
		policy.Must(policy.PerDay("d", 10000, counted)),
	})
	var res policy.Result
	r := httptest.NewRequest("GET", "/", nil)
	if err := s.Prepare(r, s.Match(r), &res); err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Errorf("key functions called %d times for 4 policies sharing 2 functions, want 2", calls)
	}
	for i, want := range []string{"a:k", "b:k", "c:k", "d:k"} {
		if got := res.Key(i); got != want {
			t.Errorf("Key(%d) = %q, want %q", i, got, want)
		}
	}
	// Without the first policy the shared function is still called once.
	calls = 0
	if err := s.Prepare(r, 0b1010, &res); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || res.Key(0) != "b:k" || res.Key(1) != "d:k" {
		t.Errorf("mask 1010: %d calls, keys %q %q", calls, res.Key(0), res.Key(1))
	}
}

// oneFake is a store with a single-check fast path.
type oneFake struct {
	fakeStore
	ones int
}

func (s *oneFake) TakeOne(ctx context.Context, c algorithms.Check) (algorithms.Decision, error) {
	s.ones++
	if s.err != nil {
		return algorithms.Decision{}, s.err
	}
	return algorithms.Decision{Allowed: true, Limit: c.Spec.Limit, Remaining: 1, Delay: 3 * time.Second}, nil
}

func TestTakeOneAndLargeSets(t *testing.T) {
	p := policy.Must(policy.PerSecond("solo", 10, remoteKey))
	s, _ := policy.NewSet([]*policy.Policy{p})
	r := httptest.NewRequest("GET", "/", nil)
	var res policy.Result
	_ = s.Prepare(r, s.Match(r), &res)
	store := &oneFake{}
	if err := res.Take(context.Background(), store); err != nil || store.ones != 1 || len(store.calls) != 0 {
		t.Fatalf("Take of one check: err %v, TakeOne %d calls, Take %d calls", err, store.ones, len(store.calls))
	}
	if res.Delay() != 3*time.Second || res.RetryAfter() != 0 || !res.Allowed() {
		t.Errorf("Delay %v RetryAfter %v Allowed %v", res.Delay(), res.RetryAfter(), res.Allowed())
	}
	boom := errors.New("boom")
	if err := res.Take(context.Background(), &oneFake{fakeStore: fakeStore{err: boom}}); !errors.Is(err, boom) || res.Taken() || res.Delay() != 0 || res.RetryAfter() != 0 {
		t.Errorf("failing TakeOne: %v", err)
	}
	if p.Capacity() != 10 || p.WindowSeconds() != 1 {
		t.Errorf("Capacity %d WindowSeconds %d", p.Capacity(), p.WindowSeconds())
	}

	// More checks than the pooled buffer holds; more subsets than the
	// header cache keeps.
	var ps []*policy.Policy
	for i := range 20 {
		ps = append(ps, policy.Must(policy.PerSecond("p"+strconv.Itoa(i), 10, remoteKey)))
	}
	big, _ := policy.NewSet(ps)
	if err := big.Prepare(r, big.Match(r), &res); err != nil {
		t.Fatal(err)
	}
	fs := &intoStore{}
	if err := res.Take(context.Background(), fs); err != nil || res.Len() != 20 || fs.into != 1 || res.Key(19) != "p19:192.0.2.1:1234" {
		t.Errorf("20 policies: %v, Len %d, TakeInto calls %d", err, res.Len(), fs.into)
	}
	for mask := uint64(1); mask <= 1100; mask++ {
		h := big.PolicyHeader(mask)
		if want := strings.Count(strconv.FormatUint(mask, 2), "1"); strings.Count(h, `";q=`) != want {
			t.Fatalf("PolicyHeader(%b) = %s: %d members, want %d", mask, h, strings.Count(h, `";q=`), want)
		}
	}
}

func TestRoutePatternChi(t *testing.T) {
	p := policy.Must(policy.PerSecond("users", 10, remoteKey, policy.WithRoutes("GET /users/{id}")))
	s, _ := policy.NewSet([]*policy.Policy{p})
	var got []uint64
	var patterns []string
	r := chi.NewRouter()
	r.Route("/users", func(r chi.Router) {
		r.Get("/{id}", func(w http.ResponseWriter, req *http.Request) {
			got = append(got, s.Match(req))
			patterns = append(patterns, policy.RoutePattern(req))
		})
	})
	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/users/7", nil))
	if len(got) != 1 || got[0] != 1 || patterns[0] != "/users/{id}" {
		t.Errorf("inside chi: Match %v, RoutePattern %q", got, patterns)
	}
	// Only chi's route context, no r.Pattern: read through keyfunc.Route.
	rctx := chi.NewRouteContext()
	rctx.RoutePatterns = []string{"/users/*", "/{id}"}
	req := httptest.NewRequest("GET", "/users/7", nil)
	req = req.WithContext(context.WithValue(req.Context(), chi.RouteCtxKey, rctx))
	if got := policy.RoutePattern(req); got != "/users/{id}" {
		t.Errorf("RoutePattern from chi's context = %q", got)
	}
}

// TestMatchHEADRules: a GET route or method covers HEAD only as ServeMux
// does, when nothing more specific names HEAD: a rule table with its own
// HEAD entry for the path (or its own HEAD method policy) keeps HEAD
// requests to that entry, and a request ServeMux routed to an explicit
// "HEAD /x" pattern is not under a "GET /x" route.
func TestMatchHEADRules(t *testing.T) {
	getX := policy.Must(policy.PerMinute("get-x", 1, remoteKey, policy.WithRoutes("GET /x")))
	headX := policy.Must(policy.PerMinute("head-x", 100, remoteKey, policy.WithRoutes("HEAD /x")))
	getY := policy.Must(policy.PerMinute("get-y", 1, remoteKey, policy.WithRoutes("GET /y")))
	s := headerPatternSet(t, getX, headX, getY)
	checkMatches(t, s, []matchCase{
		{"GET", "/x", 0b001},
		{"HEAD", "/x", 0b010}, // the table's own HEAD rule, not the GET one too
		{"GET", "/y", 0b100},
		{"HEAD", "/y", 0b100}, // no HEAD rule for /y: the GET one covers it
	})

	// Methods alike: a policy on HEAD takes HEAD from the one on GET.
	gets := policy.Must(policy.PerMinute("gets", 1, remoteKey, policy.WithMethods("GET")))
	heads := policy.Must(policy.PerMinute("heads", 100, remoteKey, policy.WithMethods("HEAD")))
	s2, _ := policy.NewSet([]*policy.Policy{gets, heads})
	if got := s2.Match(httptest.NewRequest("HEAD", "/", nil)); got != 0b10 {
		t.Errorf("Match(HEAD) with GET and HEAD method policies = %02b, want 10", got)
	}
	s3, _ := policy.NewSet([]*policy.Policy{gets})
	if got := s3.Match(httptest.NewRequest("HEAD", "/", nil)); got != 1 {
		t.Errorf("Match(HEAD) with a GET method policy = %b, want 1", got)
	}

	// ServeMux: HEAD goes to an explicit "HEAD /x" handler, which a
	// policy on "GET /x" does not cover; to "GET /z", it does.
	mux := http.NewServeMux()
	var got []uint64
	s4, _ := policy.NewSet([]*policy.Policy{getX, policy.Must(policy.PerMinute("get-z", 1, remoteKey, policy.WithRoutes("GET /z")))})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = append(got, s4.Match(r)) })
	mux.Handle("GET /x", h)
	mux.Handle("HEAD /x", h)
	mux.Handle("GET /z", h)
	for _, target := range []string{"/x", "/z"} {
		for _, method := range []string{"GET", "HEAD"} {
			mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, target, nil))
		}
	}
	if want := []uint64{0b01, 0, 0b10, 0b10}; !slices.Equal(got, want) {
		t.Errorf("Match inside ServeMux (GET /x, HEAD /x, GET /z, HEAD /z) = %v, want %v", got, want)
	}
}

// TestRoutePatternServeMuxHost: RoutePattern and ServeMuxPattern agree,
// and report a ServeMux pattern as registered, its method and host kept
// (the host identifies the route: see TestRouteKeyServeMuxHostBothPlacements).
func TestRoutePatternServeMuxHost(t *testing.T) {
	mux := http.NewServeMux()
	var got []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = append(got, policy.RoutePattern(r)) })
	mux.Handle("HEAD example.com/x", h)
	mux.Handle("example.com/y/{id}", h)
	mux.Handle("GET /z", h)
	for _, target := range []string{"http://example.com/x", "http://example.com/y/1", "/z"} {
		r := httptest.NewRequest("HEAD", target, nil)
		mux.ServeHTTP(httptest.NewRecorder(), r)
		if p := policy.ServeMuxPattern(mux)(r); p != got[len(got)-1] {
			t.Errorf("%s: ServeMuxPattern %q, RoutePattern %q", target, p, got[len(got)-1])
		}
	}
	if want := []string{"HEAD example.com/x", "example.com/y/{id}", "GET /z"}; !slices.Equal(got, want) {
		t.Errorf("RoutePattern = %q, want %q", got, want)
	}
}

// TestRoutePatternChiRegexpSpace: a chi pattern is a path even when its
// regexp holds a space; it was cut at the space and matched no route.
func TestRoutePatternChiRegexpSpace(t *testing.T) {
	p := policy.Must(policy.PerMinute("names", 1, remoteKey, policy.WithRoutes("GET /names/{n:[a-z ]+}")))
	s, _ := policy.NewSet([]*policy.Policy{p})
	r := chi.NewRouter()
	var got []uint64
	r.Get("/names/{n:[a-z ]+}", func(w http.ResponseWriter, req *http.Request) { got = append(got, s.Match(req)) })
	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/names/a%20b", nil))
	if want := []uint64{1}; !slices.Equal(got, want) {
		t.Errorf("Match under chi pattern with a space = %v, want %v", got, want)
	}
}

// TestMatchOneKind: a Set whose policies are all of one kind (on methods,
// on a predicate, on routes, or on nothing) matches each request as its
// policies' Applies say, not all of them at once: only a Set with no
// methods, routes or predicate anywhere applies whole to every request.
func TestMatchOneKind(t *testing.T) {
	posts := policy.Must(policy.PerMinute("posts", 5, remoteKey, policy.WithMethods("POST")))
	puts := policy.Must(policy.PerMinute("puts", 5, remoteKey, policy.WithMethods("PUT")))
	api := policy.Must(policy.PerMinute("api", 5, remoteKey, policy.WithMatch(func(r *http.Request) bool { return r.Header.Get("X-Api") != "" })))
	login := policy.Must(policy.PerMinute("login", 5, remoteKey, policy.WithRoutes("/login")))
	sec := policy.Must(policy.PerSecond("sec", 5, remoteKey))
	min := policy.Must(policy.PerMinute("min", 5, remoteKey))
	pattern := policy.WithPatternFunc(func(r *http.Request) string { return r.URL.Path })
	for _, tt := range []struct {
		name     string
		policies []*policy.Policy
		method   string
		path     string
		api      bool
		want     uint64
	}{
		{"methods, GET", []*policy.Policy{posts, puts}, "GET", "/", false, 0b00},
		{"methods, PUT", []*policy.Policy{posts, puts}, "PUT", "/", false, 0b10},
		{"predicate, without", []*policy.Policy{api}, "GET", "/", false, 0},
		{"predicate, with", []*policy.Policy{api}, "GET", "/", true, 1},
		{"routes, other", []*policy.Policy{login}, "GET", "/x", false, 0},
		{"routes, on", []*policy.Policy{login}, "GET", "/login", false, 1},
		{"plain", []*policy.Policy{sec, min}, "DELETE", "/x", false, 0b11},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := policy.NewSet(tt.policies, pattern)
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest(tt.method, tt.path, nil)
			if tt.api {
				r.Header.Set("X-Api", "1")
			}
			if got := s.Match(r); got != tt.want {
				t.Errorf("Match(%s %s) = %b, want %b", tt.method, tt.path, got, tt.want)
			}
		})
	}
}

// TestMatchHEADRouteElsewhere: a policy with a HEAD route takes HEAD from
// the GET routes of that route's path only. A HEAD request to /y, which
// it applies to through its GET route on /y (its HEAD route being on /x),
// leaves the other policies' GET routes on /y covering HEAD too.
func TestMatchHEADRouteElsewhere(t *testing.T) {
	headXGetY := policy.Must(policy.PerMinute("head-x-get-y", 100, remoteKey, policy.WithRoutes("HEAD /x", "GET /y")))
	getY := policy.Must(policy.PerMinute("get-y", 1, remoteKey, policy.WithRoutes("GET /y")))
	s := headerPatternSet(t, headXGetY, getY)
	checkMatches(t, s, []matchCase{
		{"HEAD", "/y", 0b11},
		{"HEAD", "/x", 0b01},
		{"GET", "/y", 0b11},
	})
}

// TestPolicyHeaderCached: the header values of a subset are built once:
// asked again, for the whole Set or for a subset asked before, they cost
// no allocation.
func TestPolicyHeaderCached(t *testing.T) {
	a := policy.Must(policy.PerSecond("a", 10, remoteKey))
	b := policy.Must(policy.PerMinute("b", 100, remoteKey))
	c := policy.Must(policy.PerHour("c", 100, remoteKey))
	s, err := policy.NewSet([]*policy.Policy{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	for _, mask := range []uint64{0b111, 0b011, 0b110, 0} {
		ietf, old := s.PolicyHeader(mask), s.LegacyPolicyHeader(mask)
		allocs := testing.AllocsPerRun(10, func() {
			if s.PolicyHeader(mask) != ietf || s.LegacyPolicyHeader(mask) != old {
				t.Fatalf("the headers of %03b changed when asked again", mask)
			}
		})
		if allocs != 0 {
			t.Errorf("PolicyHeader and LegacyPolicyHeader(%03b), asked again: %v allocations, want 0 (cached)", mask, allocs)
		}
	}
}

// TestMatchHEADEntriesAmongThemselves: among the policies holding HEAD
// entries, decided first, a GET route leaves HEAD to another's HEAD route
// on its path: with one policy on "GET /x" and "HEAD /y" and another on
// "HEAD /x", HEAD /x is under the second only, HEAD /y under the first.
func TestMatchHEADEntriesAmongThemselves(t *testing.T) {
	getXHeadY := policy.Must(policy.PerMinute("get-x-head-y", 1, remoteKey, policy.WithRoutes("GET /x", "HEAD /y")))
	headX := policy.Must(policy.PerMinute("head-x", 100, remoteKey, policy.WithRoutes("HEAD /x")))
	s := headerPatternSet(t, getXHeadY, headX)
	checkMatches(t, s, []matchCase{
		{"HEAD", "/x", 0b10},
		{"HEAD", "/y", 0b01},
		{"GET", "/x", 0b01},
	})

	// A HEAD route on /x/ is not on /x, though chi would report it so
	// (without its trailing slash): outside chi, HEAD /x is under both GET
	// /x routes, the one beside that HEAD route and the other policy's.
	getXHeadXSlash := policy.Must(policy.PerMinute("get-x-head-x-slash", 1, remoteKey, policy.WithRoutes("GET /x", "HEAD /x/")))
	getX := policy.Must(policy.PerMinute("get-x", 1, remoteKey, policy.WithRoutes("GET /x")))
	s = headerPatternSet(t, getXHeadXSlash, getX)
	r := httptest.NewRequest("HEAD", "/", nil)
	r.Header.Set("X-Pattern", "/x")
	if got := s.Match(r); got != 0b11 {
		t.Errorf("Match(HEAD /x) with GET /x and HEAD /x/ = %02b, want 11", got)
	}
}

// TestPrepareLookups: Prepare asks the Set's pattern function once at
// most, only for a key function that reads the route (keyfunc.Route) or a
// request carrying an outer router's pattern, and calls each key function
// once: a key function's error other than keyfunc.ErrNoRoute is not
// retried with the route.
func TestPrepareLookups(t *testing.T) {
	lookups, calls := 0, 0
	pattern := policy.WithPatternFunc(func(*http.Request) string { lookups++; return "GET /users/{id}" })
	counted := func(f keyfunc.Func) keyfunc.Func {
		return func(r *http.Request) (string, error) { calls++; return f(r) }
	}
	routeA := policy.Must(policy.PerMinute("route-a", 5, counted(keyfunc.Route())))
	routeB := policy.Must(policy.PerMinute("route-b", 5, counted(keyfunc.Route())))
	ip := policy.Must(policy.PerMinute("ip", 5, counted(remoteKey)))
	user := policy.Must(policy.PerMinute("user", 5, counted(userKey), policy.OnKeyError(policy.SkipPolicy)))
	for _, tt := range []struct {
		name     string
		policies []*policy.Policy
		outer    string // r.Pattern, an outer router's
		lookups  int
		calls    int
		keys     []string
	}{
		{"two route keys under an outer pattern", []*policy.Policy{routeA, routeB}, "/api/", 1, 2,
			[]string{"route-a:GET /users/{id}", "route-b:GET /users/{id}"}},
		{"no route key, before routing", []*policy.Policy{ip}, "", 0, 1, []string{"ip:192.0.2.1:1234"}},
		{"a failing key, before routing", []*policy.Policy{user, ip}, "", 0, 2, []string{"ip:192.0.2.1:1234"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := policy.NewSet(tt.policies, pattern)
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest("GET", "/users/1", nil)
			r.Pattern = tt.outer
			lookups, calls = 0, 0
			var res policy.Result
			if err := s.Prepare(r, 1<<len(tt.policies)-1, &res); err != nil {
				t.Fatal(err)
			}
			var keys []string
			for i := range res.Len() {
				keys = append(keys, res.Key(i))
			}
			if lookups != tt.lookups || calls != tt.calls || !slices.Equal(keys, tt.keys) {
				t.Errorf("Prepare: %d pattern lookups, %d key calls, keys %q; want %d, %d, %q",
					lookups, calls, keys, tt.lookups, tt.calls, tt.keys)
			}
		})
	}
}

// headerPatternSet returns the Set of ps whose pattern function reads the
// request's X-Pattern header.
func headerPatternSet(t *testing.T, ps ...*policy.Policy) *policy.Set {
	t.Helper()
	s, err := policy.NewSet(ps, policy.WithPatternFunc(func(r *http.Request) string {
		return r.Header.Get("X-Pattern")
	}))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A matchCase is a request, its method and its X-Pattern, and the mask
// Set.Match must give it.
type matchCase struct {
	method, pattern string
	want            uint64
}

// checkMatches checks Set.Match on each case (see headerPatternSet).
func checkMatches(t *testing.T, s *policy.Set, cases []matchCase) {
	t.Helper()
	for _, tt := range cases {
		r := httptest.NewRequest(tt.method, "/", nil)
		r.Header.Set("X-Pattern", tt.pattern)
		if got := s.Match(r); got != tt.want {
			t.Errorf("Match(%s %s) = %b, want %b", tt.method, tt.pattern, got, tt.want)
		}
	}
}
