package logparse

import (
	"strings"
	"testing"
)

// TestJSONClientList: a JSON line whose client field holds an
// X-Forwarded-For list ("client_ip": "$http_x_forwarded_for", or nginx's
// $proxy_add_x_forwarded_for, logged behind a proxy) is read as a Common
// Log Format line whose first field holds one: the list is its
// X-Forwarded-For header (unless a field of the line gives that header)
// and its last entry the address, for trusted_proxies or trusted_hops to
// choose the client from. It was the address as it stood, which no key
// reads: every request refused for want of a key.
func TestJSONClientList(t *testing.T) {
	const log = `{"time":"2024-03-10T12:00:00Z","client_ip":"203.0.113.7, 10.0.0.2","method":"GET","path":"/a"}
{"time":"2024-03-10T12:00:01Z","remote_addr":"203.0.113.8,10.0.0.3","http_x_forwarded_for":"198.51.100.1, 203.0.113.8","method":"GET","path":"/b"}
{"time":"2024-03-10T12:00:02Z","remote_addr":"192.0.2.1","method":"GET","path":"/c"}
{"time":"2024-03-10T12:00:03Z","remote_addr":"203.0.113.9, ","method":"GET","path":"/d"}
`
	r, err := NewReader(strings.NewReader(log), "a.jsonl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range readAll(t, r) {
		s := e.Path + " " + e.Addr
		for _, h := range e.Headers {
			s += " " + h.Name + "=" + h.Value
		}
		got = append(got, s)
	}
	want := []string{
		"/a 10.0.0.2 X-Forwarded-For=203.0.113.7, 10.0.0.2",
		"/b 10.0.0.3 X-Forwarded-For=198.51.100.1, 203.0.113.8",
		"/c 192.0.2.1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if s := r.Samples(); len(s) != 1 || s[0].Line != 4 || !strings.Contains(s[0].Reason, "empty entry") {
		t.Errorf("malformed %v, want line 4, an empty entry in the list", s)
	}
}
