package keyfunc_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// TestSecretHMAC_KeyLengthBound pins the documented minimum by literal
// lengths: a 16-byte key is accepted, a 15-byte one refused with a message
// that states the bound.
func TestSecretHMAC_KeyLengthBound(t *testing.T) {
	if keyfunc.MinHMACKeyLen != 16 {
		t.Fatalf("MinHMACKeyLen = %d; want 16", keyfunc.MinHMACKeyLen)
	}
	if _, err := keyfunc.SecretHMAC(make([]byte, 16), constF("v")); err != nil {
		t.Fatalf("SecretHMAC(16-byte key) error: %v; want it accepted", err)
	}
	const msg = "keyfunc: SecretHMAC: key is shorter than 16 bytes"
	if f, err := keyfunc.SecretHMAC(make([]byte, 15), constF("v")); f != nil || err == nil || err.Error() != msg {
		t.Fatalf("SecretHMAC(15-byte key) = %v, %v; want nil, %q", f != nil, err, msg)
	}
}
