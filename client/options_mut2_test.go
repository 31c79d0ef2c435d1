package client_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/client"
)

// Every option accepts the ends of its documented range, and refuses the
// value just beyond them: WithRate's limit from 1 to algorithms.MaxLimit
// and period from algorithms.MinWindow to algorithms.MaxWindow, WithMaxWait
// from 0 to MaxWindow, WithRetries from 0 to 100, a WithBackoff base of 1ns
// with an equal ceiling, a WithMaxRetryAfter of 0, and a method made of the
// first and last characters of each class a token allows. Kills the
// survivors of the options.go survey that refused an end of a range
// (:179's per >= MaxWindow, :201's d >= MaxWindow), that misstated one in
// the error (:177's "between 0 and", :202's "between 1 and"), and :338's
// i := 1 (a method's first character not checked: " GET" accepted).
func TestOptionRangeEnds(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []client.Option
	}{
		{"largest limit", []client.Option{client.WithRate(algorithms.MaxLimit, algorithms.MaxWindow)}},
		{"smallest limit and period", []client.Option{client.WithRate(1, algorithms.MinWindow)}},
		{"largest limit, shortest period", []client.Option{client.WithRate(algorithms.MaxLimit, algorithms.MinWindow), client.WithMaxWait(0)}},
		{"longest period", []client.Option{client.WithRate(1, algorithms.MaxWindow)}},
		{"longest maximum wait", []client.Option{client.WithMaxWait(algorithms.MaxWindow)}},
		{"longest maximum wait, paced", []client.Option{client.WithRate(1, algorithms.MaxWindow), client.WithMaxWait(algorithms.MaxWindow)}},
		{"no maximum wait", []client.Option{client.WithMaxWait(0)}},
		{"no retries", []client.Option{client.WithRetries(0)}},
		{"most retries", []client.Option{client.WithRetries(100)}},
		{"shortest backoff", []client.Option{client.WithBackoff(time.Nanosecond, time.Nanosecond)}},
		{"no Retry-After honoured", []client.Option{client.WithMaxRetryAfter(0)}},
		{"token characters", []client.Option{client.WithRetryMethods("azAZ09", "!#$%&'*+-.^_`|~", "!")}},
	} {
		if _, err := client.New(nil, tc.opts...); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	for _, tc := range []struct {
		opt  client.Option
		want string
	}{
		{client.WithRate(0, time.Second), "client: WithRate: limit must be between 1 and 1000000000, got 0"},
		{client.WithRate(algorithms.MaxLimit+1, time.Second), "client: WithRate: limit must be between 1 and 1000000000, got 1000000001"},
		{client.WithRate(1, algorithms.MinWindow-1), "client: WithRate: per must be between 1ms and 24h0m0s, got 999.999µs"},
		{client.WithRate(1, algorithms.MaxWindow+1), "client: WithRate: per must be between 1ms and 24h0m0s, got 24h0m0.000000001s"},
		{client.WithMaxWait(-1), "client: WithMaxWait: max wait must be between 0 and 24h0m0s, got -1ns"},
		{client.WithMaxWait(algorithms.MaxWindow + 1), "client: WithMaxWait: max wait must be between 0 and 24h0m0s, got 24h0m0.000000001s"},
		{client.WithRetries(101), "client: WithRetries: retries must be between 0 and 100, got 101"},
		{client.WithBackoff(-1, time.Second), "client: WithBackoff: base must be positive, got -1ns"},
		{client.WithBackoff(time.Second, time.Second-1), "client: WithBackoff: ceiling 999.999999ms must be at least base 1s"},
		{client.WithMaxRetryAfter(-1), "client: WithMaxRetryAfter: max must not be negative, got -1ns"},
		{client.WithRetryMethods(" GET"), `client: WithRetryMethods: invalid method " GET" (a method is a token: letters, digits and !#$%&'*+-.^_` + "`|~)"},
	} {
		if _, err := client.New(nil, tc.opt); err == nil || err.Error() != tc.want {
			t.Errorf("New: %v, want %q", err, tc.want)
		}
	}
}

// A host name whose only capitals are A or Z (the ends of the range the
// key lower-cases) is keyed in lower case, as any other: "api.exAmple" is
// "api.example" and "Zoo.example" is "zoo.example". Kills options.go:151's
// c <= 'A' and c >= 'Z' (the A, or the Z, counted as lower case, so the
// name was keyed as written: a second queue for the same host).
func TestHostKeyCapitalAAndZ(t *testing.T) {
	for host, want := range map[string]string{
		"api.exAmple": "api.example",
		"Zoo.example": "zoo.example",
	} {
		u := &url.URL{Scheme: "https", Host: host, Path: "/"}
		if got := client.HostKey(&http.Request{URL: u}); got != want {
			t.Errorf("HostKey(%s) = %q, want %q", u, got, want)
		}
	}
}
