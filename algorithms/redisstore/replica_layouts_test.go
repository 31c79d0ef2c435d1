package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/redis/go-redis/v9"
)

// TestScriptReplicaCheckLayouts: the script's replica check (script.go,
// luaReplicaCheck) finds a denied Take in every layout the script is
// called with: the wide one (a user not allowed functions), the compact
// one without a header and with one (a minimum TTL; the library lost, its
// load refused on the replica), one check or several, a check the fast
// path leaves to main.lua (sliding_log), a cost above 1, and a denied
// check after one that passes. On a read-only replica each such Take
// fails, as an admitted one does at its first write; on the master,
// as a script too, each denied Take stays a denial.
func TestScriptReplicaCheckLayouts(t *testing.T) {
	master := redistest.New(t)
	replica := redistest.NewReplica(t, master)
	ctx := context.Background()
	prefix := uniquePrefix(t)
	acl := []string{"ACL", "SETUSER", "nofunctions", "on", "nopass", "~*", "&*", "+@all", "-function", "-fcall", "-fcall_ro"}
	for _, srv := range []*redistest.Server{master, replica} {
		if _, err := srv.Do(acl...); err != nil {
			t.Fatal(err)
		}
	}
	store := func(srv *redistest.Server, user string, opts ...redisstore.Option) *redisstore.Store {
		t.Helper()
		var password string
		if user != "" {
			password = "any"
		}
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: user, Password: password})
		t.Cleanup(func() { _ = c.Close() })
		s, err := redisstore.New(c, append([]redisstore.Option{redisstore.WithPrefix(prefix)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	used := dayLimit("used")
	useQuota(t, store(master, ""), used)
	fresh := dayLimit("fresh")
	log := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 3, Window: time.Hour}, Key: "log"}
	costly := used
	costly.Cost = 2
	takes := map[string][]algorithms.Check{
		"used":            {used},
		"used_cost_2":     {costly},
		"fresh_then_used": {fresh, used},
		"used_then_fresh": {used, fresh},
		"log_then_used":   {log, used},
	}
	type layout struct {
		name string
		user string
		opts []redisstore.Option
	}
	layouts := []layout{
		{"wide", "nofunctions", nil},
		{"wide_min_ttl", "nofunctions", []redisstore.Option{redisstore.WithMinTTL(time.Minute)}},
		{"compact", "", nil},
		{"compact_header", "", []redisstore.Option{redisstore.WithMinTTL(time.Minute)}},
	}
	// On the master, as a script: denials.
	for _, name := range []string{"used", "used_cost_2", "fresh_then_used", "used_then_fresh", "log_then_used"} {
		for _, l := range layouts[:2] {
			d, err := store(master, l.user, l.opts...).Take(ctx, takes[name]...)
			if err != nil {
				t.Fatalf("%s on the master (%s): %v; want a denial", name, l.name, err)
			}
			if d[len(d)-1].Allowed && d[0].Allowed {
				t.Fatalf("%s on the master (%s) = %+v; want denied", name, l.name, d)
			}
		}
	}
	waitReplicated(t, master, replica)
	// The library lost (replicated): a store on the replica runs the
	// script with the compact arguments.
	if _, err := master.Do("FUNCTION", "FLUSH"); err != nil {
		t.Fatal(err)
	}
	if !hangguard.Poll(syncWithinTest, 10*time.Millisecond, func() bool { return !hasLibrary(t, replica) }) {
		t.Fatal("FUNCTION FLUSH did not reach the replica")
	}
	for _, l := range layouts {
		s := store(replica, l.user, l.opts...)
		for _, name := range []string{"used", "used_cost_2", "fresh_then_used", "used_then_fresh", "log_then_used", "fresh"} {
			checks := takes[name]
			if name == "fresh" {
				checks = []algorithms.Check{fresh}
			}
			for i := range 2 { // the second after a refused load, too
				d, err := s.Take(ctx, checks...)
				if err == nil {
					t.Errorf("%s on the replica (%s), call %d = %+v, nil; want an error (a read-only replica decides no Take)", name, l.name, i, d)
				}
			}
		}
	}
}
