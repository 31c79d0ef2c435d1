package keyfunc_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

func TestSecret_IsTruncatedSHA256InBase64URL(t *testing.T) {
	// X-Client is no credential: Header keeps it as sent, Secret hashes it.
	f := keyfunc.Secret(keyfunc.Must(keyfunc.Header("X-Client")))
	for _, v := range []string{"sk_live_1", "sk_live_2", strings.Repeat("q", 5000)} {
		got, err := f(newReq("192.0.2.1:1", "X-Client", v))
		sum := sha256.Sum256([]byte(v))
		want := base64.RawURLEncoding.EncodeToString(sum[:16])
		if err != nil || got != want {
			t.Fatalf("Secret(%.10q...) = %q, %v; want %q", v, got, err, want)
		}
		if len(got) != keyfunc.HashLen || strings.Contains(got, v) {
			t.Fatalf("Secret = %q; want %d characters not containing the secret", got, keyfunc.HashLen)
		}
	}
	wantKey(t, f, newReq("192.0.2.1:1"), "", keyfunc.ErrNoKey)
	wantKey(t, keyfunc.Secret(constF("")), newReq("192.0.2.1:1"), "", keyfunc.ErrNoKey)
	if keyfunc.Secret(nil) != nil {
		t.Fatal("Secret(nil) != nil")
	}
}

func TestSecretHMAC_DependsOnTheKey(t *testing.T) {
	k1 := []byte("0123456789abcdef")
	k2 := []byte("0123456789abcdeF")
	f1 := keyfunc.Must(keyfunc.SecretHMAC(k1, constF("alice@example.com")))
	f2 := keyfunc.Must(keyfunc.SecretHMAC(k2, constF("alice@example.com")))
	r := newReq("192.0.2.1:1")
	a, errA := f1(r)
	b, errB := f2(r)
	m := hmac.New(sha256.New, k1)
	m.Write([]byte("alice@example.com"))
	want := base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
	if errA != nil || errB != nil || a != want || a == b {
		t.Fatalf("SecretHMAC = %q (%v), %q (%v); want %q and different keys apart", a, errA, b, errB, want)
	}
	if s, _ := keyfunc.Secret(constF("alice@example.com"))(r); s == a {
		t.Fatalf("SecretHMAC = Secret = %q; want the key to matter", s)
	}

	// The key is copied: changing the caller's slice changes nothing.
	k1[0] = 'X'
	if again, _ := f1(r); again != a {
		t.Fatalf("after editing the key slice: %q; want %q", again, a)
	}
	wantKey(t, keyfunc.Must(keyfunc.SecretHMAC(k2, keyfunc.User())), r, "", keyfunc.ErrNoUser)
}

func TestSecretHMAC_BadConfig(t *testing.T) {
	if _, err := keyfunc.SecretHMAC([]byte("short"), constF("v")); err == nil || !strings.Contains(err.Error(), "key") {
		t.Fatalf("SecretHMAC(short key) error = %v; want one naming the key", err)
	}
	if _, err := keyfunc.SecretHMAC(make([]byte, 32), nil); err == nil {
		t.Fatal("SecretHMAC(key, nil) error = nil; want an error")
	}
}
