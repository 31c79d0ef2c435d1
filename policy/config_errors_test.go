package policy_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigErrorFormat: the message is "policy: file:line:col: field:
// reason", each part left out when unknown (no file, line or column 0, no
// field), with one space between the position and what follows, and a
// column only after a line.
func TestConfigErrorFormat(t *testing.T) {
	for _, tc := range []struct {
		e    policy.ConfigError
		want string
	}{
		{policy.ConfigError{Reason: "is empty"}, "policy: is empty"},
		{policy.ConfigError{Field: "policies[0].limit", Reason: "must be positive"}, "policy: policies[0].limit: must be positive"},
		{policy.ConfigError{File: "a.yaml", Reason: "is empty"}, "policy: a.yaml: is empty"},
		{policy.ConfigError{File: "a.yaml", Line: 3, Reason: "x"}, "policy: a.yaml:3: x"},
		{policy.ConfigError{File: "a.yaml", Line: 3, Column: 7, Field: "f", Reason: "x"}, "policy: a.yaml:3:7: f: x"},
		{policy.ConfigError{Line: 3, Column: 7, Reason: "x"}, "policy: 3:7: x"},
		{policy.ConfigError{File: "a.yaml", Column: 7, Reason: "x"}, "policy: a.yaml: x"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%+v: Error() = %q, want %q", tc.e, got, tc.want)
		}
	}
}

// TestConfigErrorsUnwraps: ConfigErrors finds the ConfigErrors of an error
// wrapped once or more (fmt.Errorf's %w) as well as joined, in order, and
// none in an error that holds none.
func TestConfigErrorsUnwraps(t *testing.T) {
	a := &policy.ConfigError{Field: "a", Reason: "x"}
	b := &policy.ConfigError{Field: "b", Reason: "y"}
	for _, tc := range []struct {
		name string
		err  error
		want []*policy.ConfigError
	}{
		{"one", a, []*policy.ConfigError{a}},
		{"wrapped", fmt.Errorf("loading: %w", a), []*policy.ConfigError{a}},
		{"wrapped twice", fmt.Errorf("reload: %w", fmt.Errorf("loading: %w", a)), []*policy.ConfigError{a}},
		{"joined, wrapped", fmt.Errorf("loading: %w", errors.Join(a, b)), []*policy.ConfigError{a, b}},
		{"wrapped, joined", errors.Join(fmt.Errorf("x: %w", a), fmt.Errorf("y: %w", b)), []*policy.ConfigError{a, b}},
		{"other", errors.New("other"), nil},
		{"nil", nil, nil},
	} {
		got := policy.ConfigErrors(tc.err)
		if len(got) != len(tc.want) {
			t.Errorf("%s: ConfigErrors = %v, want %v", tc.name, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: ConfigErrors[%d] = %v, want %v", tc.name, i, got[i], tc.want[i])
			}
		}
	}
}

// TestConfigShapesReported: an empty mapping as a policy is a policy with
// every required field missing, each reported where the mapping is; a
// mapping key that an alias makes a list is refused where the alias is.
func TestConfigShapesReported(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"empty policy", "policies:\n  - {}\n", []string{
			"policy: f.yaml:2:5: policies[0].name: is missing",
			"policy: f.yaml:2:5: policies[0].limit: is missing",
			"policy: f.yaml:2:5: policies[0].window: is missing",
		}},
		{"list key", "x: &s [a]\n*s : 1\n", []string{"policy: f.yaml:2:1: a mapping key must be a plain string"}},
	} {
		_, err := policy.ParseConfig([]byte(tc.doc), "f.yaml")
		errs := policy.ConfigErrors(err)
		var got []string
		for _, e := range errs {
			got = append(got, e.Error())
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: errors %q, want %q", tc.name, got, tc.want)
		}
	}
}
