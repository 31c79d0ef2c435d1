package logparse

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
)

// A server run in a container writes its log to its standard output or
// error, and the container runtime keeps each line it wrote in an envelope
// of its own:
//
//   - Docker's json-file driver (/var/lib/docker/containers/<id>/<id>-json.log)
//     as a JSON object, {"log":"<line>\n","stream":"stdout","time":"..."},
//     a write longer than 16 KiB in several objects of which only the last
//     ends in a newline;
//   - containerd and CRI-O (Kubernetes' /var/log/pods/...) in the CRI
//     format, "<RFC 3339 time> <stream> <tag> <line>", the tag P for a
//     part of a line that the stream's next line continues and F for a
//     whole line or its last part.
//
// docker compose logs prints each line of a service's output after the
// container's name, padded, and "| " (see unwrapCompose); with -t, as
// docker logs -t and kubectl logs --timestamps, after the time the
// runtime received it (see cutReceivedTime).
//
// The Reader takes the server's line out of its envelope, joins its parts
// (the parts of one stream; the other stream's lines may come between
// them) and reads it in the log's format, as if the server had written it
// to a file. A line whose last part never comes is malformed.

// Streams of a container's output, indexing Reader.parts.
const (
	stdout = iota
	stderr
)

// A part is the start of a line a container runtime split, waiting for
// the rest.
type part struct {
	buf  []byte
	line int64 // the log line its first part was on
}

// dockerEnvelope is a line of Docker's json-file driver. Attrs holds the
// labels and environment variables its log-opts ask it to add.
type dockerEnvelope struct {
	Log    *string           `json:"log"`
	Stream string            `json:"stream"`
	Time   string            `json:"time"`
	Attrs  map[string]string `json:"attrs"`
}

// unwrapContainer returns the text a container runtime's envelope raw
// holds, the stream it was written to, and whether it is a part of a line
// that the stream's next text continues; ok is false when raw is no
// envelope. The text may be a subslice of raw.
func unwrapContainer(raw []byte) (text []byte, stream int, partial, ok bool) {
	if bytes.HasPrefix(raw, []byte(`{"log":`)) {
		return unwrapDocker(raw)
	}
	// A CRI line starts with an RFC 3339 date ("2026-12-03T"): looked
	// for first, so that a Common Log Format line (an address first) costs
	// a few comparisons.
	if len(raw) > 11 && '0' <= raw[0] && raw[0] <= '9' && raw[4] == '-' && raw[7] == '-' && raw[10] == 'T' {
		return unwrapCRI(raw)
	}
	return nil, 0, false, false
}

// maxComposeName bounds the name before a docker compose logs line.
const maxComposeName = 128

// unwrapCompose returns the line that docker compose logs printed in raw
// after its prefix, the container's name padded with spaces and "| "
// ("nginx-1  | <line>"; Compose v1 "proj_nginx_1  | <line>"), and, with
// -t, the time Docker received the line (RFC 3339) and a space; ok is
// false when raw has no such prefix. A Common Log Format line never has
// one: its second field ("-", the ident) is no '|'. The text is a
// subslice of raw.
func unwrapCompose(raw []byte) (text []byte, ok bool) {
	n := 0
	for n < len(raw) && n <= maxComposeName && isComposeName(raw[n], n == 0) {
		n++
	}
	if n == 0 || n > maxComposeName || n == len(raw) || raw[n] != ' ' {
		return nil, false
	}
	i := n
	for i < len(raw) && raw[i] == ' ' {
		i++
	}
	if i == len(raw) || raw[i] != '|' || i+1 < len(raw) && raw[i+1] != ' ' {
		return nil, false
	}
	text = raw[min(i+2, len(raw)):]
	if rest, ok := cutReceivedTime(text); ok || rfc3339(text) {
		text = rest // nil for the time alone: an empty line
	}
	return text, true
}

// cutReceivedTime returns what follows the time a container runtime
// received a line, RFC 3339, and a space, that start raw ("docker logs
// -t", "kubectl logs --timestamps", docker compose logs -t), and whether
// raw starts with them. A stream's name after the time makes it a CRI
// line (see unwrapCRI) or one that only looks like one: no such time.
// The text is a subslice of raw.
func cutReceivedTime(raw []byte) ([]byte, bool) {
	if len(raw) < 22 || raw[4] != '-' || raw[10] != 'T' {
		return nil, false
	}
	ts, rest, ok := bytes.Cut(raw, []byte(" "))
	if !ok || !rfc3339(ts) || bytes.HasPrefix(rest, []byte("stdout ")) || bytes.HasPrefix(rest, []byte("stderr ")) {
		return nil, false
	}
	return rest, true
}

// isComposeName reports whether c may be in a container's name, the first
// byte if first.
func isComposeName(c byte, first bool) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || !first && (c == '_' || c == '.' || c == '-')
}

// unwrapDocker reads a json-file line: an object with a string "log", a
// "stream" of stdout or stderr and a "time", and no fields but those and
// "attrs" (an access log's own JSON object with a "log" field is no
// envelope).
func unwrapDocker(raw []byte) (text []byte, stream int, partial, ok bool) {
	var env dockerEnvelope
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil || dec.More() || env.Log == nil || env.Time == "" {
		return nil, 0, false, false
	}
	if stream, ok = streamOf(env.Stream); !ok {
		return nil, 0, false, false
	}
	log := *env.Log
	if strings.HasSuffix(log, "\n") {
		return []byte(log[:len(log)-1]), stream, false, true
	}
	return []byte(log), stream, true, true
}

// unwrapCRI reads a CRI line: "<RFC 3339 time> <stdout|stderr> <tag>
// <text>", the tag a list separated by colons whose first element is P
// (partial) or F (full).
func unwrapCRI(raw []byte) (text []byte, stream int, partial, ok bool) {
	ts, rest, _ := bytes.Cut(raw, []byte(" "))
	name, rest, _ := bytes.Cut(rest, []byte(" "))
	tag, text, _ := bytes.Cut(rest, []byte(" "))
	if stream, ok = streamOf(string(name)); !ok {
		return nil, 0, false, false
	}
	flag, _, _ := bytes.Cut(tag, []byte(":"))
	switch string(flag) {
	case "P":
		partial = true
	case "F":
	default:
		return nil, 0, false, false
	}
	if _, err := time.Parse(time.RFC3339Nano, string(ts)); err != nil {
		return nil, 0, false, false
	}
	return text, stream, partial, true
}

func streamOf(name string) (int, bool) {
	switch name {
	case "stdout":
		return stdout, true
	case "stderr":
		return stderr, true
	}
	return 0, false
}

// joinParts adds text, written to stream, to the parts of the line it
// continues. It returns the whole line and true once text is its last
// part, nil and false while more is to come. The line returned is valid
// until the next call. The parts kept are cut at one byte more than the
// longest line, which is malformed however long it grows.
func (r *Reader) joinParts(text []byte, stream int, partial bool) ([]byte, bool) {
	p := &r.parts[stream]
	if len(p.buf) == 0 {
		if !partial {
			return text, true
		}
		p.line = r.line
	}
	if room := maxLine + 1 - len(p.buf); len(text) > room {
		text = text[:room]
	}
	p.buf = append(p.buf, text...)
	if partial {
		return nil, false
	}
	line := p.buf
	p.buf = p.buf[:0]
	return line, true
}

// unfinished records, at the end of the log, each line a container
// runtime split whose last part never came.
func (r *Reader) unfinished() {
	for i := range r.parts {
		p := &r.parts[i]
		if len(p.buf) == 0 {
			continue
		}
		at := r.line
		r.line = p.line
		r.malformed(p.buf, "the log ends before the last part of this line (a container runtime's partial line)")
		r.line = at
		p.buf = p.buf[:0]
	}
}
