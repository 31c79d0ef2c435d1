package chiapp_test

import (
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/examples/chi/chiapp"
)

// The sixth login of one user from one address within a minute is refused.
func ExampleNewHandler() {
	clock := algotest.NewClock(time.Unix(1_700_000_040, 0))
	store, _ := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	defer store.Close()
	h, err := chiapp.NewHandler(store, nil)
	if err != nil {
		panic(err)
	}
	for i := 1; i <= 6; i++ {
		r := httptest.NewRequest("POST", "/login", strings.NewReader(url.Values{"username": {"ann"}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Printf("login %d: %d Retry-After=%q\n", i, w.Code, w.Header().Get("Retry-After"))
		clock.Advance(time.Second)
	}
	// Output:
	// login 1: 200 Retry-After=""
	// login 2: 200 Retry-After=""
	// login 3: 200 Retry-After=""
	// login 4: 200 Retry-After=""
	// login 5: 200 Retry-After=""
	// login 6: 429 Retry-After="56"
}
