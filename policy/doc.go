// Package policy turns rate limits into decisions about HTTP requests.
//
// A [Policy] is a named limit: an [algorithms.Spec] (say 100 per minute,
// sliding window counter), a [keyfunc.Func] saying whose allowance a request
// uses (client IP, user, route, or a composite), and optionally a cost per
// request and the requests it applies to (methods, route patterns, a
// predicate). The name is sent in the RateLimit headers and namespaces the
// policy's keys.
//
// A [Set] stacks policies. For each request it finds the policies that apply
// ([Set.Match]), extracts their keys and costs ([Set.Prepare]) and decides
// all of them with one call to the store ([Result.Take]): all or nothing, so
// a request that the per-minute policy denies does not use up the
// per-second allowance. A Set whose policies carry routes is a rule table
// for one global middleware; see [WithRoutes] for where the route pattern
// comes from.
//
// [Load] and [ParseConfig] read policies and the middleware's settings from
// a YAML or JSON file (see [Config]); middleware.FromConfig turns one into a
// middleware, and package policy/reload watches the file and swaps in the
// policies of each valid new version without a restart.
//
// [Login], [Register], [Comments] and [WriteEndpoints] are a ready preset
// for write endpoints.
//
// The net/http middleware that sends headers and 429 responses is package
// middleware; this package writes no response of its own (it computes the
// value of the RateLimit-Policy field for it: [Set.PolicyHeader]).
package policy
