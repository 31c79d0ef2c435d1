package client

import "unicode/utf8"

// A small parser for the Structured Field Values of RFC 9651 that the
// RateLimit headers use: Lists (draft -08 to -11, and RateLimit-Policy) and
// Dictionaries (draft-7). It accepts the whole grammar — Integers, Decimals,
// Strings, Tokens, Byte Sequences, Booleans, Dates, Display Strings and
// Inner Lists, each with parameters — and reports anything else as
// malformed (a List or Dictionary of more than maxSFMembers elements too),
// in which case the caller ignores the whole field, as RFC 9651 asks. Two
// things RFC 9651 rejects it reads: empty elements of a List or Dictionary
// (a leading, doubled or trailing comma, as an empty field line leaves
// once the lines are joined), which it skips, as RFC 9110 §5.6.1 asks of
// a list's recipient; and a field whose members are each a List member or
// a Dictionary member, the lines of two layers joined (see eachSFMixed).
// It never panics, its work is linear in the input,
// and it keeps no memory for each parameter or member (callers see the
// members one at a time).

// sfKind is the type of a bare item.
type sfKind byte

const (
	sfInteger sfKind = iota + 1
	sfDecimal
	sfString
	sfToken
	sfBytes
	sfBoolean
	sfDate
	sfDisplay
	sfInner // an Inner List; its members are skipped
)

// sfItem is a parsed member: a bare item and its parameters.
type sfItem struct {
	kind sfKind
	num  int64  // sfInteger, sfDate; sfBoolean: 0 or 1
	str  string // sfString, sfToken (raw for the others)
	// params is the text of the parameters, checked: param reads them when
	// asked, so that a member costs no memory for each parameter (the
	// server chooses how many it sends).
	params string
}

// param returns the value of the parameter named key: its last one, as a
// repeated key overwrites the earlier value (RFC 9651 §4.2.3.2). Its work is
// linear in the length of the parameters.
func (it *sfItem) param(key string) (sfItem, bool) {
	p := sfParser{s: it.params}
	var v sfItem
	found := false
	for !p.bad && p.peek() == ';' {
		p.i++
		p.sp()
		k := p.key()
		w := sfItem{kind: sfBoolean, num: 1}
		if p.peek() == '=' {
			p.i++
			w = p.bare()
		}
		if k == key && !p.bad {
			v, found = w, true
		}
	}
	return v, found
}

// maxSFMembers is the most members a List or Dictionary may have, the
// number RFC 9651 §3.1 asks parsers to support; one with more is malformed.
// Empty elements count too: RFC 9110 §5.6.1 asks a recipient to ignore "a
// reasonable number" of them, and this is the number.
const maxSFMembers = 1024

// sfMember is a member of a List (key "") or of a Dictionary.
type sfMember struct {
	key  string
	item sfItem
}

type sfParser struct {
	s   string
	i   int
	bad bool
	// elems counts the elements met: members and empty ones (see
	// skipEmpty), at most maxSFMembers.
	elems int
}

// parseSFList parses s as a List.
func parseSFList(s string) ([]sfMember, bool) {
	var out []sfMember
	ok := eachSFList(s, func(m sfMember) { out = append(out, m) })
	return out, ok
}

// eachSFList parses s as a List, calling fn with each member in turn, and
// reports whether s is a well-formed List: fn may have seen members of a
// malformed one, which the caller must then ignore.
func eachSFList(s string, fn func(sfMember)) bool {
	p := sfParser{s: s}
	return p.members(func() {
		if it := p.itemOrInner(); !p.bad {
			fn(sfMember{item: it})
		}
	})
}

// members parses p's input as a List or Dictionary: member, called at the
// start of each member, parses one (setting p.bad when it cannot). It
// reports whether the input is well-formed.
func (p *sfParser) members(member func()) bool {
	p.sp()
	p.skipEmpty()
	for !p.bad && p.i < len(p.s) {
		if p.elem(); p.bad {
			return false
		}
		if member(); p.bad {
			return false
		}
		if !p.next() {
			break
		}
	}
	p.sp()
	return !p.bad && p.i == len(p.s)
}

// parseSFDict parses s as a Dictionary (members in order, duplicates kept:
// the caller takes the last one, as RFC 9651 says).
func parseSFDict(s string) ([]sfMember, bool) {
	var out []sfMember
	ok := eachSFDict(s, func(m sfMember) { out = append(out, m) })
	return out, ok
}

// eachSFDict parses s as a Dictionary, calling fn with each member in turn
// (duplicates included), and reports whether s is well-formed, as
// eachSFList does.
func eachSFDict(s string, fn func(sfMember)) bool {
	p := sfParser{s: s}
	return p.members(func() {
		if m := p.dictMember(); !p.bad {
			fn(m)
		}
	})
}

// eachSFMixed parses s as a field whose members are each a List member or
// a Dictionary member: the lines of two layers, one writing a List and the
// other a Dictionary (draft -08 and draft-7 RateLimit), joined. RFC 9651
// has such a field ignored whole; here each member is read in the syntax
// it parses in, as a List member when it is one (list is called with it),
// else as a Dictionary member (dict is called with it). A member that
// parses as both (a Token that is also a key, alone or with parameters:
// "x;a=1") is read as a List member. It reports whether every member is
// one or the other, as eachSFList does: when it reports false, the
// callers have seen members of a malformed field, and must ignore them.
// Its work is linear in the input: no member is parsed more than twice.
func eachSFMixed(s string, list, dict func(sfMember)) bool {
	p := sfParser{s: s}
	return p.members(func() {
		start := p.i
		if it := p.itemOrInner(); !p.bad && p.atSeparator() {
			list(sfMember{item: it})
			return
		}
		p.i, p.bad = start, false
		if m := p.dictMember(); !p.bad {
			dict(m)
		}
	})
}

// dictMember parses a Dictionary member: a key, and "=" and a value, or
// parameters alone (the value is then true).
func (p *sfParser) dictMember() sfMember {
	k := p.key()
	var it sfItem
	if p.peek() == '=' {
		p.i++
		it = p.itemOrInner()
	} else {
		it = sfItem{kind: sfBoolean, num: 1}
		it.params = p.params()
	}
	return sfMember{key: k, item: it}
}

// atSeparator reports whether a member ends at p: OWS, then a comma or the
// end of the input. It moves nothing.
func (p *sfParser) atSeparator() bool {
	j := p.i
	for j < len(p.s) && (p.s[j] == ' ' || p.s[j] == '\t') {
		j++
	}
	return j == len(p.s) || p.s[j] == ','
}

// next moves past the separator between members, OWS "," OWS, and the
// empty elements after it (see skipEmpty). It reports whether another
// member follows; at the end of input, trailing commas or not, it returns
// false.
func (p *sfParser) next() bool {
	p.ows()
	if p.i == len(p.s) {
		return false
	}
	if p.s[p.i] != ',' {
		p.bad = true
		return false
	}
	p.i++
	p.ows()
	p.skipEmpty()
	if p.i == len(p.s) {
		p.elem() // the empty element after a trailing comma
	}
	return !p.bad && p.i < len(p.s)
}

// skipEmpty moves past empty elements before a member, each a "," (and
// OWS) where a member should be, and counts them.
func (p *sfParser) skipEmpty() {
	for !p.bad && p.peek() == ',' {
		p.i++
		p.ows()
		p.elem()
	}
}

// elem counts an element, member or empty: past maxSFMembers, the field is
// malformed.
func (p *sfParser) elem() {
	if p.elems++; p.elems > maxSFMembers {
		p.bad = true
	}
}

func (p *sfParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *sfParser) sp() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *sfParser) ows() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *sfParser) itemOrInner() sfItem {
	if p.peek() != '(' {
		it := p.bare()
		it.params = p.params()
		return it
	}
	p.i++
	for !p.bad {
		p.sp()
		if p.peek() == ')' {
			p.i++
			it := sfItem{kind: sfInner}
			it.params = p.params()
			return it
		}
		p.bare()
		p.params()
		if c := p.peek(); c != ' ' && c != ')' {
			p.bad = true
		}
	}
	return sfItem{}
}

// params checks the parameters at p and returns their text, for param to
// read.
func (p *sfParser) params() string {
	start := p.i
	for !p.bad && p.peek() == ';' {
		p.i++
		p.sp()
		p.key()
		if p.peek() == '=' {
			p.i++
			p.bare()
		}
	}
	if p.bad {
		return ""
	}
	return p.s[start:p.i]
}

func isLCAlpha(c byte) bool { return 'a' <= c && c <= 'z' }
func isDigit(c byte) bool   { return '0' <= c && c <= '9' }
func isAlpha(c byte) bool   { return isLCAlpha(c) || ('A' <= c && c <= 'Z') }

func (p *sfParser) key() string {
	start := p.i
	if c := p.peek(); !isLCAlpha(c) && c != '*' {
		p.bad = true
		return ""
	}
	p.i++
	for p.i < len(p.s) {
		c := p.s[p.i]
		if !isLCAlpha(c) && !isDigit(c) && c != '_' && c != '-' && c != '.' && c != '*' {
			break
		}
		p.i++
	}
	return p.s[start:p.i]
}

func (p *sfParser) bare() sfItem {
	c := p.peek()
	switch {
	case c == '-' || isDigit(c):
		return p.number()
	case c == '"':
		return p.str()
	case c == '*' || isAlpha(c):
		return p.token()
	case c == ':':
		return p.bytes()
	case c == '?':
		p.i++
		switch p.peek() {
		case '0':
			p.i++
			return sfItem{kind: sfBoolean, num: 0}
		case '1':
			p.i++
			return sfItem{kind: sfBoolean, num: 1}
		}
	case c == '@':
		p.i++
		it := p.number()
		if it.kind != sfInteger {
			p.bad = true
		}
		it.kind = sfDate
		return it
	case c == '%':
		return p.display()
	}
	p.bad = true
	return sfItem{}
}

// number parses an Integer (at most 15 digits) or a Decimal (at most 12
// integer digits and 3 fractional ones).
func (p *sfParser) number() sfItem {
	start := p.i
	neg := false
	if p.peek() == '-' {
		neg = true
		p.i++
	}
	var n int64
	digits := 0
	for p.i < len(p.s) && isDigit(p.s[p.i]) {
		n = n*10 + int64(p.s[p.i]-'0')
		digits++
		p.i++
		if digits > 15 {
			p.bad = true
			return sfItem{}
		}
	}
	if digits == 0 {
		p.bad = true
		return sfItem{}
	}
	if neg {
		n = -n
	}
	if p.peek() != '.' {
		return sfItem{kind: sfInteger, num: n, str: p.s[start:p.i]}
	}
	if digits > 12 {
		p.bad = true
		return sfItem{}
	}
	p.i++
	frac := 0
	for p.i < len(p.s) && isDigit(p.s[p.i]) {
		frac++
		p.i++
	}
	if frac == 0 || frac > 3 {
		p.bad = true
		return sfItem{}
	}
	return sfItem{kind: sfDecimal, num: n, str: p.s[start:p.i]}
}

func (p *sfParser) str() sfItem {
	p.i++ // the opening quote
	// Fast path: no escapes, so the value is a substring of the input.
	for j := p.i; j < len(p.s); j++ {
		c := p.s[j]
		if c == '"' {
			v := p.s[p.i:j]
			p.i = j + 1
			return sfItem{kind: sfString, str: v}
		}
		if c == '\\' || c < 0x20 || c > 0x7e {
			break
		}
	}
	var b []byte
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '\\':
			if p.i == len(p.s) || (p.s[p.i] != '"' && p.s[p.i] != '\\') {
				p.bad = true
				return sfItem{}
			}
			b = append(b, p.s[p.i])
			p.i++
		case c == '"':
			return sfItem{kind: sfString, str: string(b)}
		case c < 0x20 || c > 0x7e:
			p.bad = true
			return sfItem{}
		default:
			b = append(b, c)
		}
	}
	p.bad = true // unterminated
	return sfItem{}
}

func (p *sfParser) token() sfItem {
	start := p.i
	p.i++
	for p.i < len(p.s) {
		c := p.s[p.i]
		if isAlpha(c) || isDigit(c) || c == ':' || c == '/' {
			p.i++
			continue
		}
		switch c {
		case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
			p.i++
			continue
		}
		break
	}
	return sfItem{kind: sfToken, str: p.s[start:p.i]}
}

// bytes parses a Byte Sequence (RFC 9651 §4.2.7): base64 between colons,
// which must decode, its "=" padding optional (as the RFC asks parsers to
// allow) but, when present, complete and only at the end.
func (p *sfParser) bytes() sfItem {
	start := p.i
	p.i++
	data, pad := 0, 0 // base64 characters, then "=" after them
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == ':':
			if data%4 == 1 || pad > 2 || pad > 0 && (data+pad)%4 != 0 {
				p.bad = true
				return sfItem{}
			}
			return sfItem{kind: sfBytes, str: p.s[start:p.i]}
		case c == '=':
			pad++
		case pad == 0 && (isAlpha(c) || isDigit(c) || c == '+' || c == '/'):
			data++
		default:
			p.bad = true
			return sfItem{}
		}
	}
	p.bad = true
	return sfItem{}
}

// display parses a Display String (RFC 9651 §4.2.10): printable ASCII,
// with "%" and two lowercase hex digits for each octet escaped, the octets
// UTF-8.
func (p *sfParser) display() sfItem {
	start := p.i
	p.i++
	if p.peek() != '"' {
		p.bad = true
		return sfItem{}
	}
	p.i++
	// The decoded octets, to check the UTF-8, from the first escape on
	// (the ASCII before it is valid whatever follows): nil while all ASCII.
	var octets []byte
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c < 0x20 || c > 0x7e:
			p.bad = true
			return sfItem{}
		case c == '"':
			if octets != nil && !utf8.Valid(octets) {
				p.bad = true
				return sfItem{}
			}
			return sfItem{kind: sfDisplay, str: p.s[start:p.i]}
		case c == '%':
			if p.i+2 > len(p.s) || !isLCHex(p.s[p.i]) || !isLCHex(p.s[p.i+1]) {
				p.bad = true
				return sfItem{}
			}
			octets = append(octets, unhex(p.s[p.i])<<4|unhex(p.s[p.i+1]))
			p.i += 2
		default:
			if octets != nil {
				octets = append(octets, c)
			}
		}
	}
	p.bad = true
	return sfItem{}
}

func isLCHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' }

func unhex(c byte) byte {
	if isDigit(c) {
		return c - '0'
	}
	return c - 'a' + 10
}
