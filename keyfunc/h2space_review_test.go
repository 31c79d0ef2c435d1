package keyfunc_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// TestHeaderOverHTTP2IgnoresSurroundingWhitespace: net/http trims the
// white space around an HTTP/1.1 field value, but its HTTP/2 server hands
// " key\t" over as sent, and RFC 9110 section 5.5 excludes that white space
// from the value. A client speaking HTTP/2 must not get a fresh key per
// padding of one credential ("key", " key", "key ", "  key", ...).
func TestHeaderOverHTTP2IgnoresSurroundingWhitespace(t *testing.T) {
	funcs := map[string]keyfunc.Func{
		"X-Api-Key":     keyfunc.Must(keyfunc.Header("X-Api-Key")),
		"Authorization": keyfunc.Must(keyfunc.Header("Authorization")),
		"X-User":        keyfunc.Must(keyfunc.Header("X-User")),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 {
			http.Error(w, "not HTTP/2: "+r.Proto, http.StatusBadRequest)
			return
		}
		name := r.URL.Query().Get("h")
		k, err := funcs[name](r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		io.WriteString(w, k)
	})
	srv := httptest.NewUnstartedServer(mux)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()

	for name, v := range map[string]string{"X-Api-Key": "key", "Authorization": "Bearer t", "X-User": "alice"} {
		want, err := funcs[name](newReq("192.0.2.1:1", name, v))
		if err != nil {
			t.Fatal(err)
		}
		for _, padded := range []string{" " + v, v + "\t", "  " + v + " "} {
			req, err := http.NewRequest(http.MethodGet, srv.URL+"/?h="+name, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header[name] = []string{padded}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || string(body) != want {
				t.Errorf("Header(%q) over HTTP/2 with %q: %d %q; want the key of %q, %q", name, padded, resp.StatusCode, body, v, want)
			}
		}
	}
}
