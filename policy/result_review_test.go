package policy_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestPrepareEmptyKeyIsMissing: a key function of the application's own
// that returns "" with a nil error (r.Header.Get of a missing header) has
// no key for the request, as keyfunc's Join, FirstOf and Namespace treat
// it. Prepare must answer a *KeyError (or skip the policy), never put every
// such request into the one bucket "name:", which a single client could
// exhaust for everyone (DESIGN: never a silent shared bucket).
func TestPrepareEmptyKeyIsMissing(t *testing.T) {
	userHeader := func(r *http.Request) (string, error) { return r.Header.Get("X-User"), nil }
	for _, action := range []policy.KeyAction{policy.RejectBadRequest, policy.SkipPolicy} {
		p := policy.Must(policy.PerMinute("per-user", 5, userHeader, policy.OnKeyError(action)))
		s, err := policy.NewSet([]*policy.Policy{p})
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest("GET", "/", nil)
		var res policy.Result
		err = s.Prepare(r, s.Match(r), &res)
		switch action {
		case policy.SkipPolicy:
			if err != nil || res.Len() != 0 {
				t.Errorf("%v: Prepare = %v with %d checks (key %q); want the policy skipped", action, err, res.Len(), keyOrNone(&res))
			}
		default:
			var ke *policy.KeyError
			if !errors.As(err, &ke) || !errors.Is(err, keyfunc.ErrNoKey) {
				t.Errorf("%v: Prepare = %v (key %q); want a *KeyError matching keyfunc.ErrNoKey", action, err, keyOrNone(&res))
			}
		}
	}
}

func keyOrNone(res *policy.Result) string {
	if res.Len() == 0 {
		return ""
	}
	return res.Key(0)
}

// TestRouteKeyUsesThePatternFunc: a Set whose pattern function finds the
// route of a request before the router runs (ServeMuxPattern, as
// examples/config uses, or the chi Find function of the WithRoutes doc)
// matches its route policies, but a key with the route part
// (keyfunc.Route, the config's "route") reads only the pattern the router
// sets, so every request those policies match was rejected for want of a
// key. The key should be the pattern the Set matched with.
func TestRouteKeyUsesThePatternFunc(t *testing.T) {
	cfg, err := policy.ParseConfig([]byte("policies:\n  - {name: login, limit: 5, window: 1m, key: [ip, route], routes: [\"POST /login\"]}\n"), "route.yaml")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /login", func(http.ResponseWriter, *http.Request) {})
	s, err := policy.NewSet(cfg.Policies, policy.WithPatternFunc(policy.ServeMuxPattern(mux)))
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("POST", "/login", nil)
	var res policy.Result
	if mask := s.Match(r); mask != 1 {
		t.Fatalf("Match = %b, want 1", mask)
	}
	if err := s.Prepare(r, 1, &res); err != nil || res.Len() != 1 {
		t.Errorf("Prepare before the mux = %v (%d checks); want the route's key", err, res.Len())
	}
}

// TestPrepareBoundsLongKeys: a key function of the application's own (a
// lone keyfunc.Header, say) may return a value of any length, chosen by the
// client: Prepare writes one over keyfunc.MaxKeyLen bytes as a digest ("#"
// and keyfunc.HashLen characters, as keyfunc.Secret writes it), so that a
// 100 KB header does not become a 100 KB store key per request; distinct
// values keep distinct keys, and a short one stays readable.
func TestPrepareBoundsLongKeys(t *testing.T) {
	hdr := keyfunc.Must(keyfunc.Header("X-Client"))
	p := policy.Must(policy.PerMinute("per-key", 5, hdr))
	s, err := policy.NewSet([]*policy.Policy{p})
	if err != nil {
		t.Fatal(err)
	}
	keyOf := func(v string) string {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("X-Client", v)
		var res policy.Result
		if err := s.Prepare(r, s.Match(r), &res); err != nil || res.Len() != 1 {
			t.Fatalf("Prepare: %v (%d checks)", err, res.Len())
		}
		return strings.Clone(res.Key(0))
	}
	long1, long2 := strings.Repeat("a", 100_000), strings.Repeat("a", 99_999)+"b"
	k1, k2 := keyOf(long1), keyOf(long2)
	if want := len("per-key:#") + keyfunc.HashLen; len(k1) != want || len(k2) != want || k1 == k2 {
		t.Errorf("long keys of %d and %d bytes (%q..., %q...); want two distinct digests of %d bytes", len(k1), len(k2), clip(k1), clip(k2), want)
	}
	if secret, _ := keyfunc.Secret(hdr)(headerRequest(long1)); k1 != "per-key:#"+secret {
		t.Errorf("long key %q... is not \"per-key:#\" and keyfunc.Secret's digest %q", clip(k1), secret)
	}
	edge := strings.Repeat("k", keyfunc.MaxKeyLen)
	if got := keyOf(edge); got != "per-key:"+edge {
		t.Errorf("a key of MaxKeyLen bytes became %q; want it as it is", got)
	}
}

func headerRequest(v string) *http.Request {
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-Client", v)
	return r
}

func clip(s string) string { return s[:min(len(s), 40)] }

// TestPrepareDigestUnambiguous: a key written as a digest ("#" and
// keyfunc.Secret's characters) never meets a key a client sends as it is:
// a short key starting with '#' is written as a digest too, so a client
// who sends "#" + the digest of another client's long key gets a bucket of
// its own.
func TestPrepareDigestUnambiguous(t *testing.T) {
	hdr := keyfunc.Must(keyfunc.Header("X-Client"))
	p := policy.Must(policy.PerMinute("per-key", 5, hdr))
	s, err := policy.NewSet([]*policy.Policy{p})
	if err != nil {
		t.Fatal(err)
	}
	keyOf := func(v string) string {
		r := headerRequest(v)
		var res policy.Result
		if err := s.Prepare(r, s.Match(r), &res); err != nil || res.Len() != 1 {
			t.Fatalf("Prepare: %v (%d checks)", err, res.Len())
		}
		return strings.Clone(res.Key(0))
	}
	long := strings.Repeat("v", keyfunc.MaxKeyLen+1)
	secret, _ := keyfunc.Secret(hdr)(headerRequest(long))
	if k1, k2 := keyOf(long), keyOf("#"+secret); k1 == k2 {
		t.Errorf("the long key and \"#\" + its digest share the key %q", k1)
	}
	if k := keyOf("#x"); k == "per-key:#x" || !strings.HasPrefix(k, "per-key:#") {
		t.Errorf("key \"#x\" became %q; want a digest", k)
	}
}
