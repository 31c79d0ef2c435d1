// Package errlist joins the problems a constructor found into the one
// error it returns, as every constructor of the module reports them: all
// at once, one per line.
package errlist

import "errors"

// Join returns errs as one error: nil for none, the error itself for one
// (word for word), and errors.Join of them for several (one per line;
// errors.As finds the first that matches, errors.Is each).
func Join(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}
