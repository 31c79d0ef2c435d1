package replay_test

import (
	"fmt"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/replay"
	"github.com/ratekeeper/ratekeeper/policy"
)

// Three login attempts in one second against a limit of two per minute.
func ExampleEngine() {
	cfg, err := policy.ParseConfig([]byte(`
policies:
  - name: login
    algorithm: sliding_log
    limit: 2
    window: 1m
    routes: ["POST /login"]
`), "rules.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	eng, err := replay.New(cfg, replay.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	t0 := time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)
	for i := range 3 {
		e := logparse.Entry{Time: t0.Add(time.Duration(i) * 300 * time.Millisecond), Addr: "192.0.2.1", Method: "POST", Path: "/login"}
		if err := eng.Add(&e); err != nil {
			fmt.Println(err)
			return
		}
	}
	e := logparse.Entry{Time: t0.Add(time.Second), Addr: "192.0.2.1", Method: "GET", Path: "/"}
	eng.Add(&e)
	rep, err := eng.Finish()
	if err != nil {
		fmt.Println(err)
		return
	}
	p := rep.Policies[0]
	fmt.Printf("%s: %d requests, %d rejected, top %v; %d request matched no policy\n", p.Name, p.Requests, p.Rejected, p.Top, rep.Unmatched)
	for _, t := range p.Limits {
		fmt.Printf("%s: limit %d rejects %d\n", t.Label, t.Spec.Limit, t.Rejected)
	}
	// Output:
	// login: 3 requests, 1 rejected, top [{192.0.2.1 1}]; 1 request matched no policy
	// configured: limit 2 rejects 1
	// P95 x 1.2: limit 4 rejects 0
	// P95 x 1.5: limit 5 rejects 0
	// P99 x 2: limit 6 rejects 0
}
