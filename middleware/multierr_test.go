package middleware_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// wantJoined checks an error of the middleware that wraps the joined
// problems of package policy: its text (the middleware's prefix on the
// first line, each further line a problem of its own, naming package
// policy), errors.Is ErrConfig, errors.As the first *policy.Error, and
// policy.Errors every one, in order.
func wantJoined(t *testing.T, what string, err error, want []string) {
	t.Helper()
	wantJoinedAfter(t, what, "middleware: ", err, want)
}

// wantJoinedAfter is wantJoined for an error whose first line has prefix
// (the package's, and the call that failed) before the first problem.
func wantJoinedAfter(t *testing.T, what, prefix string, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want %q", what, want)
	}
	if got, w := err.Error(), strings.Join(want, "\n"); got != w {
		t.Errorf("%s: error\n\t%s\nwant\n\t%s", what, strings.ReplaceAll(got, "\n", "\n\t"), strings.ReplaceAll(w, "\n", "\n\t"))
	}
	if !errors.Is(err, policy.ErrConfig) {
		t.Errorf("%s: errors.Is(err, policy.ErrConfig) = false", what)
	}
	var pe *policy.Error
	if !errors.As(err, &pe) || prefix+pe.Error() != want[0] {
		t.Errorf("%s: errors.As gives %v, want the first problem", what, pe)
	}
	var got []string
	for _, e := range policy.Errors(err) {
		got = append(got, e.Error())
	}
	wantList := append([]string{strings.TrimPrefix(want[0], prefix)}, want[1:]...)
	if !slices.Equal(got, wantList) {
		t.Errorf("%s: policy.Errors gives\n\t%s\nwant\n\t%s", what, strings.Join(got, "\n\t"), strings.Join(wantList, "\n\t"))
	}
}

// TestNewWrapsEveryProblemOfTheSet: New wraps NewSet's error with %w:
// every problem of the set reaches the caller, one per line, each line
// naming the package that judged it, and errors.Is, errors.As and
// policy.Errors see through the wrapper.
func TestNewWrapsEveryProblemOfTheSet(t *testing.T) {
	store, _ := newStore(t)
	ip := keyfunc.Must(keyfunc.IP())
	a := policy.Must(policy.PerMinute("a", 10, ip))
	_, err := middleware.New(store, []*policy.Policy{nil, a, nil, a})
	wantJoined(t, "New(nil, a, nil, a)", err, []string{
		"middleware: policy: Policies hold a nil or zero Policy at index 0",
		"policy: Policies hold a nil or zero Policy at index 2",
		`policy: "a": Name is the name of policies 1 and 3 of the set`})
}

// TestSetLimitWrapsEveryProblemOfTheLimit: SetLimit past MaxLimit on a
// bucket with a Burst of its own reports both the limit and the burst
// scaled with it (Policy.WithLimit named the limit alone), through the
// middleware's wrapper; the limit in force is unchanged.
func TestSetLimitWrapsEveryProblemOfTheLimit(t *testing.T) {
	store, _ := newStore(t)
	tb := policy.Must(policy.New("tb", algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 1000, Window: time.Second, Burst: 2000}, keyfunc.Global()))
	m, err := middleware.New(store, []*policy.Policy{tb})
	if err != nil {
		t.Fatal(err)
	}
	err = m.SetLimit("tb", 2_000_000_000)
	wantJoinedAfter(t, "SetLimit(tb, 2e9)", `middleware: SetLimit("tb", 2000000000): `, err, []string{
		`middleware: SetLimit("tb", 2000000000): policy: "tb": Spec.Limit must be at most 1000000000, got 2000000000`,
		`policy: "tb": Spec.Burst must be at most 1000000000, got 4000000000`})
	if got := m.Set().Policy(0).Spec(); got != tb.Spec() {
		t.Errorf("after the failed SetLimit the Spec in force is %v, want %v", got, tb.Spec())
	}
}

// TestApplyConfigWrapsEveryProblem: a Config built in code whose
// policies NewSet refuses is refused by ApplyConfig with every problem,
// through its wrapper, and the policies in force are kept.
func TestApplyConfigWrapsEveryProblem(t *testing.T) {
	store, _ := newStore(t)
	a := policy.Must(policy.PerMinute("a", 10, keyfunc.Global()))
	m, err := middleware.New(store, []*policy.Policy{a})
	if err != nil {
		t.Fatal(err)
	}
	err = m.ApplyConfig(&policy.Config{Policies: []*policy.Policy{nil, a, a}})
	wantJoinedAfter(t, "ApplyConfig(nil, a, a)", "middleware: ApplyConfig: ", err, []string{
		"middleware: ApplyConfig: policy: Policies hold a nil or zero Policy at index 0",
		`policy: "a": Name is the name of policies 1 and 2 of the set`})
	if got := m.Set().Policy(0); got != a {
		t.Errorf("after the refused ApplyConfig the policy in force is %v, want a", got)
	}
}
