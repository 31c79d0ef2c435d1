// Package errtext cuts the values an error message quotes from the
// user's input (a value of a configuration file, a policy's route), so
// that one long value does not put kilobytes into one line of a log or a
// terminal: a value longer than MaxQuoted characters is written as its
// first Keep characters, an ellipsis and its length in bytes.
package errtext

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// MaxQuoted is the most characters of a value an error writes whole; a
// longer one is cut to its first Keep characters and marked.
const (
	MaxQuoted = 64
	Keep      = 48
)

// Cut returns v, a value written as it is (unquoted), or, when it is
// longer than MaxQuoted characters, its first Keep characters and the
// mark of its length:
//
//	xxxxxxxx… (100000 bytes)
func Cut(v string) string {
	if utf8.RuneCountInString(v) <= MaxQuoted {
		return v
	}
	return CutAt(v, Keep) + fmt.Sprintf("… (%d bytes)", len(v))
}

// Quote returns v Go-quoted, as %q writes it, or, when it is longer than
// MaxQuoted characters, its first Keep characters quoted and the mark of
// its length:
//
//	"xxxxxxxx"… (100000 bytes)
func Quote(v string) string {
	if utf8.RuneCountInString(v) <= MaxQuoted {
		return strconv.Quote(v)
	}
	return strconv.Quote(CutAt(v, Keep)) + fmt.Sprintf("… (%d bytes)", len(v))
}

// CutAt returns the first n characters of s.
func CutAt(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}
