package redisstore_test

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// TestNewTypedNilClient: a nil *redis.Client or *redis.ClusterClient in
// the interface (a client variable left unset when Redis is not
// configured) is refused with New's error for a nil client, as an untyped
// nil is, not a nil-pointer panic in New.
func TestNewTypedNilClient(t *testing.T) {
	var single *redis.Client
	var cluster *redis.ClusterClient
	for name, c := range map[string]redis.UniversalClient{"*redis.Client": single, "*redis.ClusterClient": cluster} {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("New(nil %s) panicked: %v", name, p)
				}
			}()
			s, err := redisstore.New(c)
			if err == nil || !strings.Contains(err.Error(), "client is nil") {
				t.Errorf("New(nil %s) = %v, %v; want the error for a nil client", name, s, err)
			}
		}()
	}
}

// TestWithClockTypedNil: a nil pointer passed as the Clock is refused by
// WithClock, as an untyped nil is (it would panic at the first Take).
func TestWithClockTypedNil(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled: New fails first
	defer client.Close()
	var clock *algotest.Clock
	if s, err := redisstore.New(client, redisstore.WithClock(clock)); err == nil || !strings.Contains(err.Error(), "Clock is nil") {
		t.Errorf("New(WithClock(nil *algotest.Clock)) = %v, %v; want the error for a nil clock", s, err)
	}
}
