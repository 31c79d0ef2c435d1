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
//     journalctl -o short-iso with "+0100"), and as journalctl's other
//     short outputs write it (-o short-precise "Mar 10 12:00:00.123456",
//     -o short-full "Sun 2024-03-10 12:00:00 CET", -o short-unix
//     "1710072000.123456");
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
// after it: "Mar 10 12:00:00" (the day padded with a space or a zero),
// also with a fraction of a second (journalctl -o short-precise:
// "Mar 10 12:00:00.123456"); an RFC 3339 time, also with its offset
// written "+0100"; or journalctl's -o short-full ("Sun 2024-03-10
// 12:00:00 CET") and -o short-unix ("1710072000.123456").
func cutSyslogTime(b []byte) ([]byte, bool) {
	if len(b) > 16 && b[3] == ' ' && b[6] == ' ' && isMonth(b[:3]) {
		day := b[4:6]
		if day[0] == ' ' {
			day = day[1:]
		}
		if !allDigits(string(day)) || !isClock(b[7:15]) {
			return nil, false
		}
		return cutFraction(b[15:], 0)
	}
	if len(b) > 28 && b[3] == ' ' && b[14] == ' ' && b[23] == ' ' && isWeekday(b[:3]) {
		// short-full: the zone is an abbreviation ("CET") or, for a zone
		// that has none, its offset ("+03").
		date := b[4:14]
		if date[4] != '-' || date[7] != '-' || !allDigits(string(date[:4])+string(date[5:7])+string(date[8:])) || !isClock(b[15:23]) {
			return nil, false
		}
		zone, rest, ok := bytes.Cut(b[24:], []byte(" "))
		if !ok || !isZone(zone) {
			return nil, false
		}
		return rest, true
	}
	if i := bytes.IndexByte(b[:min(len(b), 12)], '.'); i >= 9 && allDigits(string(b[:i])) {
		// short-unix: Unix seconds and microseconds.
		return cutFraction(b[i:], 6)
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

// cutFraction returns what follows the space that starts b, or a fraction
// of a second (a point and digits: exactly digits of them, or 1 to 9 when
// digits is 0) and the space after it.
func cutFraction(b []byte, digits int) ([]byte, bool) {
	if len(b) > 0 && b[0] == '.' {
		n := 1
		for n < len(b) && '0' <= b[n] && b[n] <= '9' {
			n++
		}
		if digits == 0 && (n < 2 || n > 10) || digits > 0 && n != digits+1 {
			return nil, false
		}
		b = b[n:]
	} else if digits > 0 {
		return nil, false
	}
	if len(b) < 2 || b[0] != ' ' {
		return nil, false
	}
	return b[1:], true
}

// isClock reports whether b is a time of day, "hh:mm:ss".
func isClock(b []byte) bool {
	return len(b) == 8 && b[2] == ':' && b[5] == ':' && allDigits(string(b[:2])+string(b[3:5])+string(b[6:]))
}

// isWeekday reports whether b is an English weekday's abbreviation ("Sun").
func isWeekday(b []byte) bool {
	switch string(b) {
	case "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun":
		return true
	}
	return false
}

// isZone reports whether b names a time zone as strftime's %Z writes it:
// an abbreviation of letters ("CET", "UTC"), or an offset ("+03", "-0330")
// for a zone that has none.
func isZone(b []byte) bool {
	if len(b) < 2 || len(b) > 6 {
		return false
	}
	if b[0] == '+' || b[0] == '-' {
		return allDigits(string(b[1:]))
	}
	for _, c := range b {
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
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
