package policy_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestPrepareKeysFillingTheRoom: keys whose namespaced forms fill a
// Result's key room to the last byte are written there: preparing the
// Result again allocates nothing.
func TestPrepareKeysFillingTheRoom(t *testing.T) {
	var key string
	s := setKeyed(t, 4, func(*http.Request) (string, error) { return key, nil })
	r := httptest.NewRequest("GET", "/", nil)
	// The key rooms of one to four policies: 56, 104, 88 and 72 bytes;
	// each namespaced key is "pN:" and the key.
	for n, room := range []int{1: 56, 2: 104, 3: 88, 4: 72} {
		if n == 0 {
			continue
		}
		key = strings.Repeat("k", room/n-3)
		var res policy.Result
		mask := uint64(1)<<n - 1
		if err := s.Prepare(r, mask, &res); err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(20, func() {
			if err := s.Prepare(r, mask, &res); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 || res.Key(n-1) != "p"+string(rune('0'+n-1))+":"+key {
			t.Errorf("%d policies, keys filling %d bytes: %v allocations per Prepare (want 0), Key(%d) %q",
				n, room, allocs, n-1, res.Key(n-1))
		}
	}
}

// TestAgainClearsRefundAndGiveBack: a Result given back, refunded or
// peeked and then prepared again reports none of it (GaveBack, Given,
// Refunded, Peeked false) before its next Take; one taken again, without
// a new Prepare, holds the new Take's decisions, only Taken.
func TestAgainClearsRefundAndGiveBack(t *testing.T) {
	now := time.Unix(1_700_000_040, 0)
	store := memoryStoreAt(t, &now)
	s := setOf(t, 1)
	r := httptest.NewRequest("GET", "/", nil)
	ctx := context.Background()
	for _, again := range []struct {
		name  string
		do    func(res *policy.Result) error
		taken bool
	}{
		{"prepared again", func(res *policy.Result) error { return s.Prepare(r, 1, res) }, false},
		{"taken again", func(res *policy.Result) error { return res.Take(ctx, store) }, true},
	} {
		check := func(what string, res *policy.Result) {
			t.Helper()
			if err := again.do(res); err != nil {
				t.Fatal(err)
			}
			if res.GaveBack() || res.Given(0) || res.Refunded() || res.Peeked() || res.Taken() != again.taken {
				t.Errorf("%s, %s: GaveBack %v Given(0) %v Refunded %v Peeked %v Taken %v; want all false but Taken %v",
					what, again.name, res.GaveBack(), res.Given(0), res.Refunded(), res.Peeked(), res.Taken(), again.taken)
			}
		}
		res := takeResult(t, s, store, r)
		if err := res.GiveBack(ctx, store, 0, 1); err != nil || !res.GaveBack() || !res.Given(0) {
			t.Fatalf("GiveBack: %v, gave back %v, given %v", err, res.GaveBack(), res.Given(0))
		}
		check("given back", res)
		if !again.taken {
			res = takeResult(t, s, store, r)
		}
		if err := res.Refund(ctx, store, 0); err != nil || !res.Refunded() {
			t.Fatalf("Refund: %v, refunded %v", err, res.Refunded())
		}
		check("refunded", res)
		if err := res.Peek(ctx, store); err != nil || !res.Peeked() {
			t.Fatalf("Peek: %v, peeked %v", err, res.Peeked())
		}
		check("peeked", res)
	}
}

// TestPrepareDigestsLoneHash: a key of the one byte '#' starts with '#',
// so Prepare writes it as a digest too ("#" and keyfunc.HashLen
// characters).
func TestPrepareDigestsLoneHash(t *testing.T) {
	p := policy.Must(policy.PerMinute("per-key", 5, keyfunc.Must(keyfunc.Header("X-Client"))))
	s, err := policy.NewSet([]*policy.Policy{p})
	if err != nil {
		t.Fatal(err)
	}
	r := headerRequest("#")
	var res policy.Result
	if err := s.Prepare(r, s.Match(r), &res); err != nil || res.Len() != 1 {
		t.Fatalf("Prepare: %v (%d checks)", err, res.Len())
	}
	if k := res.Key(0); len(k) != len("per-key:#")+keyfunc.HashLen || !strings.HasPrefix(k, "per-key:#") {
		t.Errorf("key \"#\" became %q; want a digest", k)
	}
}

// TestPrepareErrorLeavesNoPolicies: a Prepare that fails, on a key or on
// a cost, after an earlier policy had its check, leaves a Result with no
// policies: Len and Mask 0.
func TestPrepareErrorLeavesNoPolicies(t *testing.T) {
	ip := policy.Must(policy.PerMinute("ip", 5, remoteKey))
	strict := policy.Must(policy.PerMinute("strict", 5, userKey, policy.OnKeyError(policy.RejectForbidden)))
	costly := policy.Must(policy.PerMinute("costly", 5, remoteKey, policy.WithCost(func(*http.Request) int64 { return 6 })))
	for _, second := range []*policy.Policy{strict, costly} {
		s, err := policy.NewSet([]*policy.Policy{ip, second})
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest("GET", "/", nil)
		var res policy.Result
		if err := s.Prepare(r, 0b11, &res); err == nil || res.Len() != 0 || res.Mask() != 0 {
			t.Errorf("Prepare failing on %s: %v, Len %d, Mask %b; want an error, 0, 0", second.Name(), err, res.Len(), res.Mask())
		}
	}
}

// TestPrepareKeysOverTheRoomAllocateOnce: keys too long for a Result's
// key room are namespaced in one allocation of their total length, not
// in a buffer grown key by key.
func TestPrepareKeysOverTheRoomAllocateOnce(t *testing.T) {
	key := strings.Repeat("k", 200)
	s := setKeyed(t, 4, func(*http.Request) (string, error) { return key, nil })
	r := httptest.NewRequest("GET", "/", nil)
	var res policy.Result
	if err := s.Prepare(r, 0b1111, &res); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(20, func() {
		if err := s.Prepare(r, 0b1111, &res); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 1 || res.Key(3) != "p3:"+key {
		t.Errorf("4 keys of 203 bytes in a room of 112: %v allocations per Prepare (want 1), Key(3) %q", allocs, res.Key(3))
	}
}

// TestRefundAfterGiveBack: a Result given back is not refunded: Refund
// returns nil and leaves the give-back's decisions, Refunded false.
func TestRefundAfterGiveBack(t *testing.T) {
	now := time.Unix(1_700_000_040, 0)
	store := memoryStoreAt(t, &now)
	s := setOf(t, 1)
	res := takeResult(t, s, store, httptest.NewRequest("GET", "/", nil))
	ctx := context.Background()
	if err := res.GiveBack(ctx, store, 0, 1); err != nil || !res.GaveBack() {
		t.Fatalf("GiveBack: %v, gave back %v", err, res.GaveBack())
	}
	if err := res.Refund(ctx, store, 0); err != nil || res.Refunded() {
		t.Errorf("Refund after a give-back: %v, refunded %v; want nil, not refunded", err, res.Refunded())
	}
}

// TestRefundGivenSecondPolicy: Given reports the place of a leaky_queue
// policy that is not the first evaluated one.
func TestRefundGivenSecondPolicy(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	store := memoryStoreAt(t, &now)
	key := func(*http.Request) (string, error) { return "k", nil }
	minute := policy.Must(policy.PerMinute("minute", 100, key))
	queue := policy.Must(policy.New("queue", algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: 10 * time.Second}, key))
	s, err := policy.NewSet([]*policy.Policy{minute, queue})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	takeResult(t, s, store, r)
	last := takeResult(t, s, store, r) // held 1 s: the queue's last place
	if err := last.Refund(context.Background(), store, 0); err != nil {
		t.Fatal(err)
	}
	if !last.Refunded() || last.Given(0) || !last.Given(1) {
		t.Errorf("Refund of the last place: Refunded %v, Given %v %v; want refunded, the queue's place (1) given back",
			last.Refunded(), last.Given(0), last.Given(1))
	}
}

// TestSharedKeyFuncNotFirst: a policy sharing its key function with an
// earlier one that is not the first evaluated gets that policy's key,
// not the first's.
func TestSharedKeyFuncNotFirst(t *testing.T) {
	user := func(r *http.Request) (string, error) { return r.Header.Get("X-User"), nil }
	s, err := policy.NewSet([]*policy.Policy{
		policy.Must(policy.PerSecond("ip", 10, remoteKey)),
		policy.Must(policy.PerMinute("user-min", 100, user)),
		policy.Must(policy.PerHour("user-hour", 1000, user)),
	})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-User", "ann")
	var res policy.Result
	if err := s.Prepare(r, 0b111, &res); err != nil {
		t.Fatal(err)
	}
	if got, want := res.Key(2), "user-hour:ann"; got != want {
		t.Errorf("Key(2) = %q, want %q", got, want)
	}
}

// TestPrepareRouteFallbackAfterRouting: a route key behind a fallback
// reads the route the router set once it has routed (chi's route
// context): Prepare does not ask the Set's pattern function for it.
func TestPrepareRouteFallbackAfterRouting(t *testing.T) {
	cfg := mustParse(t, "policies:\n  - {name: per-route, limit: 100, window: 1m, key: ['header:X-A', route], fallback: ip}\n", "route.yaml")
	lookups := 0
	s, err := policy.NewSet(cfg.Policies, policy.WithPatternFunc(func(*http.Request) string { lookups++; return "/other" }))
	if err != nil {
		t.Fatal(err)
	}
	rctx := chi.NewRouteContext()
	rctx.RoutePatterns = []string{"/users/{id}"}
	r := httptest.NewRequest("GET", "/users/7", nil)
	r.Header.Set("X-A", "a")
	r = r.WithContext(context.WithValue(r.Context(), chi.RouteCtxKey, rctx))
	var res policy.Result
	if err := s.Prepare(r, 1, &res); err != nil || res.Len() != 1 {
		t.Fatalf("Prepare: %v (%d checks)", err, res.Len())
	}
	if lookups != 0 || !strings.HasSuffix(res.Key(0), ":/users/{id}") {
		t.Errorf("Prepare after chi routed: %d pattern lookups, key %q; want 0, chi's route", lookups, res.Key(0))
	}
}
