package keyfunc_test

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// TestComposeBoundsAreTheDocumentedValues pins the bounds of Join and
// Namespace by literal lengths, not through the constants, so that a change
// of MaxKeyLen (256) or MaxNamespaceLen (64), which moves the keys already
// written in every store, fails here.
func TestComposeBoundsAreTheDocumentedValues(t *testing.T) {
	if keyfunc.MaxPartLen != 64 || keyfunc.MaxKeyLen != 256 || keyfunc.MaxNamespaceLen != 64 || keyfunc.HashLen != 22 {
		t.Fatalf("MaxPartLen, MaxKeyLen, MaxNamespaceLen, HashLen = %d, %d, %d, %d; want 64, 256, 64, 22",
			keyfunc.MaxPartLen, keyfunc.MaxKeyLen, keyfunc.MaxNamespaceLen, keyfunc.HashLen)
	}
	r := newReq("192.0.2.1:1")
	raw := strings.Repeat("k", 256)
	wantKey(t, keyfunc.Must(keyfunc.Namespace("ns", constF(raw))), r, "ns:"+raw, nil)
	// 257 bytes: the SHA-256 of 257 'k's, truncated and in base64url.
	wantKey(t, keyfunc.Must(keyfunc.Namespace("ns", constF(raw+"k"))), r, "ns#"+secretOf(t, raw+"k"), nil)

	ns := strings.Repeat("n", 64)
	wantKey(t, keyfunc.Must(keyfunc.Namespace(ns, constF("v"))), r, ns+":v", nil)
	f, err := keyfunc.Namespace(ns+"n", constF("v"))
	wantRefused(t, "Namespace(65-byte ns)", f, err, "keyfunc: Namespace: ns must be 1 to 64 bytes, got 65")
}

// secretOf is Secret's key for v.
func secretOf(t *testing.T, v string) string {
	t.Helper()
	got, err := keyfunc.Secret(constF(v))(newReq("192.0.2.1:1"))
	if err != nil || len(got) != 22 {
		t.Fatalf("Secret(%q) = %q, %v", v, got, err)
	}
	return got
}

// TestNamespace_LongestRawKeyAllocatesOnce: Namespace's buffer holds the
// longest key it writes as it is (a 64-byte ns, ':' and a 256-byte key),
// so that key costs one allocation, the returned string, and no second one
// for a grown buffer.
func TestNamespace_LongestRawKeyAllocatesOnce(t *testing.T) {
	ns, v := strings.Repeat("n", 64), strings.Repeat("k", 256)
	f := keyfunc.Must(keyfunc.Namespace(ns, constF(v)))
	r := newReq("192.0.2.1:1")
	wantKey(t, f, r, ns+":"+v, nil)
	if got := testing.AllocsPerRun(100, func() { sinkKey, _ = f(r) }); got > 1 {
		t.Fatalf("Namespace with a %d-byte key: %v allocations per call; want 1", len(ns)+1+len(v), got)
	}
}
