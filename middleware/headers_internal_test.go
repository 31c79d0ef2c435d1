package middleware

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/lowest"
	"github.com/ratekeeper/ratekeeper/policy"
)

// scripted is a Store answering fixed decisions, in order.
type scripted []algorithms.Decision

func (s scripted) Take(_ context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	return append([]algorithms.Decision(nil), s[:len(checks)]...), nil
}

var constKey = func(*http.Request) (string, error) { return "192.0.2.1", nil }

// result decides the policies (per-second 10/s, per-minute 100/min, and
// "tb", a token bucket of 5) with the scripted decisions.
func result(t *testing.T, mask uint64, ds ...algorithms.Decision) *policy.Result {
	t.Helper()
	ps := []*policy.Policy{
		policy.Must(policy.PerSecond("per-second", 10, constKey)),
		policy.Must(policy.PerMinute("per-minute", 100, constKey)),
		policy.Must(policy.Per("tb", 1, 2500*time.Millisecond, constKey, policy.WithAlgorithm(algorithms.TokenBucket), policy.WithBurst(5))),
	}
	set, err := policy.NewSet(ps)
	if err != nil {
		t.Fatal(err)
	}
	var res policy.Result
	if err := set.Prepare(httptest.NewRequest("GET", "/", nil), mask, &res); err != nil {
		t.Fatal(err)
	}
	if err := res.Take(context.Background(), scripted(ds)); err != nil {
		t.Fatal(err)
	}
	return &res
}

func allow(limit, remaining int64, next, reset time.Duration) algorithms.Decision {
	return algorithms.Decision{Allowed: true, Limit: limit, Remaining: remaining, NextAfter: next, ResetAfter: reset}
}

func denyD(limit, remaining int64, retry, next, reset time.Duration) algorithms.Decision {
	return algorithms.Decision{Limit: limit, Remaining: remaining, RetryAfter: retry, NextAfter: next, ResetAfter: reset}
}

// TestSetHeaders is the table of the Decision-to-headers mapping.
func TestSetHeaders(t *testing.T) {
	now := func() time.Time { return time.Unix(1_700_000_000, 500_000_000) }
	sec7 := allow(10, 7, 300*time.Millisecond, 300*time.Millisecond)
	min93 := allow(100, 93, 51200*time.Millisecond, 59*time.Second)
	min0 := denyD(100, 0, 29500*time.Millisecond, 29500*time.Millisecond, 59*time.Second)
	tests := []struct {
		name    string
		profile Profile
		mask    uint64
		ds      []algorithms.Decision
		want    http.Header
	}{
		{"ietf two", IETF, 0b011, []algorithms.Decision{sec7, min93}, http.Header{
			"Ratelimit-Policy": {`"per-second";q=10;w=1, "per-minute";q=100;w=60`},
			"Ratelimit":        {`"per-second";r=7;t=1, "per-minute";r=93;t=52`},
		}},
		{"ietf full and fractional window", IETF, 0b101, []algorithms.Decision{allow(10, 10, 0, 0), allow(5, 4, 2500*time.Millisecond, 2500*time.Millisecond)}, http.Header{
			"Ratelimit-Policy": {`"per-second";q=10;w=1, "tb";q=5;w=3`},
			"Ratelimit":        {`"per-second";r=10;t=0, "tb";r=4;t=3`},
		}},
		{"ietf denied", IETF, 0b011, []algorithms.Decision{sec7, min0}, http.Header{
			"Ratelimit-Policy": {`"per-second";q=10;w=1, "per-minute";q=100;w=60`},
			"Ratelimit":        {`"per-second";r=7;t=1, "per-minute";r=0;t=30`},
		}},
		{"ietf one", IETF, 0b010, []algorithms.Decision{min93}, http.Header{
			"Ratelimit-Policy": {`"per-minute";q=100;w=60`},
			"Ratelimit":        {`"per-minute";r=93;t=52`},
		}},
		{"draft-7 lowest remaining", Draft7, 0b011, []algorithms.Decision{sec7, min93}, http.Header{
			"Ratelimit":        {`limit=10, remaining=7, reset=1`},
			"Ratelimit-Policy": {`10;w=1, 100;w=60`},
		}},
		{"draft-7 denied reports Retry-After", Draft7, 0b011, []algorithms.Decision{sec7, min0}, http.Header{
			"Ratelimit":        {`limit=100, remaining=0, reset=30`},
			"Ratelimit-Policy": {`10;w=1, 100;w=60`},
		}},
		{"draft-6", Draft6, 0b011, []algorithms.Decision{allow(10, 9, time.Second, time.Second), min93}, http.Header{
			"Ratelimit-Limit":     {"10"},
			"Ratelimit-Remaining": {"9"},
			"Ratelimit-Reset":     {"1"},
			"Ratelimit-Policy":    {`10;w=1, 100;w=60`},
		}},
		{"draft-6 tie goes to the longer reset", Draft6, 0b011, []algorithms.Decision{allow(10, 5, time.Second, time.Second), allow(100, 5, time.Second, 40*time.Second)}, http.Header{
			"Ratelimit-Limit":     {"100"},
			"Ratelimit-Remaining": {"5"},
			"Ratelimit-Reset":     {"40"},
			"Ratelimit-Policy":    {`10;w=1, 100;w=60`},
		}},
		{"draft-6 denied tie goes to the Retry-After", Draft6, 0b011, []algorithms.Decision{denyD(10, 0, 50*time.Second, 50*time.Second, 55*time.Second), denyD(100, 0, 5*time.Second, 5*time.Second, 60*time.Second)}, http.Header{
			"Ratelimit-Limit":     {"10"},
			"Ratelimit-Remaining": {"0"},
			"Ratelimit-Reset":     {"50"}, // the Retry-After of the response
			"Ratelimit-Policy":    {`10;w=1, 100;w=60`},
		}},
		{"legacy", Legacy, 0b011, []algorithms.Decision{sec7, min0}, http.Header{
			"X-Ratelimit-Limit":     {"100"},
			"X-Ratelimit-Remaining": {"0"},
			"X-Ratelimit-Reset":     {"30"},
		}},
		{"legacy unix", LegacyUnix, 0b011, []algorithms.Decision{sec7, allow(100, 5, time.Second, 59200*time.Millisecond)}, http.Header{
			"X-Ratelimit-Limit":     {"100"},
			"X-Ratelimit-Remaining": {"5"},
			"X-Ratelimit-Reset":     {"1700000060"}, // 1,700,000,000.5 + 59.2 s, rounded up
		}},
		{"none", NoHeaders, 0b011, []algorithms.Decision{sec7, min93}, http.Header{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			setHeaders(h, tt.profile, result(t, tt.mask, tt.ds...), nil, now, nil, new([2]string), nil)
			if !reflect.DeepEqual(h, tt.want) {
				t.Errorf("setHeaders(%s) =\n%v\nwant\n%v", tt.profile, h, tt.want)
			}
		})
	}
	// Nothing taken, nothing written.
	h := http.Header{}
	setHeaders(h, IETF, &policy.Result{}, nil, now, nil, new([2]string), nil)
	if len(h) != 0 {
		t.Errorf("setHeaders of an empty Result = %v", h)
	}
}

func TestSetHeadersOuter(t *testing.T) {
	now := func() time.Time { return time.Unix(0, 0) }
	outer := result(t, 0b001, allow(10, 3, time.Second, time.Second))
	inner := result(t, 0b010, allow(100, 90, time.Second, time.Minute))
	lowInner := result(t, 0b010, allow(100, 1, time.Second, time.Minute))

	h := http.Header{}
	setHeaders(h, IETF, outer, nil, now, nil, new([2]string), nil)
	setHeaders(h, IETF, inner, outer, now, nil, new([2]string), nil)
	want := http.Header{
		"Ratelimit-Policy": {`"per-second";q=10;w=1`, `"per-minute";q=100;w=60`},
		"Ratelimit":        {`"per-second";r=3;t=1`, `"per-minute";r=90;t=1`},
	}
	if !reflect.DeepEqual(h, want) {
		t.Errorf("nested IETF headers = %v, want %v", h, want)
	}

	for _, tt := range []struct {
		inner *policy.Result
		want  string
	}{{inner, "3"}, {lowInner, "1"}} {
		h := http.Header{}
		setHeaders(h, Draft6, outer, nil, now, nil, new([2]string), nil)
		setHeaders(h, Draft6, tt.inner, outer, now, nil, new([2]string), nil)
		if got := h.Get(HeaderRateLimitRemaining); got != tt.want {
			t.Errorf("nested draft-6 remaining = %s, want %s", got, tt.want)
		}
		if got := h.Values(HeaderRateLimitPolicy); len(got) != 2 {
			t.Errorf("nested draft-6 policies = %q, want two field lines", got)
		}
		h = http.Header{}
		setHeaders(h, Draft7, outer, nil, now, nil, new([2]string), nil)
		setHeaders(h, Draft7, tt.inner, outer, now, nil, new([2]string), nil)
		if got := h.Get(HeaderRateLimit); !strings.Contains(got, "remaining="+tt.want+",") {
			t.Errorf("nested draft-7 = %s, want remaining %s", got, tt.want)
		}
	}
}

func TestPartitionKey(t *testing.T) {
	res := result(t, 0b011, allow(10, 9, time.Second, time.Second), allow(100, 99, time.Second, time.Second))
	pk := regexp.MustCompile(`^"per-second";r=9;t=1;pk=:([A-Za-z0-9+/]{12}):, "per-minute";r=99;t=1;pk=:([A-Za-z0-9+/]{12}):$`)
	get := func(secret string) []string {
		h := http.Header{}
		setHeaders(h, IETF, res, nil, nil, []byte(secret), new([2]string), nil)
		m := pk.FindStringSubmatch(h.Get(HeaderRateLimit))
		if m == nil {
			t.Fatalf("RateLimit = %q, want pk parameters", h.Get(HeaderRateLimit))
		}
		if strings.Contains(h.Get(HeaderRateLimitPolicy), "pk=") {
			t.Errorf("RateLimit-Policy carries pk: %q", h.Get(HeaderRateLimitPolicy))
		}
		return m[1:]
	}
	a, b := get("0123456789abcdef"), get("0123456789abcdeF")
	if a[0] == a[1] {
		t.Error("two policies' keys share a pk")
	}
	if a[0] == b[0] {
		t.Error("pk does not depend on the secret")
	}
	if again := get("0123456789abcdef"); again[0] != a[0] {
		t.Error("pk is not deterministic")
	}
}

func TestSeconds(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want int64
	}{{-1, 0}, {0, 0}, {1, 1}, {time.Second, 1}, {time.Second + 1, 2}, {59500 * time.Millisecond, 60}} {
		if got := seconds(tt.d); got != tt.want {
			t.Errorf("seconds(%v) = %d, want %d", tt.d, got, tt.want)
		}
	}
	for _, p := range []Profile{IETF, Draft7, Draft6, Legacy, LegacyUnix, NoHeaders, Profile(42)} {
		if p.String() == "" {
			t.Errorf("Profile(%d).String() is empty", int(p))
		}
	}
}

// TestAddPolicies pins which members of the policy lines are merged out:
// only `q;w=w` members whose q and w both parse take part, and of two
// with the same quota the longer window, or the same window further out,
// is kept.
func TestAddPolicies(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lines    []string
		policies string
		want     []string
	}{
		{"distinct quotas", []string{"10;w=60"}, "5;w=1", []string{"10;w=60", "5;w=1"}},
		{"longer window kept", []string{"10;w=60"}, "10;w=1, 5;w=1", []string{"10;w=60", "5;w=1"}},
		{"same window kept further out", []string{"10;w=60"}, "10;w=60", []string{"10;w=60"}},
		{"unparsed quota takes no part", []string{"0;w=30"}, "abc;w=60", []string{"0;w=30", "abc;w=60"}},
		{"other form takes no part", []string{"foo"}, "0;w=5", []string{"foo", "0;w=5"}},
		{"other form kept beside a merge", []string{"foo, 10;w=1"}, "10;w=60", []string{"foo", "10;w=60"}},
	} {
		got := addPolicies(slices.Clone(tc.lines), tc.policies)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: addPolicies(%q, %q) = %q, want %q", tc.name, tc.lines, tc.policies, got, tc.want)
		}
	}
}

// TestLowerThan (lowest.Before, as the middleware uses it): a denial is reported before any admission, whatever the
// remaining counts; among equals, the lower remaining; on a tie of
// remaining, of two denials the longer wait, then the longer ResetAfter
// (as policy.Result.Lowest chooses); a full tie is not lower.
func TestLowerThan(t *testing.T) {
	denied := algorithms.Decision{Allowed: false, Remaining: 5}
	allowed := algorithms.Decision{Allowed: true, Remaining: 0}
	for _, tc := range []struct {
		name string
		d, b algorithms.Decision
		want bool
	}{
		{"denied before allowed", denied, allowed, true},
		{"allowed after denied", allowed, denied, false},
		{"lower remaining", algorithms.Decision{Allowed: true, Remaining: 1}, algorithms.Decision{Allowed: true, Remaining: 2}, true},
		{"tie", algorithms.Decision{Allowed: true, Remaining: 2}, algorithms.Decision{Allowed: true, Remaining: 2}, false},
		{"tie, longer reset", allow(10, 2, time.Second, time.Minute), allow(10, 2, time.Second, time.Second), true},
		{"tie, shorter reset", allow(10, 2, time.Second, time.Second), allow(10, 2, time.Second, time.Minute), false},
		{"denied tie, longer wait", denyD(10, 0, 2*time.Second, time.Second, time.Second), denyD(10, 0, time.Second, time.Second, time.Minute), true},
		{"denied tie, longer next", denyD(10, 0, time.Second, 3*time.Second, time.Second), denyD(10, 0, 2*time.Second, time.Second, time.Minute), true},
		{"denied tie, shorter wait", denyD(10, 0, time.Second, time.Second, time.Minute), denyD(10, 0, 2*time.Second, time.Second, time.Second), false},
		{"denied tie, same wait, longer reset", denyD(10, 0, time.Second, time.Second, time.Minute), denyD(10, 0, time.Second, time.Second, time.Second), true},
	} {
		if got := lowest.Before(tc.d, tc.b); got != tc.want {
			t.Errorf("%s: lowest.Before(%+v, %+v) = %v, want %v", tc.name, tc.d, tc.b, got, tc.want)
		}
	}
}

// TestRetimeAndReviseMembers: the t (and, revised, the r) of each member
// is replaced whole, whatever its digits; a pk after it is kept; a line
// not of the expected form is returned as it is.
func TestRetimeAndReviseMembers(t *testing.T) {
	res := result(t, 0b011, allow(10, 5, 19*time.Second, 20*time.Second), allow(100, 59, 59*time.Second, 60*time.Second))
	const line = `"per-second";r=5;t=19;pk=:AAAA:, "per-minute";r=99;t=99`
	if got, want := retimeMembers(line, res, 4*time.Second), `"per-second";r=5;t=15;pk=:AAAA:, "per-minute";r=99;t=55`; got != want {
		t.Errorf("retimeMembers(%q, 4s) = %q, want %q", line, got, want)
	}
	if got, want := reviseMembers(line, res, 0b10), `"per-second";r=5;t=19;pk=:AAAA:, "per-minute";r=59;t=59`; got != want {
		t.Errorf("reviseMembers(%q, 0b10) = %q, want %q", line, got, want)
	}
	const odd = `"per-second";r=5`
	if got := retimeMembers(odd, res, time.Second); got != odd {
		t.Errorf("retimeMembers(%q) = %q, want it as it is", odd, got)
	}
	if got := reviseMembers(odd, res, 0b01); got != odd {
		t.Errorf("reviseMembers(%q) = %q, want it as it is", odd, got)
	}
}

// TestAdd2KeepsEarlierValues: a value already under either key stays,
// the new one after it; both new share vals.
func TestAdd2KeepsEarlierValues(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before http.Header
		want1  []string
		want2  []string
	}{
		{"both new", http.Header{}, []string{"p"}, []string{"l"}},
		{"first there", http.Header{"K1": {"p0"}}, []string{"p0", "p"}, []string{"l"}},
		{"second there", http.Header{"K2": {"l0"}}, []string{"p"}, []string{"l0", "l"}},
	} {
		var vals [2]string
		h := tc.before
		add2(&vals, h, "K1", "p", "K2", "l")
		if !slices.Equal(h["K1"], tc.want1) || !slices.Equal(h["K2"], tc.want2) || vals != [2]string{"p", "l"} {
			t.Errorf("%s: add2 gave %q, %q, vals %q; want %q, %q", tc.name, h["K1"], h["K2"], vals, tc.want1, tc.want2)
		}
	}
}

// TestReplaceLineReplacesItsOwnStringOnly: the line replaced is the very
// string vals holds, not another of the same length or text.
func TestReplaceLineReplacesItsOwnStringOnly(t *testing.T) {
	own := strings.Clone(`"a";r=1;t=1`)
	same, other := strings.Clone(own), `"b";r=2;t=2`
	h := http.Header{keyRateLimit: {same, other, own}}
	vals := [2]string{"", own}
	replaceLine(h, &vals, func(string) string { return "new" })
	if want := []string{same, other, "new"}; !slices.Equal(h[keyRateLimit], want) || vals[1] != "new" {
		t.Errorf("replaceLine: %q, vals[1] %q; want %q, \"new\"", h[keyRateLimit], vals[1], want)
	}
	empty := [2]string{}
	h = http.Header{keyRateLimit: {""}}
	replaceLine(h, &empty, func(string) string { return "new" })
	if h[keyRateLimit][0] != "" {
		t.Errorf("replaceLine with no line of its own replaced %q", h[keyRateLimit])
	}
}

// TestKeepsOuter: a single-valued profile keeps the values a middleware
// further out wrote only when that one decided something, ours decided
// something too and allowed, and outer's comes first or ties (lowest.Before:
// a tie of remaining goes to the longer reset); a Result that decided
// nothing (not taken, or no policy) is never compared.
func TestKeepsOuter(t *testing.T) {
	low := result(t, 0b001, allow(10, 3, time.Second, time.Second))
	high := result(t, 0b010, allow(100, 90, time.Second, time.Minute))
	same := result(t, 0b010, allow(100, 3, time.Second, time.Second))
	later := result(t, 0b010, allow(100, 3, time.Second, time.Minute))
	denied := result(t, 0b010, denyD(100, 0, time.Second, time.Second, time.Minute))
	none := result(t, 0) // taken, no policy decided
	for _, tc := range []struct {
		name       string
		p          Profile
		res, outer *policy.Result
		want       bool
	}{
		{"outer lower", Draft6, high, low, true},
		{"outer tie", Legacy, same, low, true},
		{"outer tie, ours resets later", Legacy, later, low, false},
		{"outer tie, outer resets later", Legacy, low, later, true},
		{"outer higher", Draft7, low, high, false},
		{"ours denied", Draft6, denied, low, false},
		{"list profile", IETF, high, low, false},
		{"no outer", Draft6, high, nil, false},
		{"outer not taken", Draft6, high, &policy.Result{}, false},
		{"outer decided nothing", Draft6, high, none, false},
		{"ours not taken", Draft6, &policy.Result{}, low, false},
		{"ours decided nothing", Draft6, none, low, false},
	} {
		if got := keepsOuter(tc.p, tc.res, tc.outer); got != tc.want {
			t.Errorf("%s: keepsOuter(%s) = %v, want %v", tc.name, tc.p, got, tc.want)
		}
	}
}

// TestEditLine: the line edited is replaced in a new slice (one read
// before is left as it was); a line edited empty is removed, and the
// field with it when it was its only line.
func TestEditLine(t *testing.T) {
	for _, tc := range []struct {
		name   string
		others []string // the lines of the middlewares further out
		edited string
		want   []string // nil: no field
	}{
		{"replaced", []string{`"a";r=1;t=1`}, `"p";r=0;t=1`, []string{`"a";r=1;t=1`, `"p";r=0;t=1`}},
		{"emptied among others", []string{`"a";r=1;t=1`}, "", []string{`"a";r=1;t=1`}},
		{"emptied alone", nil, "", nil},
	} {
		line := strings.Clone(`"p";r=1;t=1`)
		before := append(slices.Clone(tc.others), line)
		read := slices.Clone(before)
		h := http.Header{keyRateLimit: before}
		editLine(h, keyRateLimit, &line, func(string) string { return tc.edited })
		got, there := h[keyRateLimit]
		if !slices.Equal(got, tc.want) || there != (tc.want != nil) || line != tc.edited {
			t.Errorf("%s: editLine gave %q (field there: %v), line %q; want %q, line %q", tc.name, got, there, line, tc.want, tc.edited)
		}
		if !slices.Equal(before, read) {
			t.Errorf("%s: editLine wrote into the slice read before: %q, was %q", tc.name, before, read)
		}
	}
}

// TestWithoutMember: the member of the named policy is left out of an
// IETF list line, the others kept in order with their separators; a
// member whose name only begins with it, or that is cut short before its
// closing quote, is not its member.
func TestWithoutMember(t *testing.T) {
	for _, tc := range []struct {
		line, name, want string
	}{
		{`"a";r=1;t=1, "b";r=2;t=2, "c";r=3;t=3`, "b", `"a";r=1;t=1, "c";r=3;t=3`},
		{`"a";q=1;w=1, "b";q=2;w=2, "c";q=3;w=3`, "a", `"b";q=2;w=2, "c";q=3;w=3`},
		{`"a";r=1;t=1`, "a", ``},
		{`"ab";r=1;t=1, "a";r=2;t=2`, "a", `"ab";r=1;t=1`},
		{`"a";r=1;t=1, "b`, "b", `"a";r=1;t=1, "b`},
		{`"a";r=1;t=1`, "b", `"a";r=1;t=1`},
	} {
		if got := withoutMember(tc.line, tc.name); got != tc.want {
			t.Errorf("withoutMember(%q, %q) = %q, want %q", tc.line, tc.name, got, tc.want)
		}
	}
}

// setHeaders, for these tests, writes the rate-limit headers of res into h
// under profile p, at the time of its decision (see setHeadersAt).
func setHeaders(h http.Header, p Profile, res, outer *policy.Result, now func() time.Time, pkSecret []byte, vals *[2]string, buf []byte) {
	setHeadersAt(h, p, res, outer, now, pkSecret, vals, buf, 0)
}
