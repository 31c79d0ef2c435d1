package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestLintCountOnLeakyQueue: count: failed or succeeded on a leaky_queue
// draws advice, since its give-back almost never returns anything (a
// request passed on has left the queue, and a place comes back only with
// no later request queued behind it; see algorithms.GiveBacker), so the
// policy counts nearly every request; count: all on it, and a count on
// another algorithm, draw none. check gave no advice on either.
func TestLintCountOnLeakyQueue(t *testing.T) {
	for _, algo := range []string{"leaky_queue", "token_bucket", "sliding_window"} {
		for _, count := range []string{"all", "failed", "succeeded"} {
			doc := fmt.Sprintf("policies:\n  - {name: login, limit: 5, window: 1m, algorithm: %s, key: [ip], count: %s}\n", algo, count)
			cfg, err := policy.ParseConfig([]byte(doc), "test.yaml")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range lint(cfg) {
				if strings.Contains(a, "count:") {
					got = append(got, a)
				}
			}
			var want []string
			if algo == "leaky_queue" && count != "all" {
				want = []string{"login (line 2): count: " + count + " on leaky_queue gives almost nothing back: a request passed on has left the queue, " +
					"and a place comes back only with no later request queued behind it, so nearly every request counts; " +
					"sliding_window or token_bucket give back what count: leaves out"}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s, count: %s: advice %q, want %q", algo, count, got, want)
			}
		}
	}
}

// TestLintRouteSpelledTwice: one route spelled two ways (/items/{id} in one
// policy, /items/{name} in another) was a valid configuration with no
// advice, though a router registers one spelling and the policy routed by
// the other never applies.
func TestLintRouteSpelledTwice(t *testing.T) {
	doc := `policies:
  - {name: a, limit: 5, window: 1m, routes: ["GET /items/{id}", "GET /files/{p...}"]}
  - {name: b, limit: 9, window: 1m, routes: ["GET /items/{name}", "GET /items/{id}/edit"]}
  - {name: c, limit: 9, window: 1m, routes: ["GET /items/{id}"]}
`
	cfg, err := policy.ParseConfig([]byte(doc), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range lint(cfg) {
		if strings.Contains(a, "spelled another way") {
			got = append(got, a)
		}
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], `b (line 3): route "GET /items/{name}" is a's "GET /items/{id}"`) {
		t.Errorf("advice %q, want one, on b's /items/{name}", got)
	}
}

// TestLintLeakyQueueWithoutMaxDelay: a leaky_queue with no max_delay was
// valid with no advice, though it holds no request (delay <= MaxDelay = 0):
// the second of two requests at once is refused, not queued. One with a
// max_delay, and other algorithms, draw no such advice.
func TestLintLeakyQueueWithoutMaxDelay(t *testing.T) {
	for _, tc := range []struct{ def, want string }{
		{"algorithm: leaky_queue", "q (line 2): leaky_queue with no max_delay holds no request: it passes one request every 6s and refuses any that would have to wait for its slot, so it spaces requests instead of queueing them; max_delay sets how long a request may wait"},
		{"algorithm: leaky_queue, max_delay: 2s", ""},
		{"algorithm: token_bucket", ""},
	} {
		doc := "policies:\n  - {name: q, limit: 10, window: 1m, key: [ip], " + tc.def + "}\n"
		cfg, err := policy.ParseConfig([]byte(doc), "test.yaml")
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, a := range lint(cfg) {
			if strings.Contains(a, "max_delay") {
				got = a
			}
		}
		if got != tc.want {
			t.Errorf("%s: advice %q, want %q", tc.def, got, tc.want)
		}
	}
}
