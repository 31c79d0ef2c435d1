package errlist_test

import (
	"errors"
	"testing"

	"github.com/ratekeeper/ratekeeper/internal/errlist"
)

func TestJoin(t *testing.T) {
	a, b := errors.New("a"), errors.New("b")
	if err := errlist.Join(nil); err != nil {
		t.Errorf("Join(nil) = %v, want nil", err)
	}
	if err := errlist.Join([]error{a}); err != a {
		t.Errorf("Join([a]) = %#v, want a itself", err)
	}
	err := errlist.Join([]error{a, b})
	if err == nil || err.Error() != "a\nb" || !errors.Is(err, a) || !errors.Is(err, b) {
		t.Errorf("Join([a, b]) = %v, want a and b, one per line", err)
	}
}
