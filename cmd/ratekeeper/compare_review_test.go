package main

import (
	"regexp"
	"testing"
)

// TestCompareNamesBuckets: --compare replays sliding_buckets with the
// policy's buckets, or 10 for a policy of another algorithm; the text
// report said "sliding_buckets" alone, so a reader could not tell how
// fine the buckets were (the JSON report has them in its spec).
func TestCompareNamesBuckets(t *testing.T) {
	out, errOut, code := runCmd("replay", "--quiet", "--compare", "--config", "../../examples/config/ratekeeper.yaml", "testdata/access.log")
	if code != exitFindings {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, errOut)
	}
	for policy, buckets := range map[string]string{"login": "10", "search-daily": "24"} {
		re := regexp.MustCompile(`(?s)\npolicy ` + policy + `: .*?  algorithms at .*?\n +sliding_buckets \((\d+) buckets\) +\d+ `)
		if m := re.FindStringSubmatch(out); m == nil || m[1] != buckets {
			t.Errorf("policy %s: compared sliding_buckets %v, want it named with its %s buckets:\n%s", policy, m, buckets, out)
		}
	}
}
