package policy

import "strconv"

// A ConfigError reports one problem in a configuration file: where it is
// (File, Line and Column, 1-based, the column counting characters in YAML
// and JSON alike; 0 when the position is unknown), which field (a path
// such as "policies[1].window"; empty for the document as a whole) and
// why. Field and Reason hold no control character: one the file spells in
// a key or value is written as a Go escape (\x1b, \n). errors.Is(err,
// ErrConfig) holds for every ConfigError.
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
