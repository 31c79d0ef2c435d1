package policy_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// remoteKey keys by RemoteAddr as is.
var remoteKey keyfunc.Func = func(r *http.Request) (string, error) { return r.RemoteAddr, nil }

// userKey keys by the X-User header and fails without it.
var userKey keyfunc.Func = func(r *http.Request) (string, error) {
	if u := r.Header.Get("X-User"); u != "" {
		return u, nil
	}
	return "", errors.New("no user")
}

var perSecond = algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Second}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name   string
		pname  string
		spec   algorithms.Spec
		key    keyfunc.Func
		opts   []policy.Option
		field  string
		reason string
	}{
		{"empty name", "", perSecond, remoteKey, nil, "Name", "is empty"},
		{"quote in name", `a"b`, perSecond, remoteKey, nil, "Name", "contains"},
		{"colon in name", "a:b", perSecond, remoteKey, nil, "Name", "contains"},
		{"space in name", "a b", perSecond, remoteKey, nil, "Name", "contains"},
		{"long name", strings.Repeat("a", policy.MaxNameLen+1), perSecond, remoteKey, nil, "Name", "longer"},
		{"nil key", "p", perSecond, nil, nil, "Key", "is nil"},
		{"zero limit", "p", algorithms.Spec{Algorithm: algorithms.FixedWindow, Window: time.Second}, remoteKey, nil, "Spec.Limit", "must be positive"},
		{"no algorithm", "p", algorithms.Spec{Limit: 1, Window: time.Second}, remoteKey, nil, "Spec.Algorithm", "is empty"},
		{"burst on window", "p", perSecond, remoteKey, []policy.Option{policy.WithBurst(3)}, "Spec.Burst", "applies only"},
		{"nil option", "p", perSecond, remoteKey, []policy.Option{nil}, "Options", "nil"},
		{"nil cost", "p", perSecond, remoteKey, []policy.Option{policy.WithCost(nil)}, "Cost", "is nil"},
		{"nil match", "p", perSecond, remoteKey, []policy.Option{policy.WithMatch(nil)}, "Match", "is nil"},
		{"nil count", "p", perSecond, remoteKey, []policy.Option{policy.CountIf(nil)}, "CountIf", "is nil"},
		{"no methods", "p", perSecond, remoteKey, []policy.Option{policy.WithMethods()}, "Methods", "is empty"},
		{"bad method", "p", perSecond, remoteKey, []policy.Option{policy.WithMethods("PO ST")}, "Methods", "not a method"},
		{"empty method", "p", perSecond, remoteKey, []policy.Option{policy.WithMethods("")}, "Methods", "not a method"},
		{"no routes", "p", perSecond, remoteKey, []policy.Option{policy.WithRoutes()}, "Routes", "is empty"},
		{"relative route", "p", perSecond, remoteKey, []policy.Option{policy.WithRoutes("login")}, "Routes", "must start with '/'"},
		{"bad route method", "p", perSecond, remoteKey, []policy.Option{policy.WithRoutes("P(ST /login")}, "Routes", "not a method"},
		{"bad key action", "p", perSecond, remoteKey, []policy.Option{policy.OnKeyError(policy.KeyAction(9))}, "OnKeyError", "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := policy.New(tt.pname, tt.spec, tt.key, tt.opts...)
			if err == nil {
				t.Fatalf("New(%q) = %v, want error", tt.pname, p)
			}
			var pe *policy.Error
			if !errors.As(err, &pe) || !errors.Is(err, policy.ErrConfig) {
				t.Fatalf("New(%q) error %T %v, want *policy.Error", tt.pname, err, err)
			}
			if pe.Policy != tt.pname || pe.Field != tt.field || !strings.Contains(pe.Reason, tt.reason) {
				t.Errorf("New(%q) error = {%q %q %q}, want policy %q field %q reason containing %q",
					tt.pname, pe.Policy, pe.Field, pe.Reason, tt.pname, tt.field, tt.reason)
			}
			if !strings.HasPrefix(err.Error(), "policy: ") {
				t.Errorf("error %q does not start with the package name", err)
			}
		})
	}
}

func TestShorthandsAndMember(t *testing.T) {
	tests := []struct {
		p      *policy.Policy
		member string
		spec   algorithms.Spec
	}{
		{policy.Must(policy.PerSecond("per-second", 10, remoteKey)), `"per-second";q=10;w=1`,
			algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 10, Window: time.Second}},
		{policy.Must(policy.PerMinute("per-minute", 100, remoteKey)), `"per-minute";q=100;w=60`,
			algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 100, Window: time.Minute}},
		{policy.Must(policy.PerHour("h", 7, remoteKey, policy.WithAlgorithm(algorithms.FixedWindow))), `"h";q=7;w=3600`,
			algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 7, Window: time.Hour}},
		{policy.Must(policy.PerDay("d", 1000, remoteKey)), `"d";q=1000;w=86400`,
			algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 1000, Window: 24 * time.Hour}},
		// A window that is not whole seconds is rounded up; q is the capacity.
		{policy.Must(policy.Per("tb", 4, 1500*time.Millisecond, remoteKey, policy.WithAlgorithm(algorithms.TokenBucket), policy.WithBurst(9))), `"tb";q=9;w=2`,
			algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 4, Window: 1500 * time.Millisecond, Burst: 9}},
		{policy.Must(policy.Per("ms", 1, 10*time.Millisecond, remoteKey)), `"ms";q=1;w=1`,
			algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 1, Window: 10 * time.Millisecond}},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.member {
			t.Errorf("%s: String() = %s, want %s", tt.p.Name(), got, tt.member)
		}
		if got := tt.p.Spec(); got != tt.spec {
			t.Errorf("%s: Spec() = %v, want %v", tt.p.Name(), got, tt.spec)
		}
	}
}

func TestMustPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Must(nil, err) did not panic")
		}
	}()
	policy.Must(policy.PerSecond("", 1, remoteKey))
}

func TestApplies(t *testing.T) {
	login := policy.Must(policy.PerMinute("login", 5, remoteKey, policy.WithRoutes("POST /login", "/v2/login")))
	posts := policy.Must(policy.PerMinute("posts", 5, remoteKey, policy.WithMethods("POST", "PUT")))
	both := policy.Must(policy.PerMinute("both", 5, remoteKey, policy.WithMethods("POST"), policy.WithRoutes("/users/{id}")))
	pred := policy.Must(policy.PerMinute("pred", 5, remoteKey, policy.WithMatch(func(r *http.Request) bool { return r.Header.Get("X-Api") != "" })))
	tests := []struct {
		p       *policy.Policy
		method  string
		pattern string
		header  bool
		want    bool
	}{
		{login, "POST", "/login", false, true},
		{login, "GET", "/login", false, false},
		{login, "POST", "POST /login", false, true},            // ServeMux pattern with method
		{login, "POST", "POST example.com/login", false, true}, // and host
		{login, "POST", "/login/", false, false},
		{login, "GET", "/v2/login", false, true},
		{login, "POST", "", false, false}, // before routing
		{posts, "POST", "", false, true},
		{posts, "PUT", "/x", false, true},
		{posts, "GET", "/x", false, false},
		{both, "POST", "/users/{id}", false, true},
		{both, "GET", "/users/{id}", false, false},
		{both, "POST", "/users/7", false, false},
		{pred, "GET", "", true, true},
		{pred, "GET", "", false, false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, "/", nil)
		if tt.header {
			r.Header.Set("X-Api", "1")
		}
		if got := tt.p.Applies(r, tt.pattern); got != tt.want {
			t.Errorf("%s.Applies(%s, %q) = %v, want %v", tt.p.Name(), tt.method, tt.pattern, got, tt.want)
		}
	}
}

func TestKeyAction(t *testing.T) {
	for _, tt := range []struct {
		a      policy.KeyAction
		s      string
		status int
	}{
		{policy.RejectBadRequest, "reject-400", 400},
		{policy.RejectForbidden, "reject-403", 403},
		{policy.SkipPolicy, "skip", 0},
		{policy.KeyAction(7), "KeyAction(7)", 0},
	} {
		if got := tt.a.String(); got != tt.s {
			t.Errorf("String() = %q, want %q", got, tt.s)
		}
		if got := tt.a.Status(); got != tt.status {
			t.Errorf("%s.Status() = %d, want %d", tt.s, got, tt.status)
		}
	}
	p := policy.Must(policy.PerSecond("p", 1, remoteKey))
	if got := p.KeyAction(); got != policy.RejectBadRequest {
		t.Errorf("default KeyAction() = %v, want reject-400", got)
	}
}

func TestPresets(t *testing.T) {
	ps, err := policy.WriteEndpoints(remoteKey)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`"login";q=5;w=60`, `"register";q=10;w=3600`, `"comments";q=3;w=60`}
	kinds := []algorithms.Kind{algorithms.SlidingLog, algorithms.SlidingWindow, algorithms.TokenBucket}
	paths := []string{"/login", "/register", "/comments"}
	for i, p := range ps {
		if p.String() != want[i] || p.Spec().Algorithm != kinds[i] {
			t.Errorf("preset %d = %s %s, want %s %s", i, p, p.Spec().Algorithm, want[i], kinds[i])
		}
		if !p.Applies(httptest.NewRequest("POST", paths[i], nil), paths[i]) {
			t.Errorf("%s does not apply to POST %s", p.Name(), paths[i])
		}
		if p.Applies(httptest.NewRequest("GET", paths[i], nil), paths[i]) {
			t.Errorf("%s applies to GET %s", p.Name(), paths[i])
		}
	}
	if _, err := policy.WriteEndpoints(nil); err == nil {
		t.Error("WriteEndpoints(nil) succeeded")
	}
}

// fakeStore decides every check with a fixed decision per spec limit and
// records the calls.
type fakeStore struct {
	calls  [][]algorithms.Check
	deny   map[string]bool // keys to deny
	err    error
	short  bool // return one decision too few
	remain int64
}

func (s *fakeStore) Take(_ context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	s.calls = append(s.calls, append([]algorithms.Check(nil), checks...))
	if s.err != nil {
		return nil, s.err
	}
	ds := make([]algorithms.Decision, len(checks))
	for i, c := range checks {
		ds[i] = algorithms.Decision{Allowed: !s.deny[c.Key], Limit: c.Spec.Limit, Remaining: s.remain + int64(i),
			ResetAfter: c.Spec.Window, NextAfter: time.Duration(i+1) * time.Second}
		if s.deny[c.Key] {
			ds[i].RetryAfter = time.Duration(i+1) * 1500 * time.Millisecond
		}
	}
	if s.short {
		ds = ds[1:]
	}
	return ds, nil
}

// intoStore is a fakeStore that also implements IntoStore.
type intoStore struct {
	fakeStore
	into int // calls of TakeInto
}

func (s *intoStore) TakeInto(ctx context.Context, dst []algorithms.Decision, checks []algorithms.Check) error {
	s.into++
	ds, err := s.Take(ctx, checks...)
	if err != nil {
		return err
	}
	copy(dst, ds)
	return nil
}

// TestBoundaries: what lies on the edge of each rule is inside it. A
// status of 400 is a failure, 399 a success; a name of MaxNameLen
// characters, and one made of every character a name may hold, are
// names; WithLimit of a policy without an explicit Burst gives it none.
func TestBoundaries(t *testing.T) {
	r := httptest.NewRequest("POST", "/login", nil)
	for _, tt := range []struct {
		status            int
		failed, succeeded bool
	}{
		{399, false, true},
		{400, true, false},
		{500, true, false},
		{200, false, true},
	} {
		if got := policy.CountFailed(r, tt.status); got != tt.failed {
			t.Errorf("CountFailed(%d) = %v, want %v", tt.status, got, tt.failed)
		}
		if got := policy.CountSucceeded(r, tt.status); got != tt.succeeded {
			t.Errorf("CountSucceeded(%d) = %v, want %v", tt.status, got, tt.succeeded)
		}
	}
	for _, name := range []string{
		strings.Repeat("a", policy.MaxNameLen),
		"azAZ09-_.",
		"abcdefghijklmnopqrstuvwxyz",
		"ABCDEFGHIJKLMNOPQRSTUVWXYZ",
		"0123456789",
	} {
		if _, err := policy.New(name, perSecond, remoteKey); err != nil {
			t.Errorf("New(%q) = %v, want a policy", name, err)
		}
	}
	tb := policy.Must(policy.New("tb", algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Second}, remoteKey))
	q, err := tb.WithLimit(4)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := q.Spec(), (algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 4, Window: time.Second}); got != want {
		t.Errorf("WithLimit(4).Spec() of a policy without Burst = %+v, want %+v", got, want)
	}
}

// TestAppliesChiTrimmedRoute: a route registered with a trailing slash
// ("GET /users/") is reported by chi without it ("/users"): Applies takes
// that pattern for the route on a request chi routes (its route context
// set), and not on another, where "/users" is another route.
func TestAppliesChiTrimmedRoute(t *testing.T) {
	p := policy.Must(policy.PerMinute("users", 5, remoteKey, policy.WithRoutes("GET /users/")))
	plain := httptest.NewRequest("GET", "/users", nil)
	byChi := plain.WithContext(context.WithValue(plain.Context(), chi.RouteCtxKey, chi.NewRouteContext()))
	for _, tt := range []struct {
		name    string
		r       *http.Request
		pattern string
		want    bool
	}{
		{"chi, trimmed", byChi, "/users", true},
		{"chi, as registered", byChi, "/users/", true},
		{"no chi, trimmed", plain, "/users", false},
		{"no chi, as registered", plain, "/users/", true},
	} {
		if got := p.Applies(tt.r, tt.pattern); got != tt.want {
			t.Errorf("%s: Applies(GET, %q) = %v, want %v", tt.name, tt.pattern, got, tt.want)
		}
	}
}

// TestErrorTexts: an Error names its policy when it has one; a CostError
// says whether the cost is below 1 or above the policy's capacity.
func TestErrorTexts(t *testing.T) {
	p := policy.Must(policy.PerMinute("costly", 5, remoteKey))
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&policy.Error{Field: "Policies", Reason: "is empty"}, "policy: Policies is empty"},
		{&policy.Error{Policy: "p", Field: "Name", Reason: "is used twice"}, `policy: "p": Name is used twice`},
		{&policy.CostError{Policy: p, Cost: 0}, `policy: "costly": cost 0 is below 1`},
		{&policy.CostError{Policy: p, Cost: 6}, `policy: "costly": cost 6 exceeds the capacity 5`},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %s, want %s", got, tt.want)
		}
	}
}
