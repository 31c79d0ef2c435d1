package keyfunc_test

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// Types of context values that hide their text: an API token and a
// numeric secret whose String redacts, a password that redacts itself in
// log/slog records and in %#v, a token whose pointer redacts, and an ID
// whose String shows it with a decoration.
type (
	redactedToken string
	redactedNum   int64
	slogSecret    string
	goSecret      []byte
	ptrToken      string
	plainID       string
	blankToken    string
)

func (blankToken) String() string { return "" }

func (redactedToken) String() string         { return "[REDACTED]" }
func (redactedNum) String() string           { return "***" }
func (slogSecret) LogValue() slog.Value      { return slog.StringValue("[REDACTED]") }
func (goSecret) GoString() string            { return "goSecret(…)" }
func (*ptrToken) String() string             { return "ptrToken(…)" }
func (p plainID) String() string             { return string(p) }
func (redactedToken) Format(fmt.State, rune) {}

// digestOf is v's digest as Secret writes it.
func digestOf(t *testing.T, v string) string {
	t.Helper()
	d, err := keyfunc.Secret(constF(v))(nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestContextValue_RedactingTypeIsKeyedByDigest: ContextValue preferred a
// named type's String to its value, so every API token of a type whose
// String redacts ("[REDACTED]") had that one key: every client one bucket,
// which any of them could exhaust. A value of a string, byte-slice or
// integer kind is keyed by its own text; when its type shows it otherwise
// (a String giving other text, or a GoString, Format or LogValue method:
// a type that hides or reshapes its text for logs), by the digest of that
// text, as Secret writes it, so that the store and its dumps do not hold
// what the type keeps out of logs either, and each value keeps a key of
// its own.
func TestContextValue_RedactingTypeIsKeyedByDigest(t *testing.T) {
	kf := keyfunc.Must(keyfunc.ContextValue(authKey{}))
	tokA, tokB := ptrToken("tok_alice"), ptrToken("tok_bob")
	for _, c := range []struct {
		name string
		a, b any
		ta   string // the text of a
	}{
		{"String redacts", redactedToken("sk_live_alice"), redactedToken("sk_live_bob"), "sk_live_alice"},
		{"integer String redacts", redactedNum(123456), redactedNum(654321), "123456"},
		{"LogValue redacts", slogSecret("hunter2"), slogSecret("correct horse"), "hunter2"},
		{"GoString redacts", goSecret("k1"), goSecret("k2"), "k1"},
		{"pointer's String redacts", &tokA, &tokB, "tok_alice"},
		{"decorated ID", uidKey(7), uidKey(8), "7"},
		{"String says nothing", blankToken("tok_a"), blankToken("tok_b"), "tok_a"},
	} {
		a, errA := kf(withAuth(c.a))
		b, errB := kf(withAuth(c.b))
		if errA != nil || errB != nil || a == b {
			t.Errorf("%s: keys of two values (the first %q) = %q, %v and %q, %v; want a key each", c.name, c.ta, a, errA, b, errB)
			continue
		}
		if want := digestOf(t, c.ta); a != want {
			t.Errorf("%s: key of the value %q = %q; want its digest, %q", c.name, c.ta, a, want)
		}
	}
	// A type whose String is its text, or that has none, keeps it as it is.
	for _, c := range []struct {
		v    any
		want string
	}{
		{plainID("alice"), "alice"},
		{namedID("alice"), "alice"},
		{namedNum(42), "42"},
		{"alice", "alice"},
		{[]byte("alice"), "alice"},
		{userID{3}, "u3"}, // a struct: its String is its only text
	} {
		if got, err := kf(withAuth(c.v)); err != nil || got != c.want {
			t.Errorf("key of %#v = %q, %v; want %q", c.v, got, err, c.want)
		}
	}
	// A pointer to a scalar without methods is no key, as before (a
	// pointer to one whose type redacts is read, above).
	alice := namedID("alice")
	if got, err := kf(withAuth(&alice)); err == nil {
		t.Errorf("key of a *namedID = %q; want ErrNoContextValue", got)
	}
	// Zero values are still no key, whatever their methods.
	for _, v := range []any{redactedToken(""), redactedNum(0), slogSecret(""), goSecret(nil), (*ptrToken)(nil), new(ptrToken)} {
		if got, err := kf(withAuth(v)); err == nil {
			t.Errorf("key of zero %#v = %q; want ErrNoContextValue", v, got)
		}
	}
}
