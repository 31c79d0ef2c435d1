package reqcopy

import (
	"context"
	"mime/multipart"
	"net/http/httptest"
	"net/url"
	"testing"
)

type key struct{}

// TestBack: what a handler sets on a copy of r is given to r: the forms
// where r has none (r's own are kept), and the pattern and its path
// values when the pattern changed (a router routed the copy).
func TestBack(t *testing.T) {
	r := httptest.NewRequest("POST", "/items/7/files/a/b", nil)
	c := r.WithContext(context.WithValue(r.Context(), key{}, 1))
	c.Form = url.Values{"a": {"1"}}
	c.PostForm = url.Values{"b": {"2"}}
	c.MultipartForm = &multipart.Form{}
	c.Pattern = "POST /items/{id}/files/{rest...}"
	c.SetPathValue("id", "7")
	c.SetPathValue("rest", "a/b")
	c.SetPathValue("other", "x") // not the pattern's
	Back(r, c)
	if r.Form.Get("a") != "1" || r.PostForm.Get("b") != "2" || r.MultipartForm != c.MultipartForm {
		t.Errorf("Back: forms %v %v %v, want the copy's", r.Form, r.PostForm, r.MultipartForm)
	}
	if r.Pattern != c.Pattern || r.PathValue("id") != "7" || r.PathValue("rest") != "a/b" || r.PathValue("other") != "" {
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
