// Package keyfunc extracts rate-limit keys from HTTP requests: who is asking.
package keyfunc

import "net/http"

// A Func returns the rate-limit key of a request, or an error when it cannot
// tell (see ErrNoKey). It has the shape of httprate's KeyFunc, so functions
// written for one work with the other.
type Func func(r *http.Request) (string, error)
