package logparse

import (
	"bytes"
	"time"
)

// A server may send its access log to syslog rather than to a file
// (nginx's access_log syslog:server=..., Apache's CustomLog "|logger ...",
// Docker's syslog log driver), and the log an operator has is then the
// file syslog wrote, or journalctl's export, each server line behind a
// syslog header:
//
//   - RFC 3164, as rsyslog and syslog-ng write their files by default and
//     journalctl -o short shows the journal: "Mar 10 12:00:00 web1
//     nginx[2345]: <line>", the host left out by nginx's nohostname, the
//     priority "<190>" first as a collector writing what it receives keeps
//     it; the time also in RFC 3339 (rsyslog's RSYSLOG_FileFormat,
//     journalctl -o short-iso with "+0100");
//   - RFC 5424: "<190>1 2024-03-10T12:00:00Z web1 nginx 2345 - - <line>",
//     structured data ("[id k="v"]") before the line or "-".
//
// The Reader reads the line after the header in the log's format, as if
// the server had written it to a file; the header's own time is not used
// (the line has the request's).

// unwrapSyslog returns the message of a syslog line, and whether raw is
// one. The message is a subslice of raw.
func unwrapSyslog(raw []byte) ([]byte, bool) {
	rest := raw
	pri := false
	if len(rest) > 0 && rest[0] == '<' {
		i := bytes.IndexByte(rest, '>')
		if i < 2 || i > 4 || !allDigits(string(rest[1:i])) {
			return nil, false
		}
		rest, pri = rest[i+1:], true
	}
	if pri && len(rest) > 2 && '1' <= rest[0] && rest[0] <= '9' && rest[1] == ' ' {
		return unwrapSyslog5424(rest[2:])
	}
	// The time: "Mmm dd hh:mm:ss" or RFC 3339.
	var ok bool
	if rest, ok = cutSyslogTime(rest); !ok {
		return nil, false
	}
	// [host] tag: the host is left out when the first word is a tag.
	word, after, found := bytes.Cut(rest, []byte(" "))
	if !found {
		return nil, false
	}
	if !syslogTag(word) {
		if word, after, found = bytes.Cut(after, []byte(" ")); !found || !syslogTag(word) {
			return nil, false
		}
	}
	return bytes.TrimLeft(after, " "), true
}

// unwrapSyslog5424 returns the message of the rest of an RFC 5424 line,
// after its version: time, host, app, process and message IDs, structured
// data, message.
func unwrapSyslog5424(rest []byte) ([]byte, bool) {
	ts, rest, ok := bytes.Cut(rest, []byte(" "))
	if !ok || string(ts) != "-" && !rfc3339(ts) {
		return nil, false
	}
	for range 4 { // host, app, process ID, message ID
		var word []byte
		if word, rest, ok = bytes.Cut(rest, []byte(" ")); !ok || len(word) == 0 {
			return nil, false
		}
	}
	// Structured data: "-", or elements "[id k="v" ...]" whose values
	// escape '"', '\' and ']' with a backslash.
	switch {
	case bytes.HasPrefix(rest, []byte("-")):
		rest = rest[1:]
	case bytes.HasPrefix(rest, []byte("[")):
		for len(rest) > 0 && rest[0] == '[' {
			quoted, end := false, -1
			for i := 1; i < len(rest) && end < 0; i++ {
				switch c := rest[i]; {
				case c == '\\' && quoted:
					i++
				case c == '"':
					quoted = !quoted
				case c == ']' && !quoted:
					end = i
				}
			}
			if end < 0 {
				return nil, false
			}
			rest = rest[end+1:]
		}
	default:
		return nil, false
	}
	if len(rest) > 0 && rest[0] != ' ' {
		return nil, false
	}
	rest = bytes.TrimLeft(rest, " ")
	return bytes.TrimPrefix(rest, []byte("\xef\xbb\xbf")), true // a UTF-8 message may start with a BOM
}

// cutSyslogTime returns what follows the time that starts b and the space
// after it: "Mar 10 12:00:00" (the day padded with a space or a zero), or
// an RFC 3339 time, also with its offset written "+0100".
func cutSyslogTime(b []byte) ([]byte, bool) {
	if len(b) > 16 && b[3] == ' ' && b[6] == ' ' && b[15] == ' ' && isMonth(b[:3]) {
		day, clock := b[4:6], b[7:15]
		if day[0] == ' ' {
			day = day[1:]
		}
		if !allDigits(string(day)) || clock[2] != ':' || clock[5] != ':' || !allDigits(string(clock[:2])+string(clock[3:5])+string(clock[6:])) {
			return nil, false
		}
		return b[16:], true
	}
	if len(b) < 20 || b[4] != '-' || b[10] != 'T' {
		return nil, false // no RFC 3339 time either (an address, say): no search for its end
	}
	ts, rest, ok := bytes.Cut(b, []byte(" "))
	if !ok || !rfc3339(ts) {
		return nil, false
	}
	return rest, true
}

// rfc3339 reports whether b is an RFC 3339 time, its offset also written
// without a colon (journalctl's "+0100").
func rfc3339(b []byte) bool {
	if len(b) < 20 || b[4] != '-' || b[7] != '-' || b[10] != 'T' {
		return false
	}
	s := string(b)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700"} {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}

// isMonth reports whether b is an English month's abbreviation ("Mar").
func isMonth(b []byte) bool {
	switch string(b) {
	case "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec":
		return true
	}
	return false
}

// syslogTag reports whether word is a syslog tag: a program's name and
// possibly its process ID in brackets, then a colon ("nginx:",
// "nginx[2345]:", "docker/4f1a2b3c[812]:"), with no other colon (an IPv6
// host has some).
func syslogTag(word []byte) bool {
	name, ok := bytes.CutSuffix(word, []byte(":"))
	if !ok || len(name) == 0 || len(name) > 64 {
		return false
	}
	if i := bytes.IndexByte(name, '['); i > 0 && name[len(name)-1] == ']' {
		name = name[:i]
	}
	for _, c := range name {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.' || c == '/' || c == '@') {
			return false
		}
	}
	return len(name) > 0
}
