package redisstore_test

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// TestPrefixWhitespaceRefused: WithPrefix refuses every whitespace its
// documentation names, not only space, tab, CR and LF, and takes the
// printable prefixes around it.
func TestPrefixWhitespaceRefused(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer client.Close()
	for _, p := range []string{"a b", "a\tb", "a\nb", "a\rb", "a\vb", "a\fb", "a\u0085b", "a\u00a0b", "a\u2003b", "a\u3000b"} {
		if _, err := redisstore.New(client, redisstore.WithPrefix(p)); err == nil || !strings.Contains(err.Error(), "WithPrefix") {
			t.Errorf("WithPrefix(%q): New = %v, want an error naming WithPrefix", p, err)
		}
	}
	for _, p := range []string{"rk", "my-app:v2", "a%b", "café", "a\xffb"} {
		if _, err := redisstore.New(client, redisstore.WithPrefix(p)); err != nil {
			t.Errorf("WithPrefix(%q): %v", p, err)
		}
	}
}
