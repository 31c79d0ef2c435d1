package logparse

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// dockerLine wraps line as Docker's json-file log driver writes it: one
// JSON object per write, the text with its newline in "log" (a text
// longer than 16 KiB is written as several objects, only the last of
// them ending in a newline).
func dockerLine(t *testing.T, text, stream string) string {
	t.Helper()
	b, err := json.Marshal(struct {
		Log    string `json:"log"`
		Stream string `json:"stream"`
		Time   string `json:"time"`
	}{text, stream, "2026-12-03T20:40:26.123456789Z"})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const (
	containerCombined = `203.0.113.7 - - [03/Dec/2026:20:40:25 +0000] "POST /login HTTP/1.1" 401 12 "-" "curl/8"`
	containerCaddy    = `{"level":"info","ts":1796330425.5,"logger":"http.log.access","msg":"handled request","request":{"remote_ip":"2001:db8::7","method":"GET","uri":"/feed"},"status":200}`
	// An nginx error log line, which the official image writes to the
	// container's stderr beside the access log on its stdout.
	containerErrorLine = `2026/12/03 20:40:25 [error] 29#29: *1 open() "/usr/share/nginx/html/x" failed (2: No such file or directory)`
)

// TestDockerJSONFileUnwrapped: a container's log file as Docker's
// json-file driver keeps it (/var/lib/docker/containers/<id>/<id>-json.log)
// holds each line of the server's output in the "log" field of a JSON
// object. The lines were all malformed ("no time field" or "no client
// address field"): the access lines inside are read as their own format.
func TestDockerJSONFileUnwrapped(t *testing.T) {
	log := dockerLine(t, containerCombined+"\n", "stdout") + "\n" +
		dockerLine(t, containerErrorLine+"\n", "stderr") + "\n" +
		dockerLine(t, containerCaddy+"\n", "stderr") + "\n"
	r, err := NewReader(strings.NewReader(log), "c-json.log", Options{})
	if err != nil {
		t.Fatal(err)
	}
	es := readAll(t, r)
	if len(es) != 2 {
		t.Fatalf("%d entries, malformed %v; want the two access lines", len(es), r.Samples())
	}
	if e := es[0]; e.Addr != "203.0.113.7" || e.Method != "POST" || e.Path != "/login" || e.Status != 401 || !e.Time.Equal(time.Date(2026, 12, 3, 20, 40, 25, 0, time.UTC)) {
		t.Errorf("first entry %+v, want POST /login 401 from 203.0.113.7 at the line's own time", e)
	}
	if e := es[1]; e.Addr != "2001:db8::7" || e.Method != "GET" || e.Path != "/feed" || e.Status != 200 || !e.Time.Equal(time.Unix(1796330425, 5e8)) {
		t.Errorf("second entry %+v, want GET /feed 200 from 2001:db8::7", e)
	}
	if n := r.MalformedCount(); n != 1 {
		t.Errorf("%d malformed lines, want 1 (the error log line)", n)
	}
	if s := r.Samples(); len(s) == 1 && (s[0].Line != 2 || !strings.HasPrefix(s[0].Text, "2026/12/03 20:40:25 [error]")) {
		t.Errorf("sample %+v, want line 2 showing the error log line itself", s[0])
	}
}

// TestDockerJSONFilePartialLines: json-file splits a write longer than
// 16 KiB into objects of 16 KiB, the newline only at the end of the last;
// the parts, of one stream, are one line, though the other stream's lines
// come between them.
func TestDockerJSONFilePartialLines(t *testing.T) {
	long := "/search?q=" + strings.Repeat("a", 20000)
	line := `198.51.100.9 - - [03/Dec/2026:20:40:25 +0000] "GET ` + long + ` HTTP/1.1" 414 0`
	cut := 16 << 10
	log := dockerLine(t, line[:cut], "stdout") + "\n" +
		dockerLine(t, containerCaddy+"\n", "stderr") + "\n" +
		dockerLine(t, line[cut:]+"\n", "stdout") + "\n"
	r, err := NewReader(strings.NewReader(log), "c-json.log", Options{})
	if err != nil {
		t.Fatal(err)
	}
	es := readAll(t, r)
	if len(es) != 2 {
		t.Fatalf("%d entries, malformed %v; want two", len(es), r.Samples())
	}
	if es[0].Path != "/feed" {
		t.Errorf("first entry %s, want the stderr line that came whole first", es[0].Path)
	}
	if e := es[1]; e.Addr != "198.51.100.9" || e.Path+"?"+e.Query != long || e.Status != 414 {
		t.Errorf("joined entry: addr %s status %d path of %d bytes, want the whole line's (%d bytes)", e.Addr, e.Status, len(e.Path+"?"+e.Query), len(long))
	}
}

// TestCRILogUnwrapped: containerd and CRI-O (Kubernetes'
// /var/log/pods/...) write each line as "<RFC 3339 time> <stream> <tag>
// <text>", the tag F for a whole line or the last part of one and P for
// a part that the next line of the same stream continues.
func TestCRILogUnwrapped(t *testing.T) {
	half := len(containerCombined) / 2
	log := "2026-12-03T20:40:26.000000001Z stdout P " + containerCombined[:half] + "\n" +
		"2026-12-03T20:40:26.000000002Z stderr F " + containerCaddy + "\n" +
		"2026-12-03T20:40:26.000000003Z stdout F " + containerCombined[half:] + "\n" +
		"2026-12-03T20:40:26.5+01:00 stderr F " + containerErrorLine + "\n" +
		"2026-12-03T20:40:27Z stdout F " + containerCombined + "\n"
	for _, f := range []Format{Auto, CLF} {
		r, err := NewReader(strings.NewReader(log), "pod.log", Options{Format: f})
		if err != nil {
			t.Fatal(err)
		}
		es := readAll(t, r)
		var got []string
		for _, e := range es {
			got = append(got, e.Method+" "+e.Path+" "+e.Addr)
		}
		want := []string{"GET /feed 2001:db8::7", "POST /login 203.0.113.7", "POST /login 203.0.113.7"}
		if f == CLF {
			// The Caddy line is JSON, which the CLF format does not read.
			want = want[1:]
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("format %s: entries %q (malformed %v), want %q", f, got, r.Samples(), want)
		}
	}
}

// TestNotAContainerEnvelope: lines that only look like an envelope are
// read as they are: an access log's JSON object with a "log" field among
// its own, and a W3C or CLF line.
func TestNotAContainerEnvelope(t *testing.T) {
	line := `{"log":"access","time":"2026-12-03T20:40:25Z","remote_addr":"192.0.2.4","request":"GET /x HTTP/1.1","status":200}`
	r, err := NewReader(strings.NewReader(line+"\n"+containerCombined+"\n"), "a.log", Options{})
	if err != nil {
		t.Fatal(err)
	}
	es := readAll(t, r)
	if len(es) != 2 || es[0].Addr != "192.0.2.4" || es[0].Path != "/x" || es[1].Path != "/login" {
		t.Errorf("entries %+v, malformed %v; want GET /x from 192.0.2.4 then POST /login", es, r.Samples())
	}
}

// TestContainerPartialAtEnd: a part with no last part after it (the file
// cut mid-line) is malformed, not lost silently and not read as a line.
func TestContainerPartialAtEnd(t *testing.T) {
	log := "2026-12-03T20:40:26Z stdout P " + containerCombined[:30] + "\n"
	r, err := NewReader(strings.NewReader(log), "pod.log", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if es := readAll(t, r); len(es) != 0 || r.MalformedCount() != 1 {
		t.Errorf("entries %+v, %d malformed; want none and one malformed (a line cut short)", es, r.MalformedCount())
	}
	if s := r.Samples(); len(s) != 1 || !strings.Contains(s[0].Reason, "part") {
		t.Errorf("samples %v, want one saying the line's last part is missing", s)
	}
}

// TestContainerEdges: look-alikes of an envelope are read as they are,
// not unwrapped (a json-file object with no container stream is
// malformed; a CRI look-alike is a Common Log Format line whose host is
// its first field); an empty line in an envelope is blank; parts that
// join into a line longer than 64 KiB make one malformed line, and the
// lines after it are read.
func TestContainerEdges(t *testing.T) {
	part := strings.Repeat("a", 40<<10)
	log := `{"log":"x\n","stream":"console","time":"2026-12-03T20:40:26Z"}` + "\n" + // no stream of a container
		"2026-12-03T20:40:26Z stdout X " + containerCombined + "\n" + // no tag of CRI
		"2026-13-03T20:40:26Z stdout F " + containerCombined + "\n" + // no time
		"2026-12-03T20:40:26Z stdout F \n" + // blank
		dockerLine(t, "\n", "stdout") + "\n" + // blank
		"2026-12-03T20:40:26Z stdout P " + part + "\n" +
		"2026-12-03T20:40:26Z stdout P " + part + "\n" +
		"2026-12-03T20:40:26Z stdout F " + part + "\n" +
		"2026-12-03T20:40:27Z stdout F " + containerCombined + "\n"
	r, err := NewReader(strings.NewReader(log), "edges.log", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for _, e := range readAll(t, r) {
		addrs = append(addrs, e.Addr)
	}
	if want := []string{"2026-12-03T20:40:26Z", "2026-13-03T20:40:26Z", "203.0.113.7"}; strings.Join(addrs, " ") != strings.Join(want, " ") {
		t.Errorf("entries from %q, want %q: the look-alikes as they are, then the last line unwrapped", addrs, want)
	}
	s := r.Samples()
	if r.MalformedCount() != 2 || len(s) != 2 || s[0].Line != 1 || s[1].Line != 8 || !strings.Contains(s[1].Reason, "64 KiB") || len(s[1].Text) > 120 {
		t.Errorf("%d malformed, samples %v; want the json-file look-alike (line 1) and the joined line (line 8) as longer than 64 KiB", r.MalformedCount(), s)
	}
}
