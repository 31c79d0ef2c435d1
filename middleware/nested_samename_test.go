package middleware_test

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestNestedSameNameWarnedOnce: an outer middleware (every route: "api",
// 100 a minute) and an inner one (on a route: another policy named "api",
// 5 a minute) count apart, and each writes its member: the response keeps
// the more constraining one of the name (see TestNestedSameNameOneMember),
// but the other policy's state goes unreported. No middleware can refuse
// that at construction (neither knows the other), so the inner one tells
// its error handler (or its log, or slog.Default), once, an error that
// is ErrSameNameNested and names the policy. Copies of one policy
// (given to both, lowered or raised by SetLimit in either), which the
// middlewares report once by design, and policies of names apart, are
// not reported so. Through chi and a ServeMux.
func TestNestedSameNameWarnedOnce(t *testing.T) {
	for _, mux := range []string{"chi", "ServeMux"} {
		for _, shape := range []string{"apart", "shared", "copy lowered in", "copy raised out", "names apart"} {
			t.Run(mux+"/"+shape, func(t *testing.T) {
				store, clock := newStore(t)
				onErr, reports := sameNameReports()
				outerP := fixed("api", 100, time.Minute, constKey)
				innerP := fixed("api", 5, time.Minute, constKey)
				switch shape {
				case "shared":
					innerP = outerP
				case "copy lowered in", "copy raised out":
					innerP = fixed("api", 100, time.Minute, constKey)
				case "names apart":
					innerP = fixed("login", 5, time.Minute, constKey)
				}
				outer := middleware.MustNew(store, []*policy.Policy{outerP}, middleware.WithClock(clock), onErr)
				inner := middleware.MustNew(store, []*policy.Policy{innerP}, middleware.WithClock(clock), onErr)
				switch shape {
				case "copy lowered in":
					setLimit(t, inner, "api", 5)
				case "copy raised out":
					setLimit(t, outer, "api", 200)
				}
				h := nestedRouter(mux, outer, inner)
				for range 3 {
					if w := serve(h, "GET", "/"); w.Code != http.StatusOK {
						t.Fatalf("status %d", w.Code)
					}
				}
				want := 0
				if shape == "apart" {
					want = 1
				}
				got := reports()
				if len(got) != want {
					t.Fatalf("%d ErrSameNameNested reports %v, want %d", len(got), got, want)
				}
				if want == 1 && !strings.Contains(got[0].Error(), `"api"`) {
					t.Errorf("report %q does not name the policy", got[0])
				}
			})
		}
	}
}

// sameNameReports returns an error handler option that records the
// ErrSameNameNested errors a middleware reports, and a function returning
// those recorded so far.
func sameNameReports() (middleware.Option, func() []error) {
	var mu sync.Mutex
	var got []error
	onErr := middleware.WithErrorHandler(func(_ *http.Request, err error) {
		mu.Lock()
		defer mu.Unlock()
		if errors.Is(err, middleware.ErrSameNameNested) {
			got = append(got, err)
		}
	})
	return onErr, func() []error {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}
