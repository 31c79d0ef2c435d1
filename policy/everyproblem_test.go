package policy_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/policy"
)

// errorLines returns the message of each *policy.Error err holds, one error
// or several joined, in order; it fails t for anything else in err.
func errorLines(t *testing.T, err error) []string {
	t.Helper()
	var out []string
	var walk func(error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		if _, ok := err.(*policy.Error); !ok {
			t.Errorf("%T %v in the error, want only *policy.Error values", err, err)
			return
		}
		out = append(out, err.Error())
	}
	walk(err)
	return out
}

// wantEvery checks that err reports exactly want, in order, matches
// ErrConfig, gives errors.As the first, and says each on its own line.
func wantEvery(t *testing.T, what string, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want %q", what, want)
		return
	}
	if got := errorLines(t, err); !slices.Equal(got, want) {
		t.Errorf("%s: problems\n\t%s\nwant\n\t%s", what, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
	if !errors.Is(err, policy.ErrConfig) {
		t.Errorf("%s: errors.Is(%v, ErrConfig) = false", what, err)
	}
	var pe *policy.Error
	if !errors.As(err, &pe) || pe.Error() != want[0] {
		t.Errorf("%s: errors.As gives %v, want the first problem %q", what, pe, want[0])
	}
	if got := err.Error(); got != strings.Join(want, "\n") {
		t.Errorf("%s: Error() = %q, want each problem on its own line", what, got)
	}
}

// TestNewReportsEveryProblem: New, the shorthands and the presets
// reported the first bad field of a policy only, so that fixing a call
// took one run per field. Every problem that does not depend on another
// one reported is now reported, in the order New judges them (name, key,
// options in order, routes against methods, the Spec), each a *Error:
// errors.As gives the first, the one New reported before. A value judged
// against another one (a route against the methods, a burst against the
// limit and window, buckets against the window, anything against an
// unknown algorithm) is not judged when that one was refused.
func TestNewReportsEveryProblem(t *testing.T) {
	bad := algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 0, Window: 0}
	tests := []struct {
		name  string
		pname string
		spec  algorithms.Spec
		nokey bool
		opts  []policy.Option
		want  []string
	}{
		{"name, key, limit and window", "a b", bad, true, nil, []string{
			`policy: "a b": Name "a b" contains ' '; use A-Z, a-z, 0-9, '-', '_' and '.'`,
			`policy: "a b": Key is nil`,
			`policy: "a b": Spec.Limit must be positive, got 0`,
			`policy: "a b": Spec.Window must be positive, got 0s`}},
		{"every bad option", "p", perSecond, false, []policy.Option{policy.WithCost(nil), nil, policy.WithMatch(nil), policy.OnKeyError(9)}, []string{
			`policy: "p": Cost is nil`,
			`policy: "p": Options hold a nil Option at index 1`,
			`policy: "p": Match is nil`,
			`policy: "p": OnKeyError unknown action 9; want RejectBadRequest, RejectForbidden or SkipPolicy`}},
		{"every bad method and route", "p", perSecond, false, []policy.Option{
			policy.WithMethods("post", "GET", "GET|PUT"),
			policy.WithRoutes("/ok", "login", "POST /a b"),
		}, []string{
			`policy: "p": Methods "post": methods are case-sensitive and clients send "POST"`,
			`policy: "p": Methods "GET|PUT" joins several methods: list each ("GET", "PUT")`,
			`policy: "p": Routes "login": the path must start with '/'`,
			`policy: "p": Routes "POST /a b" holds a blank or a control character in its path (outside a chi regexp): the method goes first ("POST /login"), and a space in a path is written %20`}},
		{"a route on a method the methods exclude, beside a bad limit", "p", algorithms.Spec{Algorithm: algorithms.FixedWindow, Window: time.Second}, false, []policy.Option{
			policy.WithMethods("GET"), policy.WithRoutes("POST /login"),
		}, []string{
			`policy: "p": Routes "POST /login" is on POST, which Methods ["GET"] exclude: the policy would never apply there`,
			`policy: "p": Spec.Limit must be positive, got 0`}},
		// Routes are not judged against methods one of which was refused:
		// the route may be on the method meant.
		{"routes against refused methods", "p", perSecond, false, []policy.Option{
			policy.WithMethods("GET", "post"), policy.WithRoutes("POST /login"),
		}, []string{
			`policy: "p": Methods "post": methods are case-sensitive and clients send "POST"`}},
		{"burst, buckets and max_delay of another algorithm", "p", perSecond, false, []policy.Option{
			policy.WithBurst(3), policy.WithBuckets(2), policy.WithMaxDelay(time.Second),
		}, []string{
			`policy: "p": Spec.Burst applies only to token_bucket and leaky_bucket, not fixed_window`,
			`policy: "p": Spec.Buckets applies only to sliding_buckets, not fixed_window`,
			`policy: "p": Spec.MaxDelay applies only to leaky_queue, not fixed_window`}},
		{"limit, window and burst out of range", "p", algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 2_000_000_000, Window: 48 * time.Hour, Burst: -1}, false, nil, []string{
			`policy: "p": Spec.Limit must be at most 1000000000, got 2000000000`,
			`policy: "p": Spec.Window must be at most 24h0m0s, got 48h0m0s`,
			`policy: "p": Spec.Burst must be at least 1 (or 0 for Limit), got -1`}},
		// Burst is not judged against the algorithm nobody knows, nor
		// its refill time against a refused limit.
		{"unknown algorithm, limit and window", "p", algorithms.Spec{Algorithm: "nope", Burst: 3}, false, nil, []string{
			`policy: "p": Spec.Algorithm unknown kind "nope"; want one of fixed_window, sliding_log, sliding_window, sliding_buckets, token_bucket, leaky_bucket, leaky_queue`,
			`policy: "p": Spec.Limit must be positive, got 0`,
			`policy: "p": Spec.Window must be positive, got 0s`}},
		{"bad limit, a burst that refills in time at any valid limit", "p", algorithms.Spec{Algorithm: algorithms.TokenBucket, Window: 24 * time.Hour, Burst: 100000}, false, nil, []string{
			`policy: "p": Spec.Limit must be positive, got 0`}},
		{"bad window, buckets that divide no stand-in wrongly", "p", algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 10, Buckets: 7}, false, nil, []string{
			`policy: "p": Spec.Window must be positive, got 0s`}},
	}
	for _, tt := range tests {
		key := remoteKey
		if tt.nokey {
			key = nil
		}
		_, err := policy.New(tt.pname, tt.spec, key, tt.opts...)
		wantEvery(t, tt.name, err, tt.want)
	}

	// The shorthands and presets are New.
	_, err := policy.PerMinute("a b", 0, nil)
	wantEvery(t, "PerMinute", err, []string{
		`policy: "a b": Name "a b" contains ' '; use A-Z, a-z, 0-9, '-', '_' and '.'`,
		`policy: "a b": Key is nil`,
		`policy: "a b": Spec.Limit must be positive, got 0`})
	_, err = policy.Login(nil, policy.WithRoutes("login"))
	wantEvery(t, "Login", err, []string{
		`policy: "login": Key is nil`,
		`policy: "login": Routes "login": the path must start with '/'`})
}

// TestNewSetReportsEveryProblem: NewSet reported its first problem only.
// Each nil policy, each name several policies share (once, naming them
// all) and each bad option is reported, in order; a name is compared only
// among the policies that are there.
func TestNewSetReportsEveryProblem(t *testing.T) {
	a := policy.Must(policy.PerSecond("a", 1, remoteKey))
	a2 := policy.Must(policy.PerMinute("a", 1, remoteKey))
	b := policy.Must(policy.PerSecond("b", 1, remoteKey))
	_, err := policy.NewSet([]*policy.Policy{a, nil, b, a2, {}, b, a}, nil, policy.WithPatternFunc(nil))
	wantEvery(t, "NewSet", err, []string{
		`policy: Policies hold a nil or zero Policy at index 1`,
		`policy: "a": Name is the name of policies 0, 3 and 6 of the set`,
		`policy: Policies hold a nil or zero Policy at index 4`,
		`policy: "b": Name is the name of policies 2 and 5 of the set`,
		`policy: Options hold a nil SetOption at index 0`,
		`policy: PatternFunc is nil`})

	many := make([]*policy.Policy, policy.MaxPolicies+2)
	for i := range many {
		many[i] = policy.Must(policy.PerSecond("p"+strconv.Itoa(i), 1, remoteKey))
	}
	many[65] = nil
	_, err = policy.NewSet(many)
	wantEvery(t, "NewSet(66 policies)", err, []string{
		`policy: Policies holds 66 policies; at most 64`,
		`policy: Policies hold a nil or zero Policy at index 65`})
}

// TestErrorsNameTheFieldAndTheRule: WithGuard refused an invalid Spec
// under the field "Guard" with the algorithms package's whole message
// (`Guard algorithms: invalid spec: Limit must be positive, got 0`), and
// OnKeyError an unknown action without the known ones. Each problem of
// the guard's Spec is now named by its field (Guard.Limit), as New names
// the policy's own (Spec.Limit), and OnKeyError lists the actions.
func TestErrorsNameTheFieldAndTheRule(t *testing.T) {
	p := policy.Must(policy.New("p", perSecond, remoteKey))
	_, err := p.WithGuard(algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 0, Window: 0})
	wantEvery(t, "WithGuard(limit 0, window 0)", err, []string{
		`policy: "p": Guard.Limit must be positive, got 0`,
		`policy: "p": Guard.Window must be positive, got 0s`})
	_, err = policy.New("p", perSecond, remoteKey, policy.OnKeyError(policy.KeyAction(9)))
	wantEvery(t, "OnKeyError(9)", err, []string{
		`policy: "p": OnKeyError unknown action 9; want RejectBadRequest, RejectForbidden or SkipPolicy`})
}
