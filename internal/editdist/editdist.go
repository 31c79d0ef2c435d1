// Package editdist measures how far apart two names are, for the "did you
// mean" advice of the configuration loader and of ratekeeper check.
package editdist

// Distance returns the optimal string alignment distance of a and b,
// bytewise: the insertions, deletions, substitutions and swaps of adjacent
// bytes that turn one into the other, each one edit.
func Distance(a, b string) int {
	// Three rows: the one before the previous, the previous, the current.
	pp := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], pp[j-2]+1)
			}
		}
		pp, prev, cur = prev, cur, pp
	}
	return prev[len(b)]
}
