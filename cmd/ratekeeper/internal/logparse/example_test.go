package logparse_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// Common, Combined and JSON lines may be mixed; malformed lines are
// counted, not fatal.
func ExampleNewReader() {
	log := `192.0.2.1 - ann [10/Mar/2024:12:00:00 +0000] "POST /login?next=/ HTTP/1.1" 401 12 "-" "curl/8.5"
not a log line
{"time": "2024-03-10T12:00:01Z", "ip": "2001:db8::1", "method": "GET", "path": "/items/7"}
`
	r, err := logparse.NewReader(strings.NewReader(log), "access.log", logparse.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for {
		e, err := r.Next()
		if err != nil {
			break // io.EOF
		}
		fmt.Printf("%s %s user=%q %s %s query=%q ua=%q\n", e.Time.Format(time.RFC3339), e.Addr, e.User, e.Method, e.Path, e.Query, e.UserAgent)
	}
	fmt.Println(r.MalformedCount(), "malformed:", r.Samples()[0].Reason)
	// Output:
	// 2024-03-10T12:00:00Z 192.0.2.1 user="ann" POST /login query="next=/" ua="curl/8.5"
	// 2024-03-10T12:00:01Z 2001:db8::1 user="" GET /items/7 query="" ua=""
	// 1 malformed: no [time] field
}
