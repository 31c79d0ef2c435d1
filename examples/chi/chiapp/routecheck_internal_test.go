package chiapp

import (
	"errors"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestRouteTypoRefused: a rule whose route the router lacks ("POST
// /logn" for "POST /login") would leave login unlimited, silently; the
// handler is refused with the error naming it, which examples/chi logs
// before exiting, instead of serving.
func TestRouteTypoRefused(t *testing.T) {
	store, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	typo := func(key keyfunc.Func) ([]*policy.Policy, error) {
		login, err := policy.Login(key, policy.WithRoutes("POST /logn"))
		return []*policy.Policy{login}, err
	}
	h, err := newHandler(store, nil, typo)
	if !errors.Is(err, middleware.ErrUnknownRoute) || h != nil {
		t.Fatalf("newHandler with a rule on POST /logn = %v, %v; want no handler and ErrUnknownRoute", h, err)
	}
	if !strings.Contains(err.Error(), `route "POST /logn"`) {
		t.Errorf("the error does not name the route: %v", err)
	}
	if _, err := NewHandler(store, nil); err != nil {
		t.Errorf("NewHandler = %v, want nil: its rules' routes are the router's", err)
	}
}
