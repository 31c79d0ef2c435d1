package middleware_test

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
)

// A strict parser of the Structured Field Values of RFC 9651 (formerly
// RFC 8941), as a recipient that follows its §4.2 to the letter reads the
// rate-limit fields: anything outside the grammar fails the whole field
// (no skipped empty members, no trailing comma, no space before ';').

// sfBare is a parsed bare item: one of int64, string (a String),
// sfToken, []byte, bool.
type sfBare any

// sfToken is a Token (distinct from a String).
type sfToken string

// sfParam is one parameter of an item, in order.
type sfParam struct {
	key string
	val sfBare
}

// sfMember is an Item of a List or the value of a Dictionary member.
type sfMember struct {
	key    string // Dictionary key; "" in a List
	val    sfBare
	params []sfParam
}

// param returns the value of the parameter key, if present.
func (m sfMember) param(key string) (sfBare, bool) {
	for _, p := range m.params {
		if p.key == key {
			return p.val, true
		}
	}
	return nil, false
}

type sfStrict struct {
	s string
	i int
}

var errSF = errors.New("not a structured field")

// joinLines combines the field lines of one field as RFC 9110 §5.3 does.
func joinLines(lines []string) string { return strings.Join(lines, ", ") }

// parseSFListStrict parses a List field (RFC 9651 §4.2.1).
func parseSFListStrict(lines []string) ([]sfMember, error) {
	p := &sfStrict{s: strings.Trim(joinLines(lines), " ")}
	var out []sfMember
	for p.i < len(p.s) {
		m, err := p.item()
		if err != nil {
			return nil, err
		}
		out = append(out, m)
		if err := p.listSep(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// parseSFDictStrict parses a Dictionary field (RFC 9651 §4.2.2).
func parseSFDictStrict(lines []string) ([]sfMember, error) {
	p := &sfStrict{s: strings.Trim(joinLines(lines), " ")}
	var out []sfMember
	for p.i < len(p.s) {
		k, err := p.key()
		if err != nil {
			return nil, err
		}
		m := sfMember{key: k, val: true}
		if p.i < len(p.s) && p.s[p.i] == '=' {
			p.i++
			if m, err = p.item(); err != nil {
				return nil, err
			}
			m.key = k
		} else if m.params, err = p.params(); err != nil {
			return nil, err
		}
		out = append(out, m)
		if err := p.listSep(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// parseSFItemStrict parses an Item field (RFC 9651 §4.2.3).
func parseSFItemStrict(lines []string) (sfMember, error) {
	p := &sfStrict{s: strings.Trim(joinLines(lines), " ")}
	m, err := p.item()
	if err == nil && p.i != len(p.s) {
		err = errSF
	}
	return m, err
}

func (p *sfStrict) listSep() error {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
	if p.i == len(p.s) {
		return nil
	}
	if p.s[p.i] != ',' {
		return errSF
	}
	p.i++
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
	if p.i == len(p.s) {
		return errSF // trailing comma
	}
	return nil
}

func (p *sfStrict) item() (sfMember, error) {
	v, err := p.bare()
	if err != nil {
		return sfMember{}, err
	}
	ps, err := p.params()
	return sfMember{val: v, params: ps}, err
}

func (p *sfStrict) params() ([]sfParam, error) {
	var ps []sfParam
	for p.i < len(p.s) && p.s[p.i] == ';' {
		p.i++
		for p.i < len(p.s) && p.s[p.i] == ' ' {
			p.i++
		}
		k, err := p.key()
		if err != nil {
			return nil, err
		}
		var v sfBare = true
		if p.i < len(p.s) && p.s[p.i] == '=' {
			p.i++
			if v, err = p.bare(); err != nil {
				return nil, err
			}
		}
		ps = append(ps, sfParam{k, v})
	}
	return ps, nil
}

func (p *sfStrict) key() (string, error) {
	start := p.i
	if p.i >= len(p.s) || !(p.s[p.i] >= 'a' && p.s[p.i] <= 'z' || p.s[p.i] == '*') {
		return "", errSF
	}
	for p.i < len(p.s) && strings.IndexByte("abcdefghijklmnopqrstuvwxyz0123456789_-.*", p.s[p.i]) >= 0 {
		p.i++
	}
	return p.s[start:p.i], nil
}

func (p *sfStrict) bare() (sfBare, error) {
	if p.i >= len(p.s) {
		return nil, errSF
	}
	switch c := p.s[p.i]; {
	case c == '-' || c >= '0' && c <= '9':
		start := p.i
		if c == '-' {
			p.i++
		}
		d := p.i
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		if p.i == d || p.i-d > 15 {
			return nil, errSF
		}
		if p.i < len(p.s) && p.s[p.i] == '.' {
			return nil, errSF // a Decimal: no rate-limit field carries one
		}
		n, err := strconv.ParseInt(p.s[start:p.i], 10, 64)
		return n, err
	case c == '"':
		p.i++
		var b strings.Builder
		for p.i < len(p.s) {
			c := p.s[p.i]
			p.i++
			switch {
			case c == '\\':
				if p.i >= len(p.s) || p.s[p.i] != '"' && p.s[p.i] != '\\' {
					return nil, errSF
				}
				b.WriteByte(p.s[p.i])
				p.i++
			case c == '"':
				return b.String(), nil
			case c < 0x20 || c > 0x7e:
				return nil, errSF
			default:
				b.WriteByte(c)
			}
		}
		return nil, errSF
	case c == ':':
		end := strings.IndexByte(p.s[p.i+1:], ':')
		if end < 0 {
			return nil, errSF
		}
		b, err := base64.StdEncoding.Strict().DecodeString(p.s[p.i+1 : p.i+1+end])
		if err != nil {
			return nil, errSF
		}
		p.i += end + 2
		return b, nil
	case c == '?':
		if p.i+1 < len(p.s) && (p.s[p.i+1] == '0' || p.s[p.i+1] == '1') {
			p.i += 2
			return p.s[p.i-1] == '1', nil
		}
		return nil, errSF
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '*':
		start := p.i
		for p.i < len(p.s) && (strings.IndexByte("!#$%&'*+-.^_`|~:/", p.s[p.i]) >= 0 ||
			p.s[p.i] >= '0' && p.s[p.i] <= '9' || p.s[p.i] >= 'a' && p.s[p.i] <= 'z' || p.s[p.i] >= 'A' && p.s[p.i] <= 'Z') {
			p.i++
		}
		return sfToken(p.s[start:p.i]), nil
	}
	return nil, errSF
}
