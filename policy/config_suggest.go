package policy

import (
	"strings"

	"github.com/ratekeeper/ratekeeper/internal/editdist"
)

// nearestField returns the one field of known that name most likely
// misspells, or "" when none is clearly it. Names are compared with case
// ignored and '-' read as '_' (Window, max-delay); the nearest must be
// within maxSuggestDistance(name) edits (a letter inserted, deleted,
// replaced, or two neighbours swapped), and no other field as near.
func nearestField(name string, known []string) string {
	n := foldField(name)
	maxD := maxSuggestDistance(n)
	best, bestD, tie := "", maxD+1, false
	for _, k := range known {
		if len(n) > len(k)+maxD || len(k) > len(n)+maxD {
			continue // more edits apart than allowed: not worth the table
		}
		switch d := editdist.Distance(n, foldField(k)); {
		case d < bestD:
			best, bestD, tie = k, d, false
		case d == bestD:
			tie = true
		}
	}
	if tie {
		return ""
	}
	return best
}

// maxSuggestDistance is the most edits nearestField allows for a name of
// this length: one up to 7 bytes (limt, polices), then one per 4 bytes, at
// most 3 (trusted_proxy), so that a short name of its own (cost, algo) is
// not taken for a field it merely resembles.
func maxSuggestDistance(name string) int {
	return min(3, max(1, len(name)/4))
}

func foldField(s string) string {
	return strings.ReplaceAll(strings.ToLower(s), "-", "_")
}
