package keyfunc_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// constF returns a Func that always returns v.
func constF(v string) keyfunc.Func {
	return func(*http.Request) (string, error) { return v, nil }
}

// errF returns a Func that always fails with err.
func errF(err error) keyfunc.Func {
	return func(*http.Request) (string, error) { return "", err }
}

func joinOf(t testing.TB, vs ...string) string {
	t.Helper()
	parts := make([]keyfunc.Func, len(vs))
	for i, v := range vs {
		parts[i] = constF(v)
	}
	f, err := keyfunc.Join(parts...)
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	k, err := f(newReq("192.0.2.1:1"))
	if err != nil {
		t.Fatalf("Join(%q) error: %v", vs, err)
	}
	return k
}

func TestJoin_SeparatorInsidePartsDoesNotCollide(t *testing.T) {
	tests := []struct {
		name string
		a, b []string
	}{
		{name: "colon moves between parts", a: []string{"a:b", "c"}, b: []string{"a", "b:c"}},
		{name: "length-like prefix", a: []string{"1:a", "b"}, b: []string{"1", "a1:b"}},
		{name: "split vs whole", a: []string{"ab"}, b: []string{"a", "b"}},
		{name: "hash marker", a: []string{"#x", "y"}, b: []string{"#", "xy"}},
		{name: "digits", a: []string{"12", "3"}, b: []string{"1", "23"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if ka, kb := joinOf(t, tt.a...), joinOf(t, tt.b...); ka == kb {
				t.Fatalf("Join(%q) = Join(%q) = %q; want different", tt.a, tt.b, ka)
			}
		})
	}
}

func TestJoin_Encoding(t *testing.T) {
	long := strings.Repeat("x", keyfunc.MaxPartLen+1)
	tests := []struct {
		name  string
		parts []string
		want  string // "" means: check only the properties below
	}{
		{name: "ip and user", parts: []string{"192.0.2.1", "alice"}, want: "9:192.0.2.15:alice"},
		{name: "single", parts: []string{"GET"}, want: "3:GET"},
		{name: "at the limit", parts: []string{strings.Repeat("y", keyfunc.MaxPartLen)}, want: "64:" + strings.Repeat("y", keyfunc.MaxPartLen)},
		{name: "long part hashed", parts: []string{long, "a"}},
		{name: "space hashed", parts: []string{"a b"}},
		{name: "control byte hashed", parts: []string{"a\x00b"}},
		{name: "utf-8 hashed", parts: []string{"jürgen"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := joinOf(t, tt.parts...)
			if tt.want != "" && got != tt.want {
				t.Fatalf("Join(%q) = %q; want %q", tt.parts, got, tt.want)
			}
			for i := 0; i < len(got); i++ {
				if got[i] < 0x21 || got[i] > 0x7e {
					t.Fatalf("Join(%q) = %q; byte %d is not visible ASCII", tt.parts, got, i)
				}
			}
			if max := len(tt.parts) * (3 + keyfunc.MaxPartLen); len(got) > max {
				t.Fatalf("len(Join(%q)) = %d; want <= %d", tt.parts, len(got), max)
			}
		})
	}
	if got := joinOf(t, long); !strings.HasPrefix(got, "#") || len(got) != 1+keyfunc.HashLen {
		t.Fatalf("Join(long) = %q; want \"#\" and %d hash characters", got, keyfunc.HashLen)
	}
}

// randPart draws a part that is likely to stress the encoding: short values
// over a tiny alphabet of separators and digits, sometimes long or binary.
func randPart(rng *rand.Rand) string {
	const alphabet = "ab:1#9 \x00"
	n := rng.IntN(6) + 1
	if rng.IntN(10) == 0 {
		n = keyfunc.MaxPartLen - 2 + rng.IntN(5) // around the hashing limit
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

// TestJoin_InjectiveOverRandomParts is a property test: over many random
// lists of parts, two different lists never give the same key.
func TestJoin_InjectiveOverRandomParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2)) // seeded: failures reproduce
	seen := make(map[string][]string)
	for i := 0; i < 20000; i++ {
		parts := make([]string, rng.IntN(4)+1)
		for j := range parts {
			parts[j] = randPart(rng)
		}
		k := joinOf(t, parts...)
		if prev, ok := seen[k]; ok && !slices.Equal(prev, parts) {
			t.Fatalf("Join(%q) = Join(%q) = %q", prev, parts, k)
		}
		seen[k] = parts
	}
	if len(seen) < 10000 {
		t.Fatalf("only %d distinct inputs drawn; the generator is too narrow to test anything", len(seen))
	}
}

func TestJoin_MissingPartIsAnErrorNeverASharedKey(t *testing.T) {
	ip := mustIP(t)
	f := keyfunc.Must(keyfunc.Join(ip, keyfunc.User()))
	wantKey(t, f, newReq("192.0.2.1:1"), "", keyfunc.ErrNoUser)

	// A user-written Func returning "" with nil error is a missing part too.
	g := keyfunc.Must(keyfunc.Join(ip, constF("")))
	wantKey(t, g, newReq("192.0.2.1:1"), "", keyfunc.ErrNoKey)

	// Errors outside the family pass through unchanged.
	boom := errors.New("boom")
	h := keyfunc.Must(keyfunc.Join(ip, errF(boom)))
	if _, err := h(newReq("192.0.2.1:1")); err != boom {
		t.Fatalf("Join(ip, failing) error = %v; want %v", err, boom)
	}
}

func TestJoin_BadConfig(t *testing.T) {
	if _, err := keyfunc.Join(); err == nil || !strings.Contains(err.Error(), "keyfunc: Join") {
		t.Fatalf("Join() error = %v; want a Join error", err)
	}
	if _, err := keyfunc.Join(constF("a"), nil); err == nil || !strings.Contains(err.Error(), "part 1") {
		t.Fatalf("Join(f, nil) error = %v; want one naming part 1", err)
	}
}

// TestFirstOf_MissingUserFallsBackToIPNeverASharedEmptyKey guards the
// declared fallback: anonymous requests are keyed by IP, one key per IP, and
// never by "".
func TestFirstOf_MissingUserFallsBackToIPNeverASharedEmptyKey(t *testing.T) {
	f := keyfunc.Must(keyfunc.FirstOf(keyfunc.User(), mustIP(t)))
	anonA := newReq("192.0.2.1:1")
	anonB := newReq("192.0.2.2:1")
	alice := newReq("192.0.2.1:1")
	alice = alice.WithContext(keyfunc.WithUser(alice.Context(), "alice"))
	empty := newReq("192.0.2.3:1")
	empty = empty.WithContext(keyfunc.WithUser(empty.Context(), "")) // an auth bug: empty ID

	wantKey(t, f, alice, "0:alice", nil)
	wantKey(t, f, anonA, "1:192.0.2.1", nil)
	wantKey(t, f, anonB, "1:192.0.2.2", nil)
	wantKey(t, f, empty, "1:192.0.2.3", nil)

	// With no fallback, the missing user is an error.
	wantKey(t, keyfunc.User(), anonA, "", keyfunc.ErrNoUser)
}

func TestFirstOf_UserNamedLikeAnIPDoesNotShareTheIPsKey(t *testing.T) {
	f := keyfunc.Must(keyfunc.FirstOf(keyfunc.User(), mustIP(t)))
	anon := newReq("192.0.2.1:1")
	user := newReq("198.51.100.1:1")
	user = user.WithContext(keyfunc.WithUser(user.Context(), "192.0.2.1"))
	a, errA := f(anon)
	u, errU := f(user)
	if errA != nil || errU != nil || a == u {
		t.Fatalf("anonymous key %q (%v), user key %q (%v); want different", a, errA, u, errU)
	}
}

func TestFirstOf_OnlyNoKeyErrorsFallThrough(t *testing.T) {
	boom := errors.New("keyfunc_test: session store down")
	f := keyfunc.Must(keyfunc.FirstOf(errF(boom), constF("fallback")))
	if k, err := f(newReq("192.0.2.1:1")); err != boom || k != "" {
		t.Fatalf("FirstOf(failing, const) = %q, %v; want \"\", %v", k, err, boom)
	}
	wrapped := fmt.Errorf("keyfunc_test: lookup: %w", keyfunc.ErrNoKey)
	g := keyfunc.Must(keyfunc.FirstOf(errF(wrapped), constF("fallback")))
	wantKey(t, g, newReq("192.0.2.1:1"), "1:fallback", nil)
}

func TestFirstOf_AllMissingIsAnError(t *testing.T) {
	f := keyfunc.Must(keyfunc.FirstOf(keyfunc.User(), constF("")))
	wantKey(t, f, newReq("192.0.2.1:1"), "", keyfunc.ErrNoKey)
	g := keyfunc.Must(keyfunc.FirstOf(constF(""), keyfunc.User()))
	wantKey(t, g, newReq("192.0.2.1:1"), "", keyfunc.ErrNoUser)
}

func TestFirstOf_BadConfig(t *testing.T) {
	if _, err := keyfunc.FirstOf(); err == nil || !strings.Contains(err.Error(), "keyfunc: FirstOf") {
		t.Fatalf("FirstOf() error = %v; want a FirstOf error", err)
	}
	if _, err := keyfunc.FirstOf(nil); err == nil || !strings.Contains(err.Error(), "part 0") {
		t.Fatalf("FirstOf(nil) error = %v; want one naming part 0", err)
	}
}

func TestNamespace_SameValueUnderTwoPoliciesDoesNotShareAKey(t *testing.T) {
	ip := mustIP(t)
	a := keyfunc.Must(keyfunc.Namespace("per-second", ip))
	b := keyfunc.Must(keyfunc.Namespace("per-minute", ip))
	r := newReq("192.0.2.1:1")
	wantKey(t, a, r, "per-second:192.0.2.1", nil)
	wantKey(t, b, r, "per-minute:192.0.2.1", nil)
}

func TestNamespace_Bounds(t *testing.T) {
	long := strings.Repeat("z", keyfunc.MaxKeyLen+1)
	tests := []struct {
		name  string
		value string
		want  string // "" means hashed
	}{
		{name: "plain", value: "alice", want: "ns:alice"},
		{name: "at the limit", value: long[1:], want: "ns:" + long[1:]},
		{name: "too long", value: long},
		{name: "space", value: "a b"},
		{name: "raw value shaped like a hash", value: "#" + strings.Repeat("A", keyfunc.HashLen), want: "ns:#" + strings.Repeat("A", keyfunc.HashLen)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := keyfunc.Must(keyfunc.Namespace("ns", constF(tt.value)))(newReq("192.0.2.1:1"))
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if tt.want != "" {
				if got != tt.want {
					t.Fatalf("key = %q; want %q", got, tt.want)
				}
				return
			}
			if !strings.HasPrefix(got, "ns#") || len(got) != 3+keyfunc.HashLen {
				t.Fatalf("key = %q; want \"ns#\" and a %d-character hash", got, keyfunc.HashLen)
			}
		})
	}
}

func TestNamespace_BadConfig(t *testing.T) {
	for _, ns := range []string{"", "a:b", "a#b", "a b", "\x00", strings.Repeat("n", keyfunc.MaxNamespaceLen+1)} {
		if _, err := keyfunc.Namespace(ns, constF("v")); err == nil || !strings.Contains(err.Error(), "keyfunc: Namespace: ns") {
			t.Errorf("Namespace(%q) error = %v; want one naming ns", ns, err)
		}
	}
	if _, err := keyfunc.Namespace("ok", nil); err == nil {
		t.Errorf("Namespace(ok, nil) error = nil; want an error")
	}
}

func TestNamespace_MissingKeyIsAnError(t *testing.T) {
	f := keyfunc.Must(keyfunc.Namespace("per-user", keyfunc.User()))
	wantKey(t, f, newReq("192.0.2.1:1"), "", keyfunc.ErrNoUser)
	g := keyfunc.Must(keyfunc.Namespace("per-user", constF("")))
	wantKey(t, g, newReq("192.0.2.1:1"), "", keyfunc.ErrNoKey)
}

func TestMust_PanicsOnError(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Must(nil, err) did not panic")
		}
	}()
	keyfunc.Must(keyfunc.Join())
}

// TestNamespace_InjectiveOverRandomKeys is a property test: within one
// namespace, different keys (raw, hashed, or raw text shaped like a hash)
// never meet.
func TestNamespace_InjectiveOverRandomKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	seen := make(map[string]string)
	for i := 0; i < 5000; i++ {
		v := randPart(rng)
		if rng.IntN(8) == 0 {
			v = strings.Repeat(v, keyfunc.MaxKeyLen/len(v)+rng.IntN(2)) // around the hashing limit
		}
		k, err := keyfunc.Must(keyfunc.Namespace("ns", constF(v)))(newReq("192.0.2.1:1"))
		if err != nil {
			t.Fatalf("Namespace(%q) error %v", v, err)
		}
		if prev, ok := seen[k]; ok && prev != v {
			t.Fatalf("Namespace(%q) = Namespace(%q) = %q", prev, v, k)
		}
		seen[k] = v
		// The hashed form of v, written raw, must not meet v's key either.
		if strings.HasPrefix(k, "ns#") {
			raw, _ := keyfunc.Must(keyfunc.Namespace("ns", constF(k[2:])))(newReq("192.0.2.1:1"))
			if raw == k {
				t.Fatalf("raw %q shares the key of hashed %q", k[2:], v)
			}
		}
	}
}
