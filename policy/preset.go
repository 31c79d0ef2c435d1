package policy

import (
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// The write-endpoint preset: stricter limits for endpoints that change state
// and attract abuse, meant to be keyed by client IP plus user
// (keyfunc.Join(ip, user); on a login form the user is the name submitted,
// since nobody is signed in yet). The pair is the key because each part
// alone does harm: keyed by user only, an attacker anywhere locks the real
// user out of their own account by spending its allowance; keyed by IP
// only, everyone behind one NAT or proxy shares one small allowance. Under
// the pair, the user's own attempts from their address are untouched by
// anyone else's. What the pair does not bound is one address trying many
// accounts, or many addresses trying one: stack the preset under per-IP
// limits (a middleware around it, as the examples do, 10 per second and 100
// per minute) for the first, and add a looser per-user policy, or a
// CAPTCHA, for the second.
//
//   - [Login] "login": 5 per minute, sliding log. Five tries leave room for a
//     person's typos; an attacker gets at most 7,200 guesses a day per IP
//     and account instead of thousands a second. The log is exact (no boundary burst of
//     10 in two seconds, as a fixed window would allow) and costs 5
//     timestamps per key. It counts every attempt, successful or not:
//     Login(key, [CountIf]([CountFailed])) counts only the failed ones, so
//     that signing in never uses up the allowance, but only an endpoint that
//     answers a failed login with a status of 400 or more (401, 403) may use
//     it; one that shows its form again with 200, as many do, would never be
//     limited, which is why it is not the preset's default.
//   - [Register] "register": 10 per hour, sliding window counter. Sign-ups
//     are rare for a person (a family behind one NAT still fits) and are the
//     raw material of spam accounts; the counter needs two integers per key
//     for an hour-long window.
//   - [Comments] "comments": a token bucket of 3 refilled at 6 per minute.
//     A person can post a quick follow-up or two at once, and then one
//     comment every 10 seconds; a bot tops out at 360 an hour once its
//     first 3 are spent. Its RateLimit-Policy member, as package
//     middleware sends it, is "comments";q=3;w=60: a bucket's capacity
//     over the window its rate is given in, which read alone says 3 a
//     minute, not the 6 the bucket refills; the RateLimit field's t (10
//     once the 3 are spent) tells a client when its next comment goes.
const (
	// LoginLimit is the number of login attempts per minute.
	LoginLimit = 5
	// RegisterLimit is the number of sign-ups per hour.
	RegisterLimit = 10
	// CommentsRate is the number of comments per minute, sustained.
	CommentsRate = 6
	// CommentsBurst is the number of comments that may be posted at once.
	CommentsBurst = 3
)

// Login returns the preset policy for login endpoints: "login", 5 per
// minute, sliding log. Options (for example [WithRoutes]) are applied after
// the preset's own.
func Login(key keyfunc.Func, opts ...Option) (*Policy, error) {
	spec := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: LoginLimit, Window: time.Minute}
	return New("login", spec, key, opts...)
}

// Register returns the preset policy for sign-up endpoints: "register", 10
// per hour, sliding window counter.
func Register(key keyfunc.Func, opts ...Option) (*Policy, error) {
	spec := algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: RegisterLimit, Window: time.Hour}
	return New("register", spec, key, opts...)
}

// Comments returns the preset policy for comment and other posting
// endpoints: "comments", a token bucket of 3 refilled at 6 per minute.
func Comments(key keyfunc.Func, opts ...Option) (*Policy, error) {
	spec := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: CommentsRate, Window: time.Minute, Burst: CommentsBurst}
	return New("comments", spec, key, opts...)
}

// WriteEndpoints returns the three preset policies as a rule table for one
// global middleware: [Login] on "POST /login", [Register] on
// "POST /register" and [Comments] on "POST /comments". For other paths
// build them one by one with [WithRoutes].
func WriteEndpoints(key keyfunc.Func) ([]*Policy, error) {
	login, err := Login(key, WithRoutes("POST /login"))
	if err != nil {
		return nil, err
	}
	register, err := Register(key, WithRoutes("POST /register"))
	if err != nil {
		return nil, err
	}
	comments, err := Comments(key, WithRoutes("POST /comments"))
	if err != nil {
		return nil, err
	}
	return []*Policy{login, register, comments}, nil
}
