// Package plural writes a count with its noun, in the singular for one:
// "1 request", "0 requests", "2 requests".
package plural

import "strconv"

// Count returns n and noun, noun taking an s for every n but 1. The noun
// may follow a word ("malformed line"); it is one whose plural is an s
// more ("line", "request", "key-window").
func Count[N ~int | ~int64](n N, noun string) string {
	s := strconv.FormatInt(int64(n), 10) + " " + noun
	if n != 1 {
		s += "s"
	}
	return s
}
