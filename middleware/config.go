package middleware

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/errlist"
	"github.com/ratekeeper/ratekeeper/policy"
)

// profiles maps the header profiles of a configuration file to Profiles.
var profiles = map[policy.HeaderProfile]Profile{
	policy.HeadersIETF:                 IETF,
	policy.HeadersDraft7:               Draft7,
	policy.HeadersDraft6:               Draft6,
	policy.HeadersLegacy:               Legacy,
	policy.HeadersLegacyUnix:           LegacyUnix,
	policy.HeadersNone:                 NoHeaders,
	policy.HeadersIETFMostConstraining: IETFMostConstraining,
}

// FallbackMaxKeys bounds the in-memory store that [ConfigOptions] and
// [FromConfig] make for failure_mode fallback when given none: the keys of
// a shared store's outage, one instance's clients, are far fewer, and a
// client rotating keys meets the bound (see [algorithms.WithMaxKeys]) instead
// of growing the store until the outage ends. At the bound the store takes
// at most about 70 MB for the fixed-size kinds (the budget of
// [algorithms.MemoryStore]: 70 bytes per key, which covers a table while
// it grows); sliding_log takes more, 16 bytes per accepted instant in each
// key's window besides. To choose another, pass your own store:
// OnStoreError(FallBack(s)).
const FallbackMaxKeys = 1_000_000

// fallbackMaxKeys is FallbackMaxKeys, lowered by tests.
var fallbackMaxKeys = FallbackMaxKeys

// ConfigOptions returns the options a loaded configuration ([policy.Load])
// asks for: its header profile, its failure mode, and the check for
// forwarding headers that its ip keys ignore ([CheckForwarding]) when a
// policy keys by ip and no trusted_hops are declared, compared with its
// trusted_proxies when it declares some. fallback is the store
// that decides under failure_mode fallback; nil means a new in-memory store
// of at most [FallbackMaxKeys] keys (limits per instance while the shared
// store is down). An empty profile or mode means the default. A profile
// or mode that does not exist, or a negative FailureRetryAfter under
// failure_mode closed, is an error naming the field, every one reported.
func ConfigOptions(cfg *policy.Config, fallback algorithms.Store) ([]Option, error) {
	return configOptions(cfg, fallback, "ConfigOptions")
}

// configOptions is ConfigOptions; its errors name fn, the function the
// caller called.
func configOptions(cfg *policy.Config, fallback algorithms.Store, fn string) ([]Option, error) {
	if cfg == nil {
		return nil, fmt.Errorf("middleware: %s: config is nil", fn)
	}
	if err := checkSettings(cfg, fn); err != nil {
		return nil, err
	}
	var opts []Option
	if cfg.Headers != "" {
		opts = append(opts, WithHeaders(profiles[cfg.Headers]))
	}
	switch cfg.FailureMode {
	case "", policy.FailureOpen:
		opts = append(opts, OnStoreError(FailOpen()))
	case policy.FailureClosed:
		ra := cfg.FailureRetryAfter
		if ra == 0 {
			ra = policy.DefaultFailureRetryAfter
		}
		opts = append(opts, OnStoreError(FailClosed(ra)))
	case policy.FailureFallback:
		if fallback == nil {
			s, err := algorithms.NewMemoryStore(algorithms.WithMaxKeys(fallbackMaxKeys))
			if err != nil {
				return nil, fmt.Errorf("middleware: %s: fallback store: %w", fn, err)
			}
			fallback = s
		}
		opts = append(opts, OnStoreError(FallBack(fallback)))
	}
	// The forwarding check, as the configuration asks, unless the
	// caller's CheckForwarding came first.
	opts = append(opts, wantConfig(cfg))
	return opts, nil
}

// checkSettings returns an error naming fn and the field for each
// setting of cfg that cannot be taken (policy.Load refuses them; a Config
// built in code may hold them), several joined: a header profile or
// failure mode that does not exist, a negative FailureRetryAfter of
// failure_mode closed (which FailClosed would refuse, named as an option
// the caller never gave).
func checkSettings(cfg *policy.Config, fn string) error {
	var errs []error
	if _, ok := profiles[cfg.Headers]; !ok && cfg.Headers != "" {
		errs = append(errs, fmt.Errorf("middleware: %s: headers: unknown profile %q", fn, cfg.Headers))
	}
	switch cfg.FailureMode {
	case "", policy.FailureOpen, policy.FailureClosed, policy.FailureFallback:
	default:
		errs = append(errs, fmt.Errorf("middleware: %s: failure_mode: unknown mode %q", fn, cfg.FailureMode))
	}
	if cfg.FailureMode == policy.FailureClosed && cfg.FailureRetryAfter < 0 {
		errs = append(errs, fmt.Errorf("middleware: %s: failure_retry_after: must not be negative, got %s", fn, cfg.FailureRetryAfter))
	}
	return errlist.Join(errs)
}

// FromConfig returns a middleware enforcing the policies of a loaded
// configuration ([policy.Load]) with its header profile, failure mode and
// forwarding check ([ConfigOptions], an in-memory fallback store of at
// most [FallbackMaxKeys] keys for failure_mode fallback),
// keeping state in store. opts come after the configuration's options, so
// they win: OnStoreError(FallBack(s)) supplies another fallback store.
//
// Its errors are [New]'s, after those of the settings it cannot take,
// every one reported.
//
// To reload the file while serving, see [Middleware.ApplyConfig] and
// package policy/reload.
func FromConfig(store algorithms.Store, cfg *policy.Config, opts ...Option) (*Middleware, error) {
	copts, err := configOptions(cfg, nil, "FromConfig")
	if cfg == nil {
		return nil, err
	}
	// Settings refused leave the rest to judge all the same: the
	// caller's options and the policies (see newMiddleware).
	m, err := newMiddleware(store, cfg.Policies, copts, opts, err)
	if err != nil {
		return nil, err
	}
	s := settingsOf(cfg)
	if !s.hasProfile {
		s.profile, s.hasProfile = IETF, true
	}
	m.built = &s
	return m, nil
}

// fileSettings are the settings of a configuration other than its
// policies: they take effect when the middleware is built.
type fileSettings struct {
	profile    Profile
	hasProfile bool // the configuration names a profile
	mode       failureMode
	retryAfter time.Duration // of failClosed
}

// settingsOf returns the settings cfg asks for.
func settingsOf(cfg *policy.Config) fileSettings {
	var s fileSettings
	s.profile, s.hasProfile = profiles[cfg.Headers]
	s.mode = configMode(cfg.FailureMode)
	if s.mode == failClosed {
		s.retryAfter = cfg.FailureRetryAfter
		if s.retryAfter == 0 {
			s.retryAfter = policy.DefaultFailureRetryAfter
		}
		s.retryAfter = sentRetryAfter(s.retryAfter)
	}
	return s
}

// sentRetryAfter returns the Retry-After that FailClosed(d) sends: d in
// whole seconds, rounded up, at least 1. Two durations that send the same
// are the same setting. (A duration within a second of the largest is
// returned as it is.)
func sentRetryAfter(d time.Duration) time.Duration {
	s := max(1, seconds(d))
	if s > math.MaxInt64/int64(time.Second) {
		return d
	}
	return time.Duration(s) * time.Second
}

// ApplyConfig makes the policies of a newly loaded configuration the
// active ones ([Middleware.SetPolicies]): the hook for a reloader. The
// key settings (trusted_proxies or trusted_hops, ip_source, the IP
// prefixes) live in the policies' key functions and so are applied with
// them. Its headers and failure mode are not applied (they are fixed when
// the middleware is built); a configuration that changes them returns the
// policies applied and an error saying a restart is needed, matching
// [ErrRestartNeeded]. A configuration naming a profile or mode that does
// not exist, or (built in code) holding a negative FailureRetryAfter
// under failure_mode closed, is refused, its policies not applied, every
// such setting named; so are policies [Middleware.SetPolicies] refuses,
// behind "middleware: ApplyConfig: ". For a middleware built
// by [FromConfig] they are
// compared with the configuration it was built from (options given there
// may override them); for one built with New, the settings the file
// states (see policy.Config.Stated) are compared with those in force, and
// a file that leaves them to their defaults changes nothing.
//
// Calls made at once (a reloader's and an operator's) each apply their
// configuration whole, its policies with its forwarding setup, one
// after the other.
func (m *Middleware) ApplyConfig(cfg *policy.Config) error {
	if cfg == nil {
		return errors.New("middleware: ApplyConfig: config is nil")
	}
	if err := checkSettings(cfg, "ApplyConfig"); err != nil {
		return err
	}
	if err := m.follow(cfg); err != nil {
		return err
	}
	// Compared with the configuration the middleware was built from (its
	// options may override it), else with the settings in force.
	cur := fileSettings{profile: m.profile, hasProfile: true, mode: m.failure.mode}
	if cur.mode == failClosed {
		cur.retryAfter = sentRetryAfter(m.failure.retryAfter)
	}
	// A middleware built with New has no file of its own: a loaded file
	// changes only the settings it states (one that leaves them to their
	// defaults leaves them to the middleware's options). A Config built
	// in code is taken as stating them all.
	stated := func(string) bool { return true }
	if m.built != nil {
		cur = *m.built
	} else if cfg.Source() != nil {
		stated = cfg.Stated
	}
	s := settingsOf(cfg)
	var changed []string
	if s.hasProfile && s.profile != cur.profile && stated("headers") {
		changed = append(changed, "headers")
	}
	if s.mode != cur.mode && stated("failure_mode") {
		changed = append(changed, "failure_mode")
	} else if s.mode == cur.mode && s.retryAfter != cur.retryAfter && stated("failure_retry_after") {
		changed = append(changed, "failure_retry_after")
	}
	if len(changed) > 0 {
		return fmt.Errorf("%w: %v changed (policies applied)", ErrRestartNeeded, changed)
	}
	return nil
}

// follow makes the policies of cfg the active ones and follows its
// forwarding setup (see followConfig), together: a configuration applied
// concurrently comes wholly before or after, never leaving the policies
// of one with the forwarding setup of the other.
func (m *Middleware) follow(cfg *policy.Config) error {
	m.rules.mu.Lock()
	defer m.rules.mu.Unlock()
	if errs := m.setPolicies(cfg.Policies); len(errs) > 0 {
		return errlist.Join(wrapEach("middleware: ApplyConfig: ", errs))
	}
	if m.followHook != nil {
		m.followHook()
	}
	m.followConfig(cfg)
	return nil
}

// ErrRestartNeeded is returned by [Middleware.ApplyConfig] for a
// configuration whose settings other than policies changed (the policies
// are applied). It is [policy.ErrRestartNeeded], which package
// policy/reload recognises.
var ErrRestartNeeded = policy.ErrRestartNeeded

func configMode(f policy.FailureMode) failureMode {
	switch f {
	case policy.FailureClosed:
		return failClosed
	case policy.FailureFallback:
		return fallBack
	}
	return failOpen
}
