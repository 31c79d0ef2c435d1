package reqcopy

import (
	"context"
	"crypto/tls"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

// TestBackKeepsEveryFieldOfItsOwn: to a routed r, Back gives c's pattern
// and path values and keeps every other field of r's own, however c's
// differs: each exported field of Request but Pattern is set apart on c
// (as a handler may, on the copy it was given), and r must show its own.
func TestBackKeepsEveryFieldOfItsOwn(t *testing.T) {
	r := httptest.NewRequest("POST", "/items/7", nil)
	r.Pattern = "/" // routed further out: Back takes c's fields
	r.TransferEncoding = []string{"chunked"}
	r.Trailer = http.Header{"X-Own": nil}
	r.Form, r.PostForm, r.MultipartForm = url.Values{}, url.Values{}, &multipart.Form{}
	r.GetBody = func() (io.ReadCloser, error) { return http.NoBody, nil }
	r.Response = &http.Response{}
	cancel := make(chan struct{})
	//lint:ignore SA1019 Back keeps it as every other field
	r.Cancel = cancel
	own := *r

	c := r.WithContext(context.WithValue(r.Context(), key{}, 1))
	c.Method, c.URL, c.Proto, c.ProtoMajor, c.ProtoMinor = "PUT", &url.URL{Path: "/other"}, "HTTP/2.0", 2, 0
	c.Header, c.Body, c.GetBody, c.ContentLength, c.TransferEncoding = http.Header{}, http.NoBody, nil, 99, nil
	c.Close, c.Host, c.Form, c.PostForm, c.MultipartForm = true, "copy.example", url.Values{}, url.Values{}, &multipart.Form{}
	c.Trailer, c.RemoteAddr, c.RequestURI, c.TLS, c.Response = http.Header{}, "192.0.2.99:1", "/other", &tls.ConnectionState{}, &http.Response{}
	//lint:ignore SA1019 set apart on the copy, as the rest
	c.Cancel = make(chan struct{})
	c.Pattern = "POST /items/{id}"
	c.SetPathValue("id", "7")
	Back(r, c)

	if r.Pattern != c.Pattern || r.PathValue("id") != "7" {
		t.Errorf("Back: pattern %q id %q, want the copy's", r.Pattern, r.PathValue("id"))
	}
	for _, f := range []struct {
		name string
		same bool
	}{
		{"Method", r.Method == own.Method}, {"URL", r.URL == own.URL}, {"Proto", r.Proto == own.Proto},
		{"ProtoMajor", r.ProtoMajor == own.ProtoMajor}, {"ProtoMinor", r.ProtoMinor == own.ProtoMinor},
		{"Header", sameMap(r.Header, own.Header)},
		{"Body", r.Body == own.Body}, {"GetBody", r.GetBody != nil}, {"ContentLength", r.ContentLength == own.ContentLength},
		{"TransferEncoding", len(r.TransferEncoding) == 1}, {"Close", r.Close == own.Close}, {"Host", r.Host == own.Host},
		{"Form", sameMap(r.Form, own.Form)},
		{"PostForm", sameMap(r.PostForm, own.PostForm)}, {"MultipartForm", r.MultipartForm == own.MultipartForm},
		{"Trailer", sameMap(r.Trailer, own.Trailer)}, {"RemoteAddr", r.RemoteAddr == own.RemoteAddr},
		{"RequestURI", r.RequestURI == own.RequestURI}, {"TLS", r.TLS == own.TLS}, {"Response", r.Response == own.Response},
		{"Cancel", keptCancel(r, cancel)}, {"Context", r.Context().Value(key{}) == nil},
	} {
		if !f.same {
			t.Errorf("Back took the copy's %s", f.name)
		}
	}
}

// keptCancel reports whether r's Cancel is cancel.
func keptCancel(r *http.Request, cancel chan struct{}) bool {
	//lint:ignore SA1019 Back keeps it as every other field
	return r.Cancel == (<-chan struct{})(cancel)
}

// sameMap reports whether a and b are one map (not two equal ones).
func sameMap[M ~map[string][]string](a, b M) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	const probe = "\x00reqcopy-probe"
	a[probe] = nil
	_, ok := b[probe]
	delete(a, probe)
	return ok
}

// TestBackUnchangedPatternGivesNothing: Back gives the path values a
// router matched on c only when it changed the pattern; with c's pattern
// r's own, r keeps its own values even where a handler set others on c
// (a map of c's own: r had none).
func TestBackUnchangedPatternGivesNothing(t *testing.T) {
	r := httptest.NewRequest("GET", "/items/7", nil)
	r.Pattern = "/items/{id}"
	c := r.WithContext(context.WithValue(r.Context(), key{}, 1))
	c.SetPathValue("id", "8")
	Back(r, c)
	if r.Pattern != "/items/{id}" || r.PathValue("id") != "" || r.Context().Value(key{}) != nil {
		t.Errorf("Back with the pattern unchanged: pattern %q id %q context value %v; want r's pattern, no id, r's context", r.Pattern, r.PathValue("id"), r.Context().Value(key{}))
	}
}
