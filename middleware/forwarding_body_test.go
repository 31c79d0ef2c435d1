package middleware_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// bodyUser keys a request by the user its JSON body names, putting the
// body back for the handler, as a careful key does.
func bodyUser(r *http.Request) (string, error) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return "", err
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	var v struct{ User string }
	if json.Unmarshal(b, &v) != nil || v.User == "" {
		return "", fmt.Errorf("no user in the body: %w", keyfunc.ErrNoKey)
	}
	return "user:" + v.User, nil
}

// TestForwardingCheckLeavesTheBody: the forwarding check asked the keys
// on copies of the request that shared its body, one copied before the
// key had read it and one after: a key reading the JSON body (and putting
// it back) read r's body on the second copy and put it back there only,
// so that the decision found r's body empty and fell back to the peer's
// address (FirstOf(user, ip)), the handler got an empty body, and the
// check warned of a key that is the user's. The copies now carry no body:
// the decision and the handler read the body whole, and nothing is
// reported.
func TestForwardingCheckLeavesTheBody(t *testing.T) {
	store, _ := newStore(t)
	var got reports
	var decided []string
	key := keyfunc.Must(keyfunc.FirstOf(bodyUser, peerIP))
	rec := func(r *http.Request) (string, error) {
		k, err := key(r)
		decided = append(decided, k)
		return k, err
	}
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 100, time.Minute, rec)}, got.handler())
	var body string
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		body = string(b)
	}))
	req := httptest.NewRequest("POST", "/", strings.NewReader(`{"user":"alice"}`))
	req.Header.Set("X-Forwarded-For", "198.51.100.7")
	h.ServeHTTP(httptest.NewRecorder(), req)
	if body != `{"user":"alice"}` {
		t.Errorf("handler read the body %q, want it whole", body)
	}
	if n := len(decided); n == 0 || decided[n-1] != "0:user:alice" {
		t.Errorf("keys given %q: the decision's (the last) is not 0:user:alice (FirstOf's first part)", decided)
	}
	if w := got.forwarding(); len(w) != 0 {
		t.Errorf("reported a key of the user: %v", w)
	}
}

// TestForwardingCheckFormKey: the README's login key reads the form
// (PostFormValue under MaxBytesReader). As FirstOf(name, ip), a login
// naming its user was reported as keyed by the peer (one copy saw the
// form r had parsed, the other not); the form is read once, on r, and
// both copies see it, so nothing is reported, and the handler reads the
// name.
func TestForwardingCheckFormKey(t *testing.T) {
	loginName := func(r *http.Request) (string, error) {
		r.Body = http.MaxBytesReader(nil, r.Body, 64<<10)
		if name := r.PostFormValue("username"); name != "" {
			return name, nil
		}
		return "", fmt.Errorf("no username in the form: %w", keyfunc.ErrNoKey)
	}
	for _, tc := range []struct {
		name string
		key  keyfunc.Func
	}{
		{"FirstOf(name, ip)", keyfunc.Must(keyfunc.FirstOf(loginName, peerIP))},
		{"Join(ip, name)", keyfunc.Must(keyfunc.Join(peerIP, loginName))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, _ := newStore(t)
			var got reports
			m := middleware.MustNew(store, []*policy.Policy{fixed("login", 100, time.Minute, tc.key)}, got.handler())
			var name string
			h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { name = r.PostFormValue("username") }))
			req := httptest.NewRequest("POST", "/login", strings.NewReader("username=alice"))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("X-Forwarded-For", "198.51.100.7")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusOK || name != "alice" {
				t.Errorf("status %d, handler read username %q; want 200, alice", w.Code, name)
			}
			if tc.name == "FirstOf(name, ip)" && len(got.forwarding()) != 0 {
				t.Errorf("reported a key of the user name: %v", got.forwarding())
			}
		})
	}
}
