package policy_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

func ExamplePerMinute() {
	ip := keyfunc.Must(keyfunc.IP())
	p, err := policy.PerMinute("per-minute", 100, ip)
	if err != nil {
		panic(err)
	}
	fmt.Println(p)
	fmt.Println(p.Spec())

	// Every problem of a policy is reported, one per line.
	_, err = policy.PerMinute("per minute", 0, ip)
	fmt.Println(err)
	// Output:
	// "per-minute";q=100;w=60
	// sliding_window 100/1m0s
	// policy: "per minute": Name "per minute" contains ' '; use A-Z, a-z, 0-9, '-', '_' and '.'
	// policy: "per minute": Spec.Limit must be positive, got 0
}

// A rule table: policies restricted to methods and routes, one Set.
func ExampleSet_Match() {
	ip := keyfunc.Must(keyfunc.IP())
	set, err := policy.NewSet([]*policy.Policy{
		policy.Must(policy.PerSecond("per-second", 10, ip)),
		policy.Must(policy.Login(ip, policy.WithRoutes("POST /login"))),
		policy.Must(policy.PerMinute("writes", 30, ip, policy.WithMethods("POST", "PUT", "DELETE"))),
	})
	if err != nil {
		panic(err)
	}
	for _, target := range []struct{ method, pattern string }{{"GET", "/"}, {"POST", "/login"}, {"PUT", "/items/{id}"}} {
		r := httptest.NewRequest(target.method, "/", nil)
		r.Pattern = target.pattern // as the router sets it
		fmt.Printf("%s %s: %s\n", target.method, target.pattern, set.PolicyHeader(set.Match(r)))
	}
	// Output:
	// GET /: "per-second";q=10;w=1
	// POST /login: "per-second";q=10;w=1, "login";q=5;w=60, "writes";q=30;w=60
	// PUT /items/{id}: "per-second";q=10;w=1, "writes";q=30;w=60
}

// Stacked policies are decided by one store call, all or nothing.
func ExampleResult_Take() {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(algorithms.ClockFunc(func() time.Time { return now })))
	if err != nil {
		panic(err)
	}
	defer store.Close()
	ip := keyfunc.Must(keyfunc.IP())
	set, err := policy.NewSet([]*policy.Policy{
		policy.Must(policy.PerSecond("per-second", 3, ip, policy.WithAlgorithm(algorithms.FixedWindow))),
		policy.Must(policy.PerMinute("per-minute", 2, ip, policy.WithAlgorithm(algorithms.FixedWindow))),
	})
	if err != nil {
		panic(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	for range 3 {
		var res policy.Result
		if err := set.Prepare(r, set.Match(r), &res); err != nil {
			panic(err)
		}
		if err := res.Take(context.Background(), store); err != nil {
			panic(err)
		}
		fmt.Printf("allowed=%v", res.Allowed())
		for i := 0; i < res.Len(); i++ {
			fmt.Printf(" %s:remaining=%d", res.Policy(i).Name(), res.Decision(i).Remaining)
		}
		fmt.Printf(" retry-after=%v\n", res.RetryAfter())
	}
	// Output:
	// allowed=true per-second:remaining=2 per-minute:remaining=1 retry-after=0s
	// allowed=true per-second:remaining=1 per-minute:remaining=0 retry-after=0s
	// allowed=false per-second:remaining=1 per-minute:remaining=0 retry-after=1m0s
}

func ExampleWriteEndpoints() {
	ip := keyfunc.Must(keyfunc.IP())
	ipUser := keyfunc.Must(keyfunc.Join(ip, keyfunc.User()))
	rules, err := policy.WriteEndpoints(ipUser)
	if err != nil {
		panic(err)
	}
	for _, p := range rules {
		fmt.Println(p, p.Spec())
	}
	// Output:
	// "login";q=5;w=60 sliding_log 5/1m0s
	// "register";q=10;w=3600 sliding_window 10/1h0m0s
	// "comments";q=3;w=60 token_bucket 6/1m0s burst=3
}
