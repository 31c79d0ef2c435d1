package middleware_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// wantLines checks that err's text is want, one problem a line.
func wantLines(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want\n\t%s", what, strings.Join(want, "\n\t"))
	}
	if got, w := err.Error(), strings.Join(want, "\n"); got != w {
		t.Errorf("%s: error\n\t%s\nwant\n\t%s", what, strings.ReplaceAll(got, "\n", "\n\t"), strings.ReplaceAll(w, "\n", "\n\t"))
	}
}

// TestNewReportsEveryProblem: New reports the nil store, each bad option
// (a nil one by its index) and every problem of the policies, in that
// order, one per line, the same every call; errors.Is and errors.As find
// the policies' problems through it, policy.Errors lists them, and
// MustNew panics with that error.
func TestNewReportsEveryProblem(t *testing.T) {
	a := policy.Must(policy.PerMinute("a", 10, keyfunc.Global()))
	opts := []middleware.Option{middleware.WithBreaker(-1, 0), nil, middleware.WithClock(nil), middleware.WithHeaders(middleware.IETF)}
	want := []string{
		"middleware: store is nil",
		"middleware: WithBreaker: failures is negative",
		"middleware: Options hold a nil Option at index 1",
		"middleware: WithClock: clock is nil",
		"middleware: policy: Policies hold a nil or zero Policy at index 0",
		`policy: "a": Name is the name of policies 1 and 2 of the set`,
	}
	var first error
	for range 3 {
		m, err := middleware.New(nil, []*policy.Policy{nil, a, a}, opts...)
		if m != nil {
			t.Fatal("New returned a middleware with its error")
		}
		wantLines(t, "New(nil store, {nil, a, a}, bad options)", err, want...)
		if first != nil && err.Error() != first.Error() {
			t.Errorf("New's error changed between calls:\n%v\nthen\n%v", first, err)
		}
		first = err
	}
	var pe *policy.Error
	if !errors.Is(first, policy.ErrConfig) || !errors.As(first, &pe) || pe.Field != "Policies" {
		t.Errorf("errors.Is(err, ErrConfig) = %v, errors.As gives %v; want true and the nil policy", errors.Is(first, policy.ErrConfig), pe)
	}
	if got := policy.Errors(first); len(got) != 2 {
		t.Errorf("policy.Errors gives %v, want the policies' two problems", got)
	}
	defer func() {
		v := recover()
		if err, ok := v.(error); !ok || err.Error() != first.Error() {
			t.Errorf("MustNew panicked with %v, want New's error", v)
		}
	}()
	middleware.MustNew(nil, []*policy.Policy{nil, a, a}, opts...)
}

// TestNewNilOptionIndex: a nil option alone is named by its index, and
// FromConfig counts it among the caller's options, not among those it
// adds for the configuration.
func TestNewNilOptionIndex(t *testing.T) {
	store, _ := newStore(t)
	p := fixed("p", 1, time.Second, remote)
	_, err := middleware.New(store, []*policy.Policy{p}, middleware.WithHeaders(middleware.Draft7), middleware.WithoutContext(), nil)
	wantLines(t, "New(p, _, _, nil)", err, "middleware: Options hold a nil Option at index 2")
	cfg := mustConfig(t, "headers: draft-7\nfailure_mode: closed\npolicies:\n  - name: p\n    limit: 5\n    window: 1m\n")
	_, err = middleware.FromConfig(store, cfg, nil)
	wantLines(t, "FromConfig(cfg, nil)", err, "middleware: Options hold a nil Option at index 0")
}

// TestNewOptionsAndCountIfStore: a bad option does not hide the policies'
// problems, nor they that of a CountIf policy over a store that cannot
// give units back: each is reported, the store's last.
func TestNewOptionsAndCountIfStore(t *testing.T) {
	mem, _ := newStore(t)
	login := fixed("login", 5, time.Minute, remote, policy.CountIf(policy.CountFailed))
	_, err := middleware.New(takeOnly{mem}, []*policy.Policy{login, login}, middleware.WithSkip(nil))
	wantLines(t, "New(takeOnly, {login, login}, WithSkip(nil))", err,
		"middleware: WithSkip: skip is nil",
		`middleware: policy: "login": Name is the name of policies 0 and 1 of the set`,
		`middleware: policy "login": CountIf needs a store that gives units back (an algorithms.GiveBacker); the store, a middleware_test.takeOnly, is not one`)
	// The store and the fallback are judged apart.
	_, err = middleware.New(takeOnly{mem}, []*policy.Policy{login}, middleware.OnStoreError(middleware.FallBack(takeOnly{mem})))
	wantLines(t, "New(takeOnly, {login}, FallBack(takeOnly))", err,
		`middleware: policy "login": CountIf needs a store that gives units back (an algorithms.GiveBacker); the store, a middleware_test.takeOnly, is not one`,
		`middleware: policy "login": CountIf needs a store that gives units back (an algorithms.GiveBacker); the fallback store, a middleware_test.takeOnly, is not one`)
	// A nil store is reported as nil, not as one that cannot give back.
	_, err = middleware.New(nil, []*policy.Policy{login})
	wantLines(t, "New(nil, {login})", err, "middleware: store is nil")
}

// TestRulesErrorsNameTheCall: SetLimit, SetPolicies and ApplyConfig say
// which call failed, and with SetLimit which arguments, before the
// problems, which errors.Is, errors.As and policy.Errors still find.
func TestRulesErrorsNameTheCall(t *testing.T) {
	store, _ := newStore(t)
	p := fixed("p", 10, time.Second, remote)
	m := middleware.MustNew(store, []*policy.Policy{p})
	err := m.SetLimit("p", 1_000_000_001)
	wantLines(t, "SetLimit", err, `middleware: SetLimit("p", 1000000001): policy: "p": Spec.Limit must be at most 1000000000, got 1000000001`)
	if pe := policy.Errors(err); len(pe) != 1 || pe[0].Field != "Spec.Limit" {
		t.Errorf("policy.Errors(SetLimit's error) = %v", pe)
	}
	wantLines(t, "SetLimit negative", m.SetLimit("p", -1), `middleware: SetLimit("p", -1): the limit is negative`)
	wantLines(t, "SetLimit unknown", m.SetLimit("q", 3), `middleware: SetLimit("q", 3): no policy named "q"`)
	wantLines(t, "SetLimitUnguarded unknown", m.SetLimitUnguarded("q", 3), `middleware: SetLimitUnguarded("q", 3): no policy named "q"`)
	err = m.SetPolicies([]*policy.Policy{p, nil})
	wantLines(t, "SetPolicies", err, "middleware: SetPolicies: policy: Policies hold a nil or zero Policy at index 1")
	if !errors.Is(err, policy.ErrConfig) {
		t.Errorf("SetPolicies' error %v is not policy.ErrConfig", err)
	}
	err = m.ApplyConfig(&policy.Config{Policies: []*policy.Policy{p, p}})
	wantLines(t, "ApplyConfig", err, `middleware: ApplyConfig: policy: "p": Name is the name of policies 0 and 1 of the set`)
	var pe *policy.Error
	if !errors.As(err, &pe) || pe.Field != "Name" {
		t.Errorf("errors.As(ApplyConfig's error) gives %v", pe)
	}
	if m.Set().Policy(0) != p || m.Set().Len() != 1 {
		t.Errorf("after the refusals the middleware enforces %v, want p", m.Set().Policies())
	}
}

// TestLogObserverEveryProblem: NewLogObserver reports each bad LogOption,
// a nil one by its index; LogClock refuses a nil pointer in the
// interface, as WithClock does.
func TestLogObserverEveryProblem(t *testing.T) {
	var nilClock *algotest.Clock
	_, err := middleware.NewLogObserver(nil, middleware.LogRate(0), nil, middleware.LogClock(nilClock))
	wantLines(t, "NewLogObserver", err,
		"middleware: LogRate: perSecond must be at least 1",
		"middleware: NewLogObserver: Options hold a nil LogOption at index 1",
		"middleware: LogClock: clock is nil")
}

// TestFromConfigEveryProblem: FromConfig reports each setting of a
// Config built in code that it cannot take (a FailureRetryAfter that
// FailClosed refuses named as the field, not as an option the caller
// never gave), then New's problems: its options', its policies'.
// ConfigOptions and ApplyConfig report the settings alike.
func TestFromConfigEveryProblem(t *testing.T) {
	store, _ := newStore(t)
	p := fixed("p", 1, time.Second, remote)
	cfg := &policy.Config{Headers: "draft-99", FailureMode: "sideways", Policies: []*policy.Policy{p, nil}}
	_, err := middleware.FromConfig(store, cfg, middleware.WithWait(nil))
	wantLines(t, "FromConfig", err,
		`middleware: FromConfig: headers: unknown profile "draft-99"`,
		`middleware: FromConfig: failure_mode: unknown mode "sideways"`,
		"middleware: WithWait: wait is nil",
		"middleware: policy: Policies hold a nil or zero Policy at index 1")
	closed := &policy.Config{FailureMode: policy.FailureClosed, FailureRetryAfter: -time.Second, Policies: []*policy.Policy{p}}
	_, err = middleware.FromConfig(store, closed)
	wantLines(t, "FromConfig(closed, -1s)", err, "middleware: FromConfig: failure_retry_after: must not be negative, got -1s")
	_, err = middleware.ConfigOptions(closed, nil)
	wantLines(t, "ConfigOptions(closed, -1s)", err, "middleware: ConfigOptions: failure_retry_after: must not be negative, got -1s")
	m := middleware.MustNew(store, []*policy.Policy{p})
	err = m.ApplyConfig(&policy.Config{Headers: "draft-99", FailureMode: policy.FailureClosed, FailureRetryAfter: -time.Second, Policies: []*policy.Policy{p}})
	wantLines(t, "ApplyConfig", err,
		`middleware: ApplyConfig: headers: unknown profile "draft-99"`,
		"middleware: ApplyConfig: failure_retry_after: must not be negative, got -1s")
}
