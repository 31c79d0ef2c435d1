package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// TestErrorsNameTheCall: an error Redis replies to a call of the store is
// wrapped as that call's ("redisstore: peek: ..."), not as a Take's: a
// Peek, a Refund and a GiveBack of a key holding a value the store did not
// write (standalone, and a Peek split over Cluster slots), and a Reset as
// a user that may not DEL. The key-state errors still match
// algorithms.ErrKeyState.
func TestErrorsNameTheCall(t *testing.T) {
	ctx := context.Background()
	admin := newClient(t)
	if err := admin.Do(ctx, "ACL", "SETUSER", "nodel", "reset", "on", "nopass", "~*", "&*", "+@all", "-del").Err(); err != nil {
		t.Fatal(err)
	}
	noDel := redis.NewClient(&redis.Options{Addr: sharedServer(t).Addr, Username: "nodel", Password: "any"})
	defer noDel.Close()
	spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 5, Window: time.Minute, MaxDelay: time.Second}
	admitted := []algorithms.Decision{{Allowed: true, Limit: 5}}
	for _, tc := range []struct {
		name    string
		client  redis.UniversalClient
		keys    []string // the first holds a foreign value, unless noDel
		call    func(s *redisstore.Store, checks []algorithms.Check) error
		want    string
		keyPart bool // matches algorithms.ErrKeyState
	}{
		{"take", admin, []string{"app"}, func(s *redisstore.Store, cs []algorithms.Check) error {
			_, err := s.Take(ctx, cs...)
			return err
		}, "redisstore: take: ", true},
		{"peek", admin, []string{"app"}, func(s *redisstore.Store, cs []algorithms.Check) error {
			return s.Peek(ctx, make([]algorithms.Decision, len(cs)), cs)
		}, "redisstore: peek: ", true},
		{"peek_cluster_split", nil, keysOnThreeSlots(), func(s *redisstore.Store, cs []algorithms.Check) error {
			return s.Peek(ctx, make([]algorithms.Decision, len(cs)), cs)
		}, "redisstore: peek: ", true},
		{"refund", admin, []string{"app"}, func(s *redisstore.Store, cs []algorithms.Check) error {
			return s.Refund(ctx, make([]algorithms.Refunded, len(cs)), cs, admitted, 0)
		}, "redisstore: refund: ", true},
		{"give_back", admin, []string{"app"}, func(s *redisstore.Store, cs []algorithms.Check) error {
			return s.GiveBack(ctx, make([]algorithms.Refunded, len(cs)), cs, admitted, 0)
		}, "redisstore: give-back: ", true},
		{"reset", noDel, []string{"app"}, func(s *redisstore.Store, cs []algorithms.Check) error {
			return s.Reset(ctx, cs...)
		}, "redisstore: reset: NOPERM", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, seed := tc.client, redis.UniversalClient(admin)
			if client == nil {
				c := sharedCluster(t)
				client, seed = c, c
			}
			prefix := uniquePrefix(t)
			s, err := redisstore.New(client, redisstore.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			var checks []algorithms.Check
			for _, k := range tc.keys {
				checks = append(checks, algorithms.Check{Spec: spec, Key: k})
			}
			if tc.client != noDel {
				if err := seed.Set(ctx, redisKeys(prefix, checks[0])[0], "application data", 0).Err(); err != nil {
					t.Fatal(err)
				}
			}
			err = tc.call(s, checks)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("%s error = %v, want one beginning %q", tc.name, err, tc.want)
			}
			if errors.Is(err, algorithms.ErrKeyState) != tc.keyPart {
				t.Fatalf("%s error %q: matches algorithms.ErrKeyState %v, want %v", tc.name, err, !tc.keyPart, tc.keyPart)
			}
		})
	}
}
