package policy

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ratekeeper/ratekeeper/internal/errtext"
)

// A ConfigError reports one problem in a configuration file: where it is
// (File, Line and Column, 1-based, the column counting characters in YAML
// and JSON alike; 0 when the position is unknown), which field (a path
// such as "policies[1].window"; empty for the document as a whole) and
// why. Field and Reason hold no control character: one the file spells in
// a key or value is written as a Go escape (\x1b, \n). Nor do they hold a
// long value whole: a value of the file (or a key, in Field) longer than
// 64 characters is cut to its first 48, marked with an ellipsis and its
// length (`"xxx"… (100000 bytes)`), and a Reason is at most about 1 KB.
// errors.Is(err, ErrConfig) holds for every ConfigError.
type ConfigError struct {
	File   string
	Line   int
	Column int
	Field  string
	Reason string

	// stop marks the entry a loader appends after its bound (see
	// Truncated).
	stop bool
}

// Truncated reports whether e is the entry [Load] appends, after the most
// problems it reports, to say that it stopped there ("too many errors"):
// no problem of the file's own, but word that the file has more than
// those listed before it.
func (e *ConfigError) Truncated() bool { return e.stop }

// Error formats e as "policy: file:line:col: field: reason".
func (e *ConfigError) Error() string {
	b := []byte("policy: ")
	if e.File != "" {
		b = append(b, e.File...)
		b = append(b, ':')
	}
	if e.Line > 0 {
		b = strconv.AppendInt(b, int64(e.Line), 10)
		b = append(b, ':')
		if e.Column > 0 {
			b = strconv.AppendInt(b, int64(e.Column), 10)
			b = append(b, ':')
		}
	}
	if len(b) > len("policy: ") {
		b = append(b, ' ')
	}
	if e.Field != "" {
		b = append(b, e.Field...)
		b = append(b, ": "...)
	}
	b = append(b, e.Reason...)
	return string(b)
}

// Is reports whether target is ErrConfig.
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }

// maxConfigErrors is the most problems one Load reports.
const maxConfigErrors = 20

// ConfigErrors returns the *ConfigError values held by err, which may be
// one ConfigError or several joined (as [Load] returns them), in order.
func ConfigErrors(err error) []*ConfigError { return collect[*ConfigError](err) }

// maxReason bounds a ConfigError's Reason once its values are cut: a
// value an error writes otherwise than quoted, with blanks in it, is cut
// there.
const maxReason = 1024

// errorText returns s, the text of an error about the file, as a
// ConfigError holds it: control characters escaped (see escapeControls),
// each value longer than errtext.MaxQuoted characters cut (see cutValues), and
// the whole cut at maxReason bytes. A file may be 256 KB, one value of
// it as long, and Load reports 20 errors: a value quoted whole would put
// that much in one line of a log or a terminal.
func errorText(s string) string {
	s = cutValues(escapeControls(s))
	if len(s) > maxReason {
		n := len(s)
		s = errtext.CutAt(s, maxReason-64) + fmt.Sprintf("… (%d bytes)", n)
	}
	return s
}

// cutValues returns s with each Go-quoted string ("...", as %q writes a
// value) longer than errtext.MaxQuoted characters, unquoted, written as
// [errtext.Quote] writes it: its first errtext.Keep characters quoted, an
// ellipsis and the value's length in bytes:
//
//	"xxxxxxxx"… (100000 bytes)
//
// and each run of characters without a blank or a quote longer than
// errtext.MaxQuoted (a value written as it is) likewise, unquoted
// ([errtext.Cut]).
func cutValues(s string) string {
	if len(s) <= errtext.MaxQuoted {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '"' {
			if q, err := strconv.QuotedPrefix(s[i:]); err == nil {
				if v, err := strconv.Unquote(q); err == nil && utf8.RuneCountInString(v) > errtext.MaxQuoted {
					b.WriteString(errtext.Quote(v))
				} else {
					b.WriteString(q)
				}
				i += len(q)
				continue
			}
			b.WriteByte('"')
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '"' {
			j++
		}
		if j == i { // a blank
			b.WriteByte(s[i])
			i++
			continue
		}
		b.WriteString(errtext.Cut(s[i:j]))
		i = j
	}
	return b.String()
}
