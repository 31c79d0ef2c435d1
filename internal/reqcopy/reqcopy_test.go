package reqcopy

import (
	"context"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
)

type key struct{}

// TestBack: what a handler sets on a copy of r is given to r: the forms
// where r has none (r's own are kept), and the pattern and its path
// values when the pattern changed (a router routed the copy).
func TestBack(t *testing.T) {
	r := httptest.NewRequest("POST", "/items/7/files/a/b", nil)
	r.Pattern = "/" // routed further out (see TestBackUnrouted)
	c := r.WithContext(context.WithValue(r.Context(), key{}, 1))
	c.Form = url.Values{"a": {"1"}}
	c.PostForm = url.Values{"b": {"2"}}
	c.MultipartForm = &multipart.Form{}
	c.Pattern = "POST /items/{id}/files/{rest...}"
	c.SetPathValue("id", "7")
	c.SetPathValue("rest", "a/b")
	c.SetPathValue("other", "x") // not the pattern's: given too, as a router serving r leaves it
	Back(r, c)
	if r.Form.Get("a") != "1" || r.PostForm.Get("b") != "2" || r.MultipartForm != c.MultipartForm {
		t.Errorf("Back: forms %v %v %v, want the copy's", r.Form, r.PostForm, r.MultipartForm)
	}
	if r.Pattern != c.Pattern || r.PathValue("id") != "7" || r.PathValue("rest") != "a/b" || r.PathValue("other") != "x" {
		t.Errorf("Back: pattern %q id %q rest %q other %q, want the copy's pattern and its path values", r.Pattern, r.PathValue("id"), r.PathValue("rest"), r.PathValue("other"))
	}

	// r's own forms are kept.
	own := url.Values{"mine": {"1"}}
	r = httptest.NewRequest("GET", "/items/7", nil)
	r.Form, r.Pattern = own, "/items/{id}"
	r.SetPathValue("id", "7")
	c = r.WithContext(context.Background())
	c.Form = url.Values{"a": {"1"}}
	Back(r, c)
	if r.Form.Get("mine") != "1" || r.Form.Get("a") != "" || r.PathValue("id") != "7" {
		t.Errorf("Back: form %v id %q, want r's own form and path value", r.Form, r.PathValue("id"))
	}

	// A request given itself is left as it is.
	Back(r, r)
	if r.Form.Get("mine") != "1" || r.Pattern != "/items/{id}" || r.PathValue("id") != "7" {
		t.Errorf("Back(r, r) changed r: form %v pattern %q id %q", r.Form, r.Pattern, r.PathValue("id"))
	}
}

// TestBackAllocatesNothing: with no path value to give (the pattern
// unchanged, or a pattern without wildcards), Back allocates nothing.
func TestBackAllocatesNothing(t *testing.T) {
	r := httptest.NewRequest("POST", "/items", nil)
	c := r.WithContext(context.Background())
	c.Form = url.Values{}
	c.Pattern = "POST /items"
	if n := testing.AllocsPerRun(100, func() {
		r.Form, r.Pattern = nil, ""
		Back(r, c)
	}); n != 0 {
		t.Errorf("Back: %v allocations, want 0", n)
	}
}

// TestBackKeepsRequestFields: Back gives r c's path values by taking a
// copy of c under r's context, then every other field of r's own. A
// field net/http adds to Request must be added there: this lists them.
func TestBackKeepsRequestFields(t *testing.T) {
	var exported []string
	for f := range reflect.TypeFor[http.Request]().Fields() {
		if f.IsExported() {
			exported = append(exported, f.Name)
		}
	}
	known := []string{"Method", "URL", "Proto", "ProtoMajor", "ProtoMinor", "Header", "Body", "GetBody", "ContentLength",
		"TransferEncoding", "Close", "Host", "Form", "PostForm", "MultipartForm", "Trailer", "RemoteAddr", "RequestURI",
		"TLS", "Cancel", "Response", "Pattern"}
	if !slices.Equal(exported, known) {
		t.Errorf("http.Request's exported fields are %v, Back knows %v: keep the new ones of r", exported, known)
	}

	r := httptest.NewRequest("POST", "/items/7", nil)
	r.Header.Set("X-Own", "1")
	body := r.Body
	c := r.WithContext(context.WithValue(r.Context(), key{}, 1))
	c.Body, c.Header, c.Host, c.RemoteAddr = http.NoBody, http.Header{}, "copy.example", "192.0.2.99:1"
	c.Pattern = "POST /items/{id}"
	c.SetPathValue("id", "7")
	Back(r, c)
	if r.Body != body || r.Header.Get("X-Own") != "1" || r.Host != "example.com" || r.RemoteAddr != "192.0.2.1:1234" || r.Context().Value(key{}) != nil {
		t.Errorf("Back took c's fields: body %v header %v host %q remote %q context %v", r.Body, r.Header, r.Host, r.RemoteAddr, r.Context())
	}
	if r.Pattern != c.Pattern || r.PathValue("id") != "7" {
		t.Errorf("Back: pattern %q id %q, want the copy's", r.Pattern, r.PathValue("id"))
	}
}

// TestBackUnrouted: to an r no router served, Back gives the pattern and
// its path values by SetPathValue, writing no other field of r (see
// TestCopyBackWritesOnlyThePathValues in package middleware): the values
// of the pattern's wildcards, and chi's "*" of a Mount, which its route
// pattern leaves out; a value neither names (set on the copy by no
// router) is not given.
func TestBackUnrouted(t *testing.T) {
	r := httptest.NewRequest("GET", "/api/items/7", nil)
	c := r.WithContext(context.WithValue(r.Context(), key{}, 1))
	c.Pattern = "/api/items/{id}"
	c.SetPathValue("*", "items/7")
	c.SetPathValue("id", "7")
	c.SetPathValue("other", "x")
	Back(r, c)
	if r.Pattern != c.Pattern || r.PathValue("id") != "7" || r.PathValue("*") != "items/7" || r.PathValue("other") != "" {
		t.Errorf("Back: pattern %q id %q * %q other %q, want the copy's pattern, id and *, no other", r.Pattern, r.PathValue("id"), r.PathValue("*"), r.PathValue("other"))
	}
	if r.Context().Value(key{}) != nil {
		t.Errorf("Back took c's context")
	}
	// r's values are its own: setting c's again leaves r's as they are.
	c.SetPathValue("id", "8")
	if r.PathValue("id") != "7" {
		t.Errorf("r shares its path values with c: id %q after c's changed", r.PathValue("id"))
	}
}

// TestBackHandSet: to an r no router served whose caller set path values
// by hand (SetPathValue), in a map r shares with its copies (c, and a
// sibling its caller made), Back gives c's pattern and path values
// without writing into that map: the sibling, which no router served,
// shows none of them, and r keeps its own.
func TestBackHandSet(t *testing.T) {
	if !pathFields.ok {
		t.Fatalf("net/http's Request has no pat, matches and otherValues fields: every request no router served is taken to hold path values set by hand, and Back copies the whole of a routed one")
	}
	r := httptest.NewRequest("GET", "/items/7", nil)
	if handSet(r) {
		t.Errorf("handSet(a new request) = true, want false")
	}
	r.SetPathValue("tenant", "acme")
	if !handSet(r) {
		t.Errorf("handSet(a request with a value set by hand) = false, want true")
	}
	sibling := r.WithContext(context.Background())
	c := r.WithContext(context.WithValue(r.Context(), key{}, 1))
	mux := http.NewServeMux() // sets c's pattern and its values, not the map
	mux.HandleFunc("GET /items/{id}", func(http.ResponseWriter, *http.Request) {})
	mux.ServeHTTP(httptest.NewRecorder(), c)
	Back(r, c)
	if r.Pattern != "GET /items/{id}" || r.PathValue("id") != "7" || r.PathValue("tenant") != "acme" {
		t.Errorf("Back: pattern %q id %q tenant %q, want the copy's pattern and id, r's tenant", r.Pattern, r.PathValue("id"), r.PathValue("tenant"))
	}
	if v := sibling.PathValue("id"); v != "" {
		t.Errorf("a sibling of r: PathValue(id) = %q, want none (written into the map it shares)", v)
	}
	if r.Context().Value(key{}) != nil {
		t.Errorf("Back took c's context")
	}
}

// TestTrailer: a chunked request without a Trailer map is given an empty
// one, which its copies share; any other request is left as it is.
func TestTrailer(t *testing.T) {
	r := httptest.NewRequest("POST", "/", nil)
	r.TransferEncoding = []string{"chunked"}
	Trailer(r)
	c := r.WithContext(context.Background())
	if r.Trailer == nil {
		t.Fatal("Trailer left a chunked request without a Trailer map")
	}
	r.Trailer.Set("X-Sum", "7") // as net/http adds an unannounced trailer
	if c.Trailer.Get("X-Sum") != "7" {
		t.Errorf("the copy's trailer %v, want X-Sum 7", c.Trailer)
	}
	own := http.Header{"X-Own": nil}
	r.Trailer = own
	Trailer(r)
	if r.Trailer.Get("X-Sum") != "" || len(r.Trailer) != 1 {
		t.Errorf("Trailer replaced the request's map: %v", r.Trailer)
	}
	r = httptest.NewRequest("POST", "/", nil)
	if Trailer(r); r.Trailer != nil {
		t.Errorf("Trailer gave a request with no transfer coding a map: %v", r.Trailer)
	}
}

// TestBackRoutedWritesOnlyThePathValues: to an r a router served, Back
// gives c's pattern and path values writing no other field of r, which a
// goroutine of r's caller may be reading meanwhile (go test -race); were
// net/http's fields of them gone, it takes a copy of c, keeping r's own.
func TestBackRoutedWritesOnlyThePathValues(t *testing.T) {
	for _, fields := range []bool{true, false} {
		r := httptest.NewRequest("GET", "/api/items/7", nil)
		r.Pattern = "/api/"
		c := r.WithContext(context.WithValue(r.Context(), key{}, 1))
		mux := http.NewServeMux()
		mux.HandleFunc("GET /api/items/{id}", func(http.ResponseWriter, *http.Request) {})
		mux.ServeHTTP(httptest.NewRecorder(), c)
		done := make(chan string)
		if fields {
			go func() { done <- r.Method + " " + r.URL.Path + " " + r.Host }() // reads r as Back writes it
		} else {
			defer func(f bool) { pathFields.ok = f }(pathFields.ok)
			pathFields.ok = false
			go func() { done <- "GET /api/items/7 example.com" }()
		}
		Back(r, c)
		if got := <-done; got != "GET /api/items/7 example.com" {
			t.Errorf("the caller's goroutine read %q", got)
		}
		if r.Pattern != "GET /api/items/{id}" || r.PathValue("id") != "7" || r.Context().Value(key{}) != nil {
			t.Errorf("fields %v: Back: pattern %q id %q context value %v, want the copy's pattern and id, r's context", fields, r.Pattern, r.PathValue("id"), r.Context().Value(key{}))
		}
	}
}

// TestFormsWritesNoFormTheCopyLacks: Forms gives r the forms a handler
// parsed on c, and writes none of r's form fields when c has none to give
// (nil over nil), so a goroutine of r's caller reading them meanwhile
// does not race with a request whose handler parsed nothing (go test
// -race); a form r has already is kept.
func TestFormsWritesNoFormTheCopyLacks(t *testing.T) {
	r := httptest.NewRequest("POST", "/?a=1", strings.NewReader("b=2"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	c := r.WithContext(context.WithValue(r.Context(), key{}, 1))
	done := make(chan bool)
	go func() { done <- r.Form == nil && r.PostForm == nil && r.MultipartForm == nil }()
	Forms(r, c)
	if !<-done || r.Form != nil || r.PostForm != nil || r.MultipartForm != nil {
		t.Fatalf("Forms with no form on the copy: r's forms %v %v %v, want none", r.Form, r.PostForm, r.MultipartForm)
	}
	if err := c.ParseForm(); err != nil {
		t.Fatal(err)
	}
	Forms(r, c)
	if r.FormValue("a") != "1" || r.PostFormValue("b") != "2" || r.MultipartForm != nil {
		t.Errorf("Forms after the copy parsed its form: Form %v PostForm %v MultipartForm %v, want the copy's", r.Form, r.PostForm, r.MultipartForm)
	}
	own := url.Values{"own": {"x"}}
	r.Form = own
	c.Form = url.Values{"a": {"3"}}
	if Forms(r, c); r.Form.Get("own") != "x" {
		t.Errorf("Forms replaced r's own Form with %v", r.Form)
	}
}
