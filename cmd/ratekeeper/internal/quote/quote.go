// Package quote writes untrusted text for a terminal: the keys a log
// gives, the names of files.
package quote

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// IfNeeded returns s as it is when every character of it is graphic (a
// letter, mark, number, punctuation, symbol or space), else s quoted with
// Go escapes: a key or a file name holding a newline, a tab, an escape
// (ESC), a line separator or bytes that are not UTF-8 can then neither
// forge a line of output nor drive the terminal it is read on.
func IfNeeded(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsGraphic(r) {
			return strconv.QuoteToGraphic(s)
		}
	}
	return s
}
