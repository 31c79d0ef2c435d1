package middleware_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestSetFeedbackTypedNil: a nil pointer whose type is a Feedback (a
// *adaptive.Controller variable never assigned, a recorder of one's own)
// is not an interface nil, so SetFeedback stored it, and every request
// then called Observe, Begin or Refused on the nil pointer: the handler's
// requests panicked as they ended, the denied ones before their 429. It
// is taken as SetFeedback(nil) is, as a nil observer bound by BoundTo is
// taken as none: it removes the Feedback set before, and the requests
// are served and refused as without one. Through a ServeMux and chi.
func TestSetFeedbackTypedNil(t *testing.T) {
	var (
		ctrl *adaptive.Controller
		rec  *refusalRecorder
	)
	for _, c := range []struct {
		name string
		f    middleware.Feedback
	}{
		{"*adaptive.Controller", ctrl},
		{"*refusalRecorder", rec},
	} {
		for _, router := range []string{"ServeMux", "chi"} {
			t.Run(c.name+"/"+router, func(t *testing.T) {
				store, clock := newStore(t)
				m := middleware.MustNew(store, []*policy.Policy{fixed("p", 1, time.Hour, remote)}, middleware.WithClock(clock))
				before := &refusalRecorder{}
				m.SetFeedback(before)
				m.SetFeedback(c.f)
				h := routed(router, m)
				var codes []string
				for range 2 {
					w := httptest.NewRecorder()
					func() {
						defer func() {
							if p := recover(); p != nil {
								t.Errorf("the request panicked: %v", p)
							}
						}()
						h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
					}()
					codes = append(codes, fmt.Sprint(w.Code))
				}
				if got := strings.Join(codes, " "); got != "200 429" {
					t.Errorf("statuses %s, want 200 429", got)
				}
				if got := before.take(); got != "" {
					t.Errorf("the Feedback set before was told %q, want nothing (replaced)", got)
				}
			})
		}
	}
}
