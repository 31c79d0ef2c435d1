package keyfunc

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"

	"github.com/ratekeeper/ratekeeper/internal/errlist"
)

// hashBytes is how many bytes of the SHA-256 digest a hashed key keeps:
// 128 bits, so that colliding two chosen values takes about 2^64 work.
const hashBytes = 16

// HashLen is the length of a hashed key or part: 16 bytes (128 bits) of
// SHA-256 (or HMAC-SHA-256) in unpadded base64url, 22 characters from
// [A-Za-z0-9_-].
const HashLen = 22

// MinHMACKeyLen is the shortest key [SecretHMAC] accepts.
const MinHMACKeyLen = 16

// Secret returns a Func whose key is a digest of f's key: SHA-256, the first
// 16 bytes, unpadded base64url ([HashLen] characters). Use it for parts
// that must not be readable in the store (an API key read from the body or
// the context, a user's e-mail address): a dump of Redis or a log of keys
// then shows digests only. [Header] and [Cookie] already key a credential
// (Authorization, X-Api-Key, a session cookie) by this digest; wrapping
// them in Secret is harmless (a digest of the digest) but needless, and
// changes the keys a store holds: drop it.
// Unkeyed SHA-256 suits high-entropy secrets; for guessable values (e-mail
// addresses, phone numbers) use [SecretHMAC]. Errors of f pass through,
// and "" from f is treated as missing. Secret(nil) is nil.
func Secret(f Func) Func {
	if f == nil {
		return nil
	}
	return func(r *http.Request) (string, error) {
		v, err := f(r)
		if err != nil {
			return "", err
		}
		if v == "" {
			return "", errEmptyKey
		}
		return digest(v), nil
	}
}

// SecretHMAC is like [Secret] with HMAC-SHA-256 under key, so that a value
// cannot be recovered by hashing guesses without the key. The key must be at
// least [MinHMACKeyLen] bytes and must stay the same across restarts and
// instances that share a store (changing it starts every client afresh). It
// is copied.
func SecretHMAC(key []byte, f Func) (Func, error) {
	var errs []error
	if len(key) < MinHMACKeyLen {
		errs = append(errs, errors.New("keyfunc: SecretHMAC: key is shorter than 16 bytes"))
	}
	if f == nil {
		errs = append(errs, errors.New("keyfunc: SecretHMAC: f is nil"))
	}
	if len(errs) > 0 {
		return nil, errlist.Join(errs)
	}
	k := append([]byte(nil), key...)
	return func(r *http.Request) (string, error) {
		v, err := f(r)
		if err != nil {
			return "", err
		}
		if v == "" {
			return "", errEmptyKey
		}
		m := hmac.New(sha256.New, k)
		m.Write([]byte(v))
		var sum [sha256.Size]byte
		var buf [HashLen]byte
		return string(appendB64(buf[:0], m.Sum(sum[:0])[:hashBytes])), nil
	}, nil
}

// appendSHA256 appends the truncated, encoded SHA-256 of v to dst.
func appendSHA256(dst []byte, v string) []byte {
	sum := sha256.Sum256([]byte(v))
	return appendB64(dst, sum[:hashBytes])
}

func appendB64(dst, b []byte) []byte {
	return base64.RawURLEncoding.AppendEncode(dst, b)
}

// printable reports whether s holds only visible ASCII (0x21-0x7e): no
// space, no control byte, nothing a memcache or log line would choke on.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
