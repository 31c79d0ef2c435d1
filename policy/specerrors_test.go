package policy_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestSpecProblemsAsValidateJudges: policy judged a Spec's fields one by
// one, a stand-in in place of each refused value, and judged buckets
// against a window of its own whenever the limit or the window was
// refused: buckets that do not divide a valid window went unreported
// beside a bad limit. It now reports the problems
// algorithms.Spec.Validate reports, which judges buckets against the
// window whenever the window is valid, whatever the limit, in New,
// WithGuard and a file, where a limit refused before (not an integer) is
// not reported twice and a window refused before is judged against by
// nothing.
func TestSpecProblemsAsValidateJudges(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Window: time.Second, Buckets: 7}
	_, err := policy.New("p", spec, remoteKey)
	wantEvery(t, "New", err, []string{
		`policy: "p": Spec.Limit must be positive, got 0`,
		`policy: "p": Spec.Buckets 7 does not divide Window 1s (1000000000 ns) exactly`})
	p := policy.Must(policy.New("p", perSecond, remoteKey))
	_, err = p.WithGuard(spec)
	wantEvery(t, "WithGuard", err, []string{
		`policy: "p": Guard.Limit must be positive, got 0`,
		`policy: "p": Guard.Buckets 7 does not divide Window 1s (1000000000 ns) exactly`})

	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"limit and buckets", "policies:\n  - {name: b, algorithm: sliding_buckets, limit: 0, window: 1s, buckets: 7}\n", []string{
			"policy: f.yaml:2:50: policies[0].limit: must be positive, got 0",
			"policy: f.yaml:2:74: policies[0].buckets: 7 does not divide the window 1s (1000000000 ns) exactly"}},
		{"limit not an integer, and buckets", "policies:\n  - {name: b, algorithm: sliding_buckets, limit: ten, window: 1s, buckets: 7}\n", []string{
			"policy: f.yaml:2:50: policies[0].limit: must be an integer, not a string",
			"policy: f.yaml:2:76: policies[0].buckets: 7 does not divide the window 1s (1000000000 ns) exactly"}},
		{"window not a duration, and buckets", "policies:\n  - {name: b, algorithm: sliding_buckets, limit: 10, window: soon, buckets: 7}\n", []string{
			`policy: f.yaml:2:62: policies[0].window: "soon" is not a duration such as 1s, 500ms, 1m or 24h`}},
		{"limit, and buckets out of range", "policies:\n  - {name: b, algorithm: sliding_buckets, limit: 0, window: 1s, buckets: 5000}\n", []string{
			"policy: f.yaml:2:50: policies[0].limit: must be positive, got 0",
			"policy: f.yaml:2:74: policies[0].buckets: must be between 1 and 3600, got 5000"}},
		{"algorithm not a string, limit and buckets", "policies:\n  - {name: b, algorithm: 5, limit: 0, window: 1s, buckets: 7}\n", []string{
			"policy: f.yaml:2:26: policies[0].algorithm: must be a string, not an integer",
			"policy: f.yaml:2:36: policies[0].limit: must be positive, got 0"}},
	} {
		wantErrors(t, tc.name, tc.doc, tc.want)
	}
}
