package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/replay"
	"github.com/ratekeeper/ratekeeper/policy"
)

// maxLogLimit is the sliding_log limit past which check warns about memory.
const maxLogLimit = 10_000

// lint returns advice on a valid configuration: choices that are allowed
// but often regretted. Each is "policy: advice".
func lint(cfg *policy.Config) []string {
	var out []string
	for i, p := range cfg.Policies {
		d := cfg.Definitions[i]
		s := p.Spec()
		warn := func(format string, args ...any) {
			out = append(out, fmt.Sprintf("%s (line %d): %s", p.Name(), d.Line, fmt.Sprintf(format, args...)))
		}
		if s.Algorithm == algorithms.FixedWindow {
			warn("fixed_window admits up to %d requests in a moment across a window boundary (2 x limit); sliding_window costs the same two integers without that burst", 2*s.Limit)
		}
		if s.Algorithm == algorithms.SlidingLog && s.Limit > maxLogLimit {
			warn("sliding_log keeps one timestamp per admitted request: up to %d per key (about %d KB); sliding_window or sliding_buckets bound it", s.Limit, s.Limit*8/1024)
		}
		if s.Algorithm == algorithms.LeakyQueue && !p.CountsAll() {
			// algorithms.GiveBacker: a queue place comes back by Refund's
			// rule, which a request passed on after its Delay seldom meets.
			warn("count: %s on leaky_queue gives almost nothing back: a request passed on has left the queue, and a place comes back only with no later request queued behind it, so nearly every request counts; sliding_window or token_bucket give back what count: leaves out", d.Count)
		}
		// global is never missing (a fallback after it is refused by the
		// config): one key for every request the policy applies to.
		if len(d.Key[0]) == 1 && d.Key[0][0] == "global" && len(d.Routes) == 0 && len(d.Methods) == 0 {
			warn("key global on every request: one allowance shared by all clients, which one client can use up")
		}
		needsAuth := false
		for _, part := range d.Key[len(d.Key)-1] {
			if part == "user" || len(part) > 7 && (part[:7] == "header:" || part[:7] == "cookie:") {
				needsAuth = true
			}
		}
		if needsAuth && d.OnMissingKey != policy.SkipPolicy && len(d.Routes) == 0 {
			warn("requests without %s are rejected with %d on every route; add fallback: ip, or on_missing_key: skip", strings.Join(d.Key[len(d.Key)-1], "+"), d.OnMissingKey.Status())
		}
		for j := range i {
			e := cfg.Definitions[j]
			if e.Spec == d.Spec && slices.EqualFunc(e.Key, d.Key, slices.Equal) && slices.Equal(e.Methods, d.Methods) && slices.Equal(e.Routes, d.Routes) {
				warn("same limit, key and scope as %s: one of them is redundant", e.Name)
			}
		}
		for _, r := range d.Routes {
			if q, other := spelledBefore(cfg, i, r); q != "" {
				warn("route %q is %s's %q spelled another way: a router registers one of the two, and a policy routed by the other never applies; spell them alike", r, other, q)
			}
		}
	}
	return out
}

// spelledBefore returns the first route in the file of r's shape (r with
// other wildcard names, see replay.WildcardShape), and its policy's name,
// when it is spelled otherwise than r, the i-th policy's.
func spelledBefore(cfg *policy.Config, i int, r string) (string, string) {
	shape := replay.WildcardShape(r)
	for j := 0; j <= i; j++ {
		for _, q := range cfg.Definitions[j].Routes {
			if replay.WildcardShape(q) == shape {
				if q == r {
					return "", ""
				}
				return q, cfg.Definitions[j].Name
			}
		}
	}
	return "", ""
}
