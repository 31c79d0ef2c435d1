// Package formtest holds what the tests of a request given back what its
// handler set on a copy of it (see internal/reqcopy) share: a multipart
// form whose file goes to disk, and what a caller sees of a request.
package formtest

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/go-chi/chi/v5"
)

// Describe tells the forms, the pattern and the path value id of r.
func Describe(r *http.Request) string {
	mf := "nil"
	if f := r.MultipartForm; f != nil {
		var files []string
		for name, fhs := range f.File {
			for _, fh := range fhs {
				files = append(files, fmt.Sprintf("%s=%s(%d)", name, fh.Filename, fh.Size))
			}
		}
		mf = fmt.Sprint(f.Value, files)
	}
	return fmt.Sprintf("form %v post %v multipart %s pattern %q id %q", r.Form, r.PostForm, mf, r.Pattern, r.PathValue("id"))
}

// Multipart returns a multipart form of a field a=1 and a file f of
// 4 KiB, which goes to disk when parsed with less memory.
func Multipart(t testing.TB) (contentType string, body *bytes.Buffer) {
	t.Helper()
	body = &bytes.Buffer{}
	mw := multipart.NewWriter(body)
	if err := mw.WriteField("a", "1"); err != nil {
		t.Fatal(err)
	}
	fw, err := mw.CreateFormFile("f", "f.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fw.Write(bytes.Repeat([]byte("x"), 4096)); err != nil {
		t.Fatal(err)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return mw.FormDataContentType(), body
}

// Routes serves handler at POST and GET /items/{id} with router ("chi"
// or "ServeMux"), caller and wrap (middlewares) further out, caller
// first: under chi they are its middlewares (r.Use), which it serves a
// copy of the request (under its route context) and whose request it
// routes, setting its pattern and path values as http.ServeMux does;
// ServeMux is wrapped by them, its request net/http's own.
func Routes(t testing.TB, router string, caller, wrap func(http.Handler) http.Handler, handler http.HandlerFunc) http.Handler {
	t.Helper()
	switch router {
	case "chi":
		cr := chi.NewRouter()
		cr.Use(caller, wrap)
		cr.Post("/items/{id}", handler)
		cr.Get("/items/{id}", handler)
		return cr
	case "ServeMux":
		mux := http.NewServeMux()
		mux.HandleFunc("POST /items/{id}", handler)
		mux.HandleFunc("GET /items/{id}", handler)
		return caller(wrap(mux))
	}
	t.Fatalf("unknown router %q", router)
	return nil
}

// A Server is a test server whose requests are sent one at a time, each
// waited for until net/http is done with it: its response read and its
// connection idle again (net/http has removed the files of its request's
// MultipartForm then), or closed.
type Server struct {
	*httptest.Server
	t    testing.TB
	mu   sync.Mutex
	busy map[net.Conn]bool // the connections serving a request
	done chan struct{}     // a request is over
}

// NewServer starts a Server of h, closed when the test ends.
func NewServer(t testing.TB, h http.Handler) *Server {
	t.Helper()
	s := &Server{Server: httptest.NewUnstartedServer(h), t: t, busy: map[net.Conn]bool{}, done: make(chan struct{}, 16)}
	s.Config.ConnState = func(c net.Conn, state http.ConnState) {
		s.mu.Lock()
		defer s.mu.Unlock()
		switch state {
		case http.StateActive:
			s.busy[c] = true
		case http.StateIdle, http.StateClosed, http.StateHijacked:
			if s.busy[c] {
				delete(s.busy, c)
				s.done <- struct{}{}
			}
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// Do sends a request and waits until net/http is done with it.
func (s *Server) Do(method, target, contentType string, body io.Reader) {
	s.t.Helper()
	req, err := http.NewRequest(method, s.URL+target, body)
	if err != nil {
		s.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := s.Client().Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	<-s.done
}
