package middleware

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/policy"
)

// Peek returns what the middleware would decide for r now, consuming
// nothing: the policies that apply to r, each with the decision its store
// would give it alone ([policy.Result.Peek], [algorithms.Peeker]: Allowed
// whether it would admit r, Remaining the units left before r). It
// serves a status endpoint ("how many logins are left?"), or a handler
// that reports a client's standing without counting a request. A
// request the middleware is serving (its handler's) is read as the
// middleware saw it: a handler behind http.StripPrefix, given the path
// cut, peeks the policies and keys the request counted under. The
// Result's Allowed says whether the middleware would admit r; Shadow
// whether it runs in dry-run mode. A request the skip function passes
// over, or to which no policy applies, gets a Result with no policies
// (Len 0). A policy without a key for r is left out ([policy.SkipPolicy])
// or is an error (a *policy.KeyError), as for a request served; so is a
// cost out of range (a *policy.CostError). r's context bounds the store's
// call. The store's failure is returned as it is: neither the failure mode,
// nor the fallback store, nor the breaker applies. A store that is not an
// [algorithms.Peeker] is an error wrapping errors.ErrUnsupported.
// Like Reset, it is no request served: it is not counted in
// Stats().Unrouted, nor does it spend the ErrUnrouted report.
func (m *Middleware) Peek(r *http.Request) (*Result, error) {
	res := &Result{shadow: m.shadow}
	set := m.set.Load()
	seen := served(r, set)
	mask := uint64(0)
	if m.skip == nil || !m.skip(seen) {
		mask = set.Match(seen)
	}
	if err := set.Prepare(seen, mask, &res.pr); err != nil {
		return nil, err
	}
	if err := res.pr.Peek(r.Context(), m.store); err != nil {
		return nil, fmt.Errorf("middleware: Peek: %w", err)
	}
	return res, nil
}

// Reset makes the store forget r's client under the policies that apply
// to r, or only under those named (their keys as a request would be
// checked under them; see [algorithms.Resetter]): the client starts
// afresh, with the policies' whole allowances. It serves a login handler
// clearing a client's count of failures once the user has signed in
// (express-rate-limit's resetKey), or an operator lifting a limit. A
// request the middleware is serving is read as it saw it (see Peek). A name
// that no policy of the middleware has is an error naming it, and then
// nothing is reset; a named policy that does not apply to r is left
// alone. The skip function is not consulted. A policy without a key for
// r is left out (policy.SkipPolicy) or is an error (a *policy.KeyError).
// With a fallback store ([FallBack]) the keys are forgotten there too,
// and the errors of both are joined. r's context bounds the calls. A
// store that is not an [algorithms.Resetter] is an error wrapping
// errors.ErrUnsupported.
func (m *Middleware) Reset(r *http.Request, names ...string) error {
	set := m.set.Load()
	want, err := namedMask(set, names)
	if err != nil {
		return err
	}
	seen := served(r, set)
	mask := set.Match(seen) & want
	if mask == 0 {
		return nil
	}
	var res policy.Result
	if err := set.Prepare(seen, mask, &res); err != nil {
		return err
	}
	return m.reset(r.Context(), "Reset", func(store algorithms.Store) error {
		return res.Reset(r.Context(), store, uint64(1)<<res.Len()-1)
	})
}

// ResetKey makes the store forget one key under the policy it names: key
// as [policy.Result.Key] reports it, and as the middleware's log gives it
// with [LogRawKeys] ("per-ip:203.0.113.7": the policy's name, a colon, the
// client's key), so that an operator can lift the limit of a client seen in
// the log. (Without LogRawKeys a denial record names the client only by
// its pk, a keyed hash, which ResetKey does not take.) A key
// that names no policy of the middleware is an error, as a key without
// the colon is. A policy running at a limit set by [Middleware.SetLimit]
// (lowered, or raised for a kind judged above its limit) forgets the key
// under the configured Spec guarding it too, and one a reload guards
// under the Spec the reload replaced. With a
// fallback store the key is forgotten there too. A
// store that is not an [algorithms.Resetter] is an error wrapping
// errors.ErrUnsupported.
func (m *Middleware) ResetKey(ctx context.Context, key string) error {
	name, rest, found := strings.Cut(key, ":")
	if !found || rest == "" {
		return fmt.Errorf("middleware: ResetKey: key %q is not a policy's name, a colon and a client's key", key)
	}
	set := m.set.Load()
	i := policyIndex(set, name)
	if i < 0 {
		return fmt.Errorf("middleware: ResetKey: no policy named %q", name)
	}
	p := set.Policy(i)
	checks := []algorithms.Check{{Spec: p.Spec(), Key: key}}
	for _, g := range p.Guards() {
		// A lowered limit: the configured Spec guarding it would refuse
		// the client still (see policy.Result.Reset). Its check is made
		// as a request's is (at the limit it is judged at), although a
		// reset forgets the state whatever the limit.
		c := algorithms.Check{Spec: g, Key: key}
		if l := p.GuardLimit(g); l != g.Limit {
			c.Limit = l
		}
		checks = append(checks, c)
	}
	return m.reset(ctx, "ResetKey", func(store algorithms.Store) error {
		rs, ok := store.(algorithms.Resetter)
		if !ok {
			return fmt.Errorf("store %T cannot reset keys: %w", store, errors.ErrUnsupported)
		}
		return rs.Reset(ctx, checks...)
	})
}

// served returns r as the middleware saw it when it is serving r under
// set (r's context holds its decision, prepared with set): a handler
// further in may be given another request, such as one whose path
// http.StripPrefix cut, which the router would route elsewhere, under
// other policies and keys than those r counted under. Otherwise (a
// request the middleware does not serve, serves WithoutContext, or began
// to serve under another set) it returns r.
func served(r *http.Request, set *policy.Set) *http.Request {
	seen := r
	eachOuter(r.Context(), outerKey{}, 0, func(c *resultContext, _ time.Duration) bool {
		if c.res.Set() != set {
			return true
		}
		if c.req.Context() == context.Context(c) {
			seen = &c.req
		}
		return false
	})
	return seen
}

// reset calls f with the store and, when the failure mode has one, the
// fallback store, and joins their errors, each naming call.
func (m *Middleware) reset(ctx context.Context, call string, f func(algorithms.Store) error) error {
	err := f(m.store)
	if err != nil {
		err = fmt.Errorf("middleware: %s: %w", call, err)
	}
	if m.failure.mode == fallBack && m.failure.store != nil {
		if ferr := f(m.failure.store); ferr != nil {
			err = errors.Join(err, fmt.Errorf("middleware: %s: fallback: %w", call, ferr))
		}
	}
	return err
}

// namedMask returns the mask of set's policies named by names (all of
// them for none), or an error naming a name no policy has.
func namedMask(set *policy.Set, names []string) (uint64, error) {
	if len(names) == 0 {
		return ^uint64(0), nil
	}
	var mask uint64
	for _, name := range names {
		i := policyIndex(set, name)
		if i < 0 {
			return 0, fmt.Errorf("middleware: Reset: no policy named %q", name)
		}
		mask |= 1 << i
	}
	return mask, nil
}

// policyIndex returns the index in set of the policy named name, or -1.
func policyIndex(set *policy.Set, name string) int {
	for i := range set.Len() {
		if set.Policy(i).Name() == name {
			return i
		}
	}
	return -1
}
