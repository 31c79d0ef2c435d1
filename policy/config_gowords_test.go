package policy_test

import (
	"regexp"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// goWords matches the names a Go program gives the settings of a policy
// (algorithms.Spec's fields, policy's options), which a file's author did
// not write: the file spells them limit, window, burst, buckets,
// max_delay, algorithm, methods and routes.
var goWords = regexp.MustCompile(`\b(Limit|Window|Burst|Buckets|MaxDelay|Algorithm|Methods|Routes|Spec|With[A-Z]\w*|OnKeyError|CountIf)\b`)

// TestConfigPolicyErrorsSpeakConfig: every rule a policy's limit, methods
// and routes break is told in the file's words: a burst below zero was
// "must be at least 1 (or 0 for Limit)", buckets that do not divide the
// window "7 does not divide Window 1s (1000000000 ns) exactly", and a
// route on a method the policy's methods exclude "is on GET, which
// Methods ["POST"] exclude", Go's names for limit, window and methods.
func TestConfigPolicyErrorsSpeakConfig(t *testing.T) {
	for _, fields := range []string{
		// One of each rule of algorithms.Spec.Validate.
		`algorithm: ""`,
		`algorithm: tokenbucket`,
		`limit: 0`,
		`limit: 2000000000`,
		`window: -1s`,
		`window: 1ns`,
		`window: 48h`,
		`algorithm: token_bucket, burst: -1`,
		`algorithm: token_bucket, burst: 2000000000`,
		`algorithm: token_bucket, window: 24h, burst: 1000000000`,
		`burst: 5`,
		`algorithm: sliding_buckets, buckets: 0`,
		`algorithm: sliding_buckets, buckets: 5000`,
		`algorithm: sliding_buckets, buckets: 7`,
		`buckets: 5`,
		`algorithm: leaky_queue, max_delay: -1s`,
		`algorithm: leaky_queue, max_delay: 48h`,
		`algorithm: leaky_queue, limit: 1000000000, window: 1ms, max_delay: 24h`,
		`max_delay: 1s`,
		// Methods and routes.
		`methods: []`,
		`methods: [get]`,
		`methods: ["GET,POST"]`,
		`methods: ["*"]`,
		`methods: ["G ET"]`,
		`routes: []`,
		`routes: ["get /x"]`,
		`routes: ["GET,POST /x"]`,
		`routes: ["* /x"]`,
		`routes: ["x"]`,
		`routes: ["example.com/x"]`,
		`routes: ["/x?y=1"]`,
		`routes: ["/x#y"]`,
		`routes: ["/{"]`,
		`methods: [POST], routes: ["GET /x"]`,
		`methods: [HEAD], routes: ["GET /x"]`,
	} {
		doc := "policies:\n  - {name: a, limit: 1, window: 1s, " + fields + "}\n" +
			"  - {name: h, limit: 1, window: 1s, routes: [\"HEAD /x\"]}\n"
		_, err := policy.ParseConfig([]byte(doc), "p.yaml")
		errs := policy.ConfigErrors(err)
		if len(errs) == 0 {
			t.Errorf("%s: loaded; want an error", fields)
		}
		for _, e := range errs {
			if goWords.MatchString(e.Reason) || apiWords.MatchString(e.Reason) {
				t.Errorf("%s:\n%v\nwant the file's words", fields, e)
			}
		}
	}
}
