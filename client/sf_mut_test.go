package client

import (
	"strconv"
	"strings"
	"testing"
)

// sfShow renders a parsed item for the tables below: the bare item's type
// and value, then its parameters as the text the parser checked. Integers
// and Dates show their value, Strings their decoded value, the other types
// the text they were parsed from (the package reads no value from them).
func sfShow(it sfItem) string {
	var v string
	switch it.kind {
	case sfInteger:
		v = strconv.FormatInt(it.num, 10)
	case sfDecimal:
		v = "dec:" + it.str
	case sfString:
		v = "str:" + it.str
	case sfToken:
		v = "tok:" + it.str
	case sfBytes:
		v = "bytes" + it.str
	case sfBoolean:
		v = "?" + strconv.FormatInt(it.num, 10)
	case sfDate:
		v = "@" + strconv.FormatInt(it.num, 10)
	case sfDisplay:
		v = "disp" + it.str
	case sfInner:
		v = "inner"
	default:
		v = "kind" + strconv.Itoa(int(it.kind))
	}
	return v + it.params
}

func sfShowAll(members []sfMember) string {
	var parts []string
	for _, m := range members {
		s := sfShow(m.item)
		if m.key != "" {
			s = m.key + "=" + s
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " | ")
}

// sfBad marks a field the parser must report malformed.
const sfBad = "MALFORMED"

// The parser follows the parsing algorithms of RFC 9651 §4.2 step by step;
// each case below is reasoned from the section cited next to it. want is
// sfShowAll of the members, or sfBad. The one deviation, empty elements,
// is TestParseSFEmptyElements'.
func TestParseSFListRFC9651(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// §4.2 steps 2 and 4: SP (not HTAB) is discarded around the field.
		{"  1  ", "1"},
		{"   ", ""},
		{"\t1", sfBad},
		// §4.2.1: OWS (SP or HTAB) around the commas and after the last
		// member; anything but a comma between members fails.
		{"1\t", "1"},
		{"1 ,\t2", "1 | 2"},
		{"1,2", "1 | 2"},
		{"1 2", sfBad},
		{"1;a 2", sfBad},
		// §4.2.1.2 Inner Lists: SP-separated items, SP allowed after "("
		// and before ")", parameters after ")"; no HTAB, no comma, no
		// nesting, and the ")" must come.
		{"(1 2)", "inner"},
		{"( 1  2 )", "inner"},
		{"()", "inner"},
		{"(1;a=2 \"x\";b);c", "inner;c"},
		{"(1 2);c, 3", "inner;c | 3"},
		{"(1\t2)", sfBad},
		{"(1,2)", sfBad},
		{"((1))", sfBad},
		{"(1 2", sfBad},
		{"(1 ", sfBad},
		{"(", sfBad},
		{"(1)x", sfBad},
		{"(1x)", sfBad},
		{"(1;a=2x)", sfBad},
		// §4.2.3.2 Parameters: ";" then SP then a key, "=" and a bare item
		// or nothing (true); no space before ";" or around "=", no Inner
		// List as a value.
		{"1;a", "1;a"},
		{"1; a=2", "1; a=2"},
		{"1;a=2;b;c=\"x\"", "1;a=2;b;c=\"x\""},
		{"1 ;a", sfBad},
		{"1;a =2", sfBad},
		{"1;a= 2", sfBad},
		{"1;a=", sfBad},
		{"1;a=(1)", sfBad},
		{"1;a=?2", sfBad},
		// §4.2.3.3 Keys: lcalpha or "*", then lcalpha, DIGIT, "_", "-",
		// "." or "*".
		{"1;a_b-c.d*e9=1", "1;a_b-c.d*e9=1"},
		{"1;*=1", "1;*=1"},
		{"1;z", "1;z"},
		{"1;A=1", sfBad},
		{"1;9=1", sfBad},
		{"1;_a=1", sfBad},
		{"1;aB=1", sfBad},
		{"1;a/b=1", sfBad},
		{"1;", sfBad},
		{"1;=2", sfBad},
		// §4.2.4 Integers: an optional "-", 1 to 15 digits.
		{"0", "0"},
		{"-0", "0"},
		{"42", "42"},
		{"-42", "-42"},
		{"0042", "42"},
		{"9", "9"},
		{"999999999999999", "999999999999999"},
		{"-999999999999999", "-999999999999999"},
		{"1000000000000000", sfBad},
		{"-1000000000000000", sfBad},
		{"-", sfBad},
		{"--1", sfBad},
		{"- 1", sfBad},
		{"+1", sfBad},
		{"1a", sfBad},
		// §4.2.4 Decimals: at most 12 integer digits, 1 to 3 fractional.
		{"1.5", "dec:1.5"},
		{"-1.5", "dec:-1.5"},
		{"0.123", "dec:0.123"},
		{"123456789012.123", "dec:123456789012.123"},
		{"-123456789012.1", "dec:-123456789012.1"},
		{"1234567890123.1", sfBad},
		{"1.1234", sfBad},
		{"1.", sfBad},
		{"1.a", sfBad},
		{".5", sfBad},
		{"-.5", sfBad},
		{"1.2.3", sfBad},
		// §4.2.5 Strings: VCHAR and SP between DQUOTEs, "\" escaping only
		// DQUOTE and "\".
		{`"abc"`, "str:abc"},
		{`""`, "str:"},
		{`" ~!"`, "str: ~!"},
		{`"a\"b"`, `str:a"b`},
		{`"a\\b"`, `str:a\b`},
		{`"\\"`, `str:\`},
		{`"ab\"cd\\"`, `str:ab"cd\`},
		{`"\" ~"`, `str:" ~`},
		{`"a\b"`, sfBad},
		{`"a\`, sfBad},
		{`"a`, sfBad},
		{`"a\"`, sfBad},
		{"\"a\x1f\"", sfBad},
		{"\"a\x7f\"", sfBad},
		{"\"a\tb\"", sfBad},
		{"\"\xc3\xa9\"", sfBad},
		{"\"a\\\"\x01\"", sfBad},
		{"\"a\\\"\x01", sfBad},
		{"\"a\\\"\x01, 1", sfBad},
		{"\"a\\\"\x7f\"", sfBad},
		{"\"a\\\"\xc3\xa9\"", sfBad},
		// §4.2.6 Tokens: ALPHA or "*", then tchar, ":" or "/".
		{"a", "tok:a"},
		{"*", "tok:*"},
		{"Abc", "tok:Abc"},
		{"Z", "tok:Z"},
		{"z", "tok:z"},
		{"text/html", "tok:text/html"},
		{"a:b/c9Z", "tok:a:b/c9Z"},
		{"a!#$%&'*+-.^_`|~", "tok:a!#$%&'*+-.^_`|~"},
		{"*a;b", "tok:*a;b"},
		{"a\"b\"", sfBad},
		{"a(b)", sfBad},
		{"a@", sfBad},
		{"a=", sfBad},
		{"a\\", sfBad},
		// §4.2.7 Byte Sequences: base64 between colons that decodes; a
		// parser SHOULD NOT fail on missing padding or non-zero pad bits.
		{":aGVsbG8=:", "bytes:aGVsbG8=:"},
		{"::", "bytes::"},
		{":aGVsbG8:", "bytes:aGVsbG8:"},
		{":YQ==:", "bytes:YQ==:"},
		{":YQ:", "bytes:YQ:"},
		{":YWI=:", "bytes:YWI=:"},
		{":YWJj:", "bytes:YWJj:"},
		{":iZ==:", "bytes:iZ==:"},
		{":/+Az:", "bytes:/+Az:"},
		{":aGVsbG8=:;a", "bytes:aGVsbG8=:;a"},
		{":aGVsbG8", sfBad},
		{":", sfBad},
		{":=aGVsbG8=:", sfBad},
		{":a=GVsbG8=:", sfBad},
		{":aGVsb G8=:", sfBad},
		{":aGVsbG!8=:", sfBad},
		{":aGVsbG8=!:", sfBad},
		{":aGVsbG8.:", sfBad},
		{":_-Az:", sfBad},
		{":YWJj!", sfBad},
		{":YWJj!, 1", sfBad},
		{":a:", sfBad},
		{":YWJjZ:", sfBad},
		{":YQ=:", sfBad},
		{":YQ===:", sfBad},
		{":YWJj=:", sfBad},
		{":YWJj====:", sfBad},
		{":YWI==:", sfBad},
		{":aGVsbG8==:", sfBad},
		{"\"a\":b", sfBad},
		// §4.2.8 Booleans: "?" then "0" or "1".
		{"?1", "?1"},
		{"?0", "?0"},
		{"?1;a=?0", "?1;a=?0"},
		{"?", sfBad},
		{"?2", sfBad},
		{"?10", sfBad},
		{"? 1", sfBad},
		{"?t", sfBad},
		// §4.2.9 Dates: "@" then an Integer, not a Decimal.
		{"@1659578233", "@1659578233"},
		{"@-1659578233", "@-1659578233"},
		{"@0", "@0"},
		{"@1.5", sfBad},
		{"@", sfBad},
		{"@ 1", sfBad},
		{"@a", sfBad},
		{"@1000000000000000", sfBad},
		// §4.2.10 Display Strings: %" then printable ASCII with "%" and
		// two lowercase hex digits for each escaped octet, the octets
		// UTF-8, then DQUOTE.
		{`%"This is intended for display to %c3%bc%c3%b1%c3%af%c3%a7%c3%b8%c3%b0%c3%a9 users."`,
			`disp%"This is intended for display to %c3%bc%c3%b1%c3%af%c3%a7%c3%b8%c3%b0%c3%a9 users."`},
		{`%""`, `disp%""`},
		{`%" a~"`, `disp%" a~"`},
		{`%"%22%25"`, `disp%"%22%25"`},
		{`%"%00"`, `disp%"%00"`},
		{`%"%7f"`, `disp%"%7f"`},
		{`%"%f0%9f%98%80"`, `disp%"%f0%9f%98%80"`},
		{`%"x%c3%bc;y"`, `disp%"x%c3%bc;y"`},
		{`%"%c3%bc";a`, `disp%"%c3%bc";a`},
		{`%`, sfBad},
		{`%a`, sfBad},
		{`% "a"`, sfBad},
		{`%"a`, sfBad},
		{`%"%c3%bc`, sfBad},
		{`%"%"`, sfBad},
		{`%"%a"`, sfBad},
		{`%"%a`, sfBad},
		{`%"%c3"`, sfBad},
		{`%"%c3b"`, sfBad},
		{`%"%c3b%bc"`, sfBad},
		{`%"a%c3"`, sfBad},
		{`%"%C3%BC"`, sfBad},
		{`%"%c3%BC"`, sfBad},
		{`%"%g0"`, sfBad},
		{`%"%0g"`, sfBad},
		{`%"%ff"`, sfBad},
		{`%"%c0%80"`, sfBad},
		{`%"%ed%a0%80"`, sfBad},
		{"%\"\xc3\xbc\"", sfBad},
		{"%\"a\tb\"", sfBad},
		{"%\"a\t", sfBad},
		{"%\"a\t, 1", sfBad},
		{"%\"\x7f\"", sfBad},
		{"%\"%c3%bc\x7f\"", sfBad},
		// §4.2.3.1: any other first character is no bare item.
		{"!", sfBad},
		{"=1", sfBad},
		{")", sfBad},
		{";a", sfBad},
		{"\x00", sfBad},
		{"\xff", sfBad},
	} {
		members, ok := parseSFList(tc.in)
		got := sfBad
		if ok {
			got = sfShowAll(members)
		}
		if got != tc.want {
			t.Errorf("parseSFList(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A Dictionary (RFC 9651 §4.2.2): key, then "=" and an Item or Inner List,
// or no "=" and a true Boolean with parameters; members separated as a
// List's are. Every member is reported, duplicates too (the caller takes
// the last one).
func TestParseSFDictRFC9651(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a=1, b=2", "a=1 | b=2"},
		{"  a=1  ", "a=1"},
		{"a=1\t,\tb=2\t", "a=1 | b=2"},
		{"", ""},
		{"a", "a=?1"},
		{"a;x=1, b", "a=?1;x=1 | b=?1"},
		{"a=?0", "a=?0"},
		{"a=(1 2);p", "a=inner;p"},
		{"a=\"x\";p=1", "a=str:x;p=1"},
		{"a=1, b=2, a=3", "a=1 | b=2 | a=3"},
		{"*a=1", "*a=1"},
		{"a-b.c_d*9=tok", "a-b.c_d*9=tok:tok"},
		{"\ta=1", sfBad},
		{"A=1", sfBad},
		{"1=a", sfBad},
		{"=1", sfBad},
		{"a =1", sfBad},
		{"a= 1", sfBad},
		{"a=", sfBad},
		{"a=1 b=2", sfBad},
		{"a=1;", sfBad},
		{"a;", sfBad},
		{"a=(1", sfBad},
		{"a=1,b=\"", sfBad},
	} {
		members, ok := parseSFDict(tc.in)
		got := sfBad
		if ok {
			got = sfShowAll(members)
		}
		if got != tc.want {
			t.Errorf("parseSFDict(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// param returns a parameter's value, true when it has none, the last one
// when the key repeats (RFC 9651 §4.2.3.2), and nothing when it is
// absent; keys compare character for character.
func TestParseSFParam(t *testing.T) {
	for _, tc := range []struct {
		in, key, want string // want "" when absent
	}{
		{`1;a=2`, "a", "2"},
		{`1;a`, "a", "?1"},
		{`1;a=?0`, "a", "?0"},
		{`1;a=1;a=2`, "a", "2"},
		{`1;a=1;a`, "a", "?1"},
		{`1;a;a=?0`, "a", "?0"},
		{`1;a=1;b=2`, "b", "2"},
		{`1;a=1;b=2`, "a", "1"},
		{`1; a=1; b="x"`, "b", "str:x"},
		{`1;a=1;ab=2`, "a", "1"},
		{`1;ab=2`, "a", ""},
		{`1;a=2`, "b", ""},
		{`1`, "a", ""},
		{`1;a=@-5;b=tok;c=1.5;d=:YQ==:;e=%"x"`, "a", "@-5"},
		{`1;a=@-5;b=tok;c=1.5;d=:YQ==:;e=%"x"`, "b", "tok:tok"},
		{`1;a=@-5;b=tok;c=1.5;d=:YQ==:;e=%"x"`, "c", "dec:1.5"},
		{`1;a=@-5;b=tok;c=1.5;d=:YQ==:;e=%"x"`, "d", "bytes:YQ==:"},
		{`1;a=@-5;b=tok;c=1.5;d=:YQ==:;e=%"x"`, "e", `disp%"x"`},
		{`(1;a=9 2);a=3`, "a", "3"},
	} {
		members, ok := parseSFList(tc.in)
		if !ok || len(members) != 1 {
			t.Fatalf("parseSFList(%q) = %+v, %v", tc.in, members, ok)
		}
		v, found := members[0].item.param(tc.key)
		got := ""
		if found {
			got = sfShow(v)
		}
		if got != tc.want {
			t.Errorf("param(%q) of %q = %q, want %q", tc.key, tc.in, got, tc.want)
		}
	}
}

// A List or Dictionary may have maxSFMembers members (RFC 9651 §3.1 and
// §3.2 ask parsers to support at least 1024) and no more: one with more is
// malformed, as the package documents.
func TestParseSFMemberLimit(t *testing.T) {
	list := func(n int) string { return strings.TrimSuffix(strings.Repeat("1, ", n), ", ") }
	dict := func(n int) string { return strings.TrimSuffix(strings.Repeat("a=1, ", n), ", ") }
	if m, ok := parseSFList(list(maxSFMembers)); !ok || len(m) != maxSFMembers {
		t.Errorf("List of %d members: %d, %v", maxSFMembers, len(m), ok)
	}
	if m, ok := parseSFDict(dict(maxSFMembers)); !ok || len(m) != maxSFMembers {
		t.Errorf("Dictionary of %d members: %d, %v", maxSFMembers, len(m), ok)
	}
	if _, ok := parseSFList(list(maxSFMembers + 1)); ok {
		t.Errorf("List of %d members accepted", maxSFMembers+1)
	}
	if _, ok := parseSFDict(dict(maxSFMembers + 1)); ok {
		t.Errorf("Dictionary of %d members accepted", maxSFMembers+1)
	}
	// Empty elements count too (see TestParseSFEmptyElements): the one a
	// trailing comma leaves after maxSFMembers members is one too many.
	if _, ok := parseSFList(list(maxSFMembers) + ","); ok {
		t.Errorf("List of %d members and a trailing comma accepted", maxSFMembers)
	}
	if _, ok := parseSFDict(dict(maxSFMembers) + ","); ok {
		t.Errorf("Dictionary of %d members and a trailing comma accepted", maxSFMembers)
	}
	if maxSFMembers < 1024 {
		t.Errorf("maxSFMembers = %d, RFC 9651 §3.1 asks for at least 1024", maxSFMembers)
	}
}

// A String without escapes is a substring of the field, as are Tokens:
// reading a List of them allocates nothing (RFC 9651 allows SP and every
// VCHAR in a String, "~" the last of them).
func TestParseSFStringNoAlloc(t *testing.T) {
	const field = `"a b~", "!", tok, "x";p="y z"`
	n := 0
	count := func(m sfMember) {
		if m.item.kind == sfString || m.item.kind == sfToken {
			n++
		}
	}
	if allocs := testing.AllocsPerRun(100, func() {
		n = 0
		if !eachSFList(field, count) {
			t.Fatal("malformed")
		}
	}); allocs != 0 || n != 4 {
		t.Errorf("eachSFList(%q): %v allocations, %d members; want 0, 4", field, allocs, n)
	}
}
