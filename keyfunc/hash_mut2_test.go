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
	f, err := keyfunc.SecretHMAC(make([]byte, 15), constF("v"))
	wantRefused(t, "SecretHMAC(15-byte key)", f, err, "keyfunc: SecretHMAC: key is shorter than 16 bytes")
}
