package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/ratekeeper/ratekeeper/internal/errtext"
)

// A cnode is one node of a configuration document, YAML or JSON, with its
// position: the loader decodes from this tree, so that both formats share
// one schema and every error can say where it is.
type cnode struct {
	kind cnodeKind
	pos  position
	tag  scalarTag // scalars only
	text string    // scalars only: the value as written (unquoted)
	keys []*cnode  // mappings: the keys, in order (scalars)
	vals []*cnode  // mappings: the values; sequences: the items
	// weight is the number of nodes the node stands for, itself
	// included, with aliases counted as what they name (YAML only).
	weight int
	// plain says that a YAML string scalar was written plain (unquoted,
	// not a block scalar): YAML 1.1 readers may read it otherwise (see
	// yaml11Reading).
	plain bool
	// halfPair is the escape of half a UTF-16 surrogate pair alone
	// (\udce9) that a quoted scalar was written with, if any: the parsers
	// read it as U+FFFD, which the file does not hold (see loneSurrogate).
	halfPair string
}

// weigh sets n's weight from its children's and returns n.
func (n *cnode) weigh() *cnode {
	n.weight = 1
	for _, k := range n.keys {
		n.weight += k.weight
	}
	for _, v := range n.vals {
		n.weight += v.weight
	}
	return n
}

type cnodeKind int

const (
	mapNode cnodeKind = iota
	seqNode
	scalarNode
)

type scalarTag int

const (
	strTag scalarTag = iota
	intTag
	floatTag
	boolTag
	nullTag
)

func (t scalarTag) String() string {
	return [...]string{"a string", "an integer", "a number", "a boolean", "null"}[t]
}

func (n *cnode) describe() string {
	switch n.kind {
	case mapNode:
		return "a mapping"
	case seqNode:
		return "a list"
	}
	return n.tag.String()
}

// A position is a 1-based line and column; zero when unknown.
type position struct{ line, col int }

// maxConfigNodes bounds the nodes of a document, counting a YAML alias
// as the nodes it names: aliases share their anchor's nodes, so a small
// file could otherwise stand for millions of entries to decode.
const maxConfigNodes = 20_000

// errTooLarge is reported for a document with more than maxConfigNodes.
var errTooLarge = errors.New("the document is too large")

// maxConfigKeys bounds the mapping keys of a document, counted before it
// is parsed: the YAML parser takes time quadratic in the keys of a block
// mapping. A valid configuration has a few hundred at most (64 policies
// of 12 fields, and the settings).
const maxConfigKeys = 4096

// errTooManyKeys is reported for a document with more than maxConfigKeys.
var errTooManyKeys = fmt.Errorf("the document holds more than %d keys; a configuration needs far fewer", maxConfigKeys)

// maxNesting bounds how deeply a document nests: the YAML parser takes time
// quadratic in the depth, so a small hostile file could stall it.
const maxNesting = 64

// maxJSONNesting bounds how deeply a JSON document nests: jsonConv.value
// recurses once per level.
const maxJSONNesting = 100

// checkIndent reports a document indented deeper than maxNesting·4
// columns (leading spaces and "- " sequence entries on one line, counted
// loosely): block collections nest by indentation.
func checkIndent(data []byte, file string) error {
	line, col := 1, 0
	lineStart := true
	indent := 0
	for i := 0; i < len(data); i++ {
		c := data[i]
		col++
		if c == '\n' {
			line, col, lineStart, indent = line+1, 0, true, 0
			continue
		}
		if !lineStart {
			continue
		}
		if c == ' ' || c == '-' && i+1 < len(data) && data[i+1] == ' ' {
			indent++
			if indent > 4*maxNesting {
				return &ConfigError{File: file, Line: line, Column: col, Reason: fmt.Sprintf("is indented more than %d columns deep", 4*maxNesting)}
			}
			continue
		}
		lineStart = false
	}
	return nil
}

// checkTokens reports flow collections ([ and {) nested deeper than
// maxNesting, counted on the tokens the parser will read (whether a
// bracket is in a quoted string, a comment or a plain scalar is the
// lexer's call: a quote within a plain scalar, as in it's, opens no
// string), and more than maxConfigKeys keys (their ':' tokens).
func checkTokens(tokens token.Tokens, file string) error {
	depth, keys := 0, 0
	for i, tk := range tokens {
		switch tk.Type {
		case token.MappingValueType:
			if keys++; keys > maxConfigKeys {
				p := tokenPos(tokens[i-1]) // the key (i >= maxConfigKeys here)
				return &ConfigError{File: file, Line: p.line, Column: p.col, Reason: errTooManyKeys.Error()}
			}
		case token.SequenceStartType, token.MappingStartType:
			depth++
			if depth > maxNesting {
				p := tokenPos(tk)
				return &ConfigError{File: file, Line: p.line, Column: p.col, Reason: fmt.Sprintf("nests more than %d levels deep", maxNesting)}
			}
		case token.SequenceEndType, token.MappingEndType:
			depth = max(0, depth-1)
		}
	}
	return nil
}

// checkDocuments reports a stream of more than one YAML document, counted
// on the tokens, at the first token of the second document's content, and
// returns the tokens of the first document. The parser cannot be asked:
// it reads two document headers in a row ("---\n---\n") as the end of
// the stream and drops every document after them. A document begins at
// its header, or at its first content outside one (a directive, such as
// %YAML, belongs to the header after it), and an end marker ("...")
// closes it. Documents without content (a header, end markers, comments
// and blanks) after the one with content are no second document: a file
// that ends with "---", as tools that write streams of documents leave
// one, holds the document before it, and their tokens are dropped (the
// parser misreads some: "...\n---\n" at the end). An empty document
// before the one with content makes that one the second all the same, and
// a file without content is empty.
func checkDocuments(tokens token.Tokens, file string) (token.Tokens, error) {
	docs, open, directive := 0, false, false
	content, cut := false, len(tokens)
	for i, tk := range tokens {
		switch tk.Type {
		case token.CommentType:
			continue
		case token.DirectiveType, token.DocumentHeaderType:
			if content && cut == len(tokens) {
				cut = i // a document after the one with content begins
			}
			if tk.Type == token.DirectiveType {
				directive = true
				continue
			}
			directive, open = false, true
			docs++
			continue
		case token.DocumentEndType:
			open = false
			continue
		}
		if directive {
			continue // the directive's own words
		}
		if !open {
			open = true
			docs++
		}
		if docs > 1 {
			p := tokenPos(tk)
			return nil, &ConfigError{File: file, Line: p.line, Column: p.col, Reason: "holds more than one YAML document"}
		}
		content = true
	}
	if !content {
		return nil, &ConfigError{File: file, Line: 1, Column: 1, Reason: "the document is empty"}
	}
	return tokens[:cut], nil
}

// checkTabs reports a tab inside a value that is unquoted or in double
// quotes, at the value. The lexer drops a tab from an unquoted value
// ("limit: 1<TAB>0" reads as 10, "header:X-Api<TAB>Key" as X-ApiKey),
// where YAML 1.2 keeps it, and loses track of the line after a
// double-quoted value holding one, so that the parser reports an
// unrelated error elsewhere. A tab where YAML allows blanks (around a
// value, before a comment) is no problem, nor one in a comment, a
// single-quoted value or a block scalar (| or >), which the lexer keeps
// as written.
func checkTabs(tokens token.Tokens, file string) error {
	var prev token.Type
	for _, tk := range tokens {
		t := prev
		prev = tk.Type
		switch tk.Type {
		case token.CommentType, token.SingleQuoteType, token.DirectiveType:
			continue
		}
		if t == token.LiteralType || t == token.FoldedType {
			continue // a block scalar's text
		}
		inside := false
		for _, line := range strings.Split(tk.Origin, "\n") {
			if strings.ContainsRune(strings.Trim(line, " \t\r"), '\t') {
				inside = true
			}
		}
		if !inside {
			continue
		}
		p := tokenPos(tk)
		value := errtext.Cut(escapeControls(strings.Trim(tk.Origin, " \t\r\n")))
		reason := fmt.Sprintf("a tab inside the value %s, which YAML readers disagree on (this one drops it): write a space, or, for a tab, quote the value and write \\t", value)
		if tk.Type == token.DoubleQuoteType {
			reason = fmt.Sprintf("a tab inside the quoted value %s, which this YAML reader misreads (it loses track of the line): write it as \\t", value)
		}
		return &ConfigError{File: file, Line: p.line, Column: p.col, Reason: reason}
	}
	return nil
}

// checkSpaces reports a space other than U+0020 (a non-breaking space,
// as text copied from a web page or a chat holds) or a zero-width
// character in an unquoted value or key, at the value. YAML reads it as
// text, never as a blank: "limit:<NBSP>10" is one string, not a key and
// its value, and a line indented with it is not indented, so that the
// parser's error, or the loader's, is about something else at a place
// where the file looks right. Quoted, in a block scalar (| or >) or in a
// comment, it is the file's choice, left to what reads the value.
func checkSpaces(tokens token.Tokens, file string) error {
	for tk := range plainTexts(tokens) {
		i := strings.IndexFunc(tk.Value, func(r rune) bool { return invisibleSpace(r) != "" })
		if i < 0 {
			continue
		}
		r, _ := utf8.DecodeRuneInString(tk.Value[i:])
		what := invisibleSpace(r)
		reason := fmt.Sprintf("%s (%U) in %s, which YAML reads as text, not as a blank: write a space (or quote the value if the character is meant)", what, r, strconv.Quote(tk.Value))
		if !unicode.Is(unicode.Zs, r) {
			reason = fmt.Sprintf("%s (%U) in %s, which YAML reads as text: delete it (or quote the value if the character is meant)", what, r, strconv.Quote(tk.Value))
		}
		p := tokenPos(tk)
		return &ConfigError{File: file, Line: p.line, Column: p.col, Reason: reason}
	}
	return nil
}

// checkQuotes reports an unquoted value or key that starts or ends with a
// typographic quote (an editor's "smart quotes", text pasted from a
// document: “/login”), at the value. YAML quotes with " and ' only and
// reads the typographic ones as text, so that the loader's error was
// about the text ("names a host (“)"), or a route such as /login” loaded,
// a pattern no request has. Inside a value, quoted, or in a block scalar
// or a comment, it is text, left to what reads the value.
func checkQuotes(tokens token.Tokens, file string) error {
	for tk := range plainTexts(tokens) {
		if tk.Value == "" {
			continue
		}
		first, _ := utf8.DecodeRuneInString(tk.Value)
		last, _ := utf8.DecodeLastRuneInString(tk.Value)
		r := first
		if !typographicQuote(r) {
			r = last
		}
		if !typographicQuote(r) {
			continue
		}
		inner := strings.TrimFunc(tk.Value, typographicQuote)
		p := tokenPos(tk)
		return &ConfigError{File: file, Line: p.line, Column: p.col,
			Reason: fmt.Sprintf(`a typographic quote (%U) around %s, which YAML reads as text: quote with " or ' instead (%s)`, r, strconv.Quote(tk.Value), strconv.Quote(inner))}
	}
	return nil
}

// plainTexts yields the tokens of unquoted keys and values, not a block
// scalar's text (| or >), which checkSpaces and checkQuotes read.
func plainTexts(tokens token.Tokens) iter.Seq[*token.Token] {
	return func(yield func(*token.Token) bool) {
		var prev token.Type
		for _, tk := range tokens {
			t := prev
			prev = tk.Type
			if tk.Type != token.StringType || t == token.LiteralType || t == token.FoldedType {
				continue
			}
			if !yield(tk) {
				return
			}
		}
	}
}

// typographicQuote reports whether r is a quotation mark outside ASCII.
func typographicQuote(r rune) bool {
	return r >= utf8.RuneSelf && unicode.Is(unicode.Quotation_Mark, r)
}

// invisibleSpace names r when it is a space other than U+0020 or a
// zero-width character (checkSpaces), or returns "".
func invisibleSpace(r rune) string {
	switch {
	case r == '\u00a0':
		return "a non-breaking space"
	case r != ' ' && unicode.Is(unicode.Zs, r):
		return "a space"
	case r == '\u200b' || r == '\u200c' || r == '\u200d' || r == '\u2060' || r == '\ufeff':
		return "a zero-width character"
	}
	return ""
}

// parseYAML parses data into a tree. A syntax error comes back as a
// *ConfigError with the position the parser reported.
func parseYAML(data []byte, file string) (root *cnode, err error) {
	if err := checkIndent(data, file); err != nil {
		return nil, err
	}
	// YAML reads a CRLF line break as LF, in values too; the lexer does
	// not: it counts the one after a comment as two lines, so that every
	// error below was reported a line too far per comment above it, and
	// it keeps a CR in a double-quoted value over several lines, unfolded.
	// Dropping the CR moves no line nor column of the file's text.
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	defer func() {
		// The YAML parser is third-party code run on untrusted input: a
		// panic in it is a malformed document, not a crash.
		if r := recover(); r != nil {
			root, err = nil, &ConfigError{File: file, Reason: "invalid YAML: " + errorText(fmt.Sprint(r))}
		}
	}()
	tokens := lexer.Tokenize(string(data))
	if err := checkTokens(tokens, file); err != nil {
		return nil, err
	}
	tokens, err = checkDocuments(tokens, file)
	if err != nil {
		return nil, err
	}
	if err := checkTabs(tokens, file); err != nil {
		return nil, err
	}
	if err := checkSpaces(tokens, file); err != nil {
		return nil, err
	}
	if err := checkQuotes(tokens, file); err != nil {
		return nil, err
	}
	// Keys written twice are kept, for the decoder to report at their
	// field (decoder.fields), with the file's other problems.
	f, err := parser.Parse(tokens, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		ce := &ConfigError{File: file, Reason: "invalid YAML: " + yamlMessage(err)}
		var ye interface{ GetToken() *token.Token }
		if errors.As(err, &ye) && ye.GetToken() != nil && ye.GetToken().Position != nil {
			ce.Line, ce.Column = ye.GetToken().Position.Line, ye.GetToken().Position.Column
			if tk := ye.GetToken(); (tk.Type == token.MappingStartType || tk.Type == token.SequenceStartType) && gluedToValue(data, ce.Line, ce.Column) {
				// A route's wildcard unquoted in a flow list: "[/users/{id}]".
				ce.Reason += ` (a '{' or '[' within a value inside [ ] or { } opens a collection: quote the value, as ["/users/{id}"])`
			} else if hint := colonInValue(ye.GetToken()); hint != "" {
				ce.Reason += hint
			}
		}
		return nil, ce
	}
	var docs []*ast.DocumentNode
	for _, d := range f.Docs {
		if d == nil || d.Body == nil {
			continue
		}
		if _, ok := d.Body.(*ast.DirectiveNode); ok {
			continue // %YAML or %TAG, which the parser gives a document of its own
		}
		docs = append(docs, d)
	}
	if len(docs) == 0 {
		return nil, &ConfigError{File: file, Line: 1, Column: 1, Reason: "the document is empty"}
	}
	if len(docs) > 1 {
		// checkDocuments has refused every stream of two documents it
		// counts; this stands in case the parser ever splits one it did not.
		p := tokenPos(docs[1].Body.GetToken())
		return nil, &ConfigError{File: file, Line: p.line, Column: p.col, Reason: "holds more than one YAML document"}
	}
	c := &yamlConv{file: file, data: data, anchors: map[string]*cnode{}}
	return c.conv(docs[0].Body)
}

// colonInValue returns a hint for a parser error at tk when tk is an
// unquoted value after a key on its line and followed there by ": "
// ("key: header: X-User"): the file means one string, which YAML reads as
// a mapping within the value, where none may start. A header or cookie
// key part, or ip_source, written so is told how it is written; any other
// value, to be quoted. It returns "" otherwise.
func colonInValue(tk *token.Token) string {
	sameLine := func(a, b *token.Token) bool {
		return a != nil && b != nil && a.Position != nil && b.Position != nil && a.Position.Line == b.Position.Line
	}
	if tk.Type != token.StringType || tk.Prev == nil || tk.Prev.Type != token.MappingValueType || !sameLine(tk.Prev, tk) ||
		tk.Next == nil || tk.Next.Type != token.MappingValueType || !sameLine(tk, tk.Next) {
		return ""
	}
	if v := tk.Next.Next; (tk.Value == "header" || tk.Value == "cookie") && v != nil && v.Type == token.StringType && sameLine(tk, v) {
		return fmt.Sprintf(` (the value holds ": ", which YAML reads as a mapping: write %s)`, strconv.Quote(tk.Value+":"+v.Value))
	}
	return ` (the value holds ": ", which YAML reads as a mapping: quote the value)`
}

// gluedToValue reports whether the character at line and column (1-based,
// counting characters) of data follows another of a plain value, no
// blank nor flow indicator between them: a bracket the parser read as
// opening a collection within what the file meant as one string.
func gluedToValue(data []byte, line, col int) bool {
	for ; line > 1; line-- {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return false
		}
		data = data[i+1:]
	}
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		data = data[:i]
	}
	text := []rune(string(data))
	if col < 2 || col > len(text) {
		return false
	}
	return !strings.ContainsRune(" \t,[]{}:", text[col-2])
}

// yamlMessage returns the parser's message without its source excerpt.
func yamlMessage(err error) string {
	var msg string
	var ye interface{ GetMessage() string }
	if errors.As(err, &ye) {
		msg = ye.GetMessage()
	} else {
		msg = err.Error()
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
	}
	tab := strings.Contains(msg, "'\t'")
	msg = errorText(msg)
	if tab {
		msg += " (a tab: YAML indents with spaces only)"
	}
	return msg
}

// escapeControls returns s with each control character, and each other
// character that does not print (strconv.IsPrint: a format character such
// as a zero-width space or a right-to-left override, a space other than
// U+0020), written as a Go escape (a tab as \t, U+200B as \u200b), as %q
// writes them: the parser's messages and the field paths quote the
// file's bytes, which must not reach a terminal or a log as they are, nor
// hide there.
func escapeControls(s string) string {
	if !strings.ContainsFunc(s, notPrinted) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if notPrinted(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// notPrinted reports whether escapeControls escapes r.
func notPrinted(r rune) bool { return !strconv.IsPrint(r) }

func tokenPos(tk *token.Token) position {
	if tk == nil || tk.Position == nil {
		return position{}
	}
	return position{tk.Position.Line, tk.Position.Column}
}

type yamlConv struct {
	file    string
	data    []byte
	runeAt  []int // the byte offset of each character of data (see quoted)
	lineAt  []int // the index in runeAt of each line's first character
	anchors map[string]*cnode
	nodes   int
}

func (c *yamlConv) errorf(n ast.Node, format string, args ...any) error {
	p := tokenPos(n.GetToken())
	return &ConfigError{File: c.file, Line: p.line, Column: p.col, Reason: errorText(fmt.Sprintf(format, args...))}
}

func (c *yamlConv) conv(n ast.Node) (*cnode, error) {
	c.nodes++
	if c.nodes > maxConfigNodes {
		return nil, c.errorf(n, "%v", errTooLarge)
	}
	pos := tokenPos(n.GetToken())
	switch n := n.(type) {
	case *ast.MappingNode:
		if len(n.Values) > 0 {
			pos = tokenPos(n.Values[0].Key.GetToken())
		}
		out := &cnode{kind: mapNode, pos: pos}
		// Explicit entries first, so that they win over merged ones.
		var merged *ast.MappingValueNode
		for _, merge := range []bool{false, true} {
			for _, mv := range n.Values {
				if _, ok := mv.Key.(*ast.MergeKeyNode); ok == merge {
					if merge && merged != nil {
						// A key written twice, as any other: merged in
						// turn, the second's keys that the first sets
						// would be dropped unseen.
						p := tokenPos(merged.Key.GetToken())
						return nil, c.errorf(mv.Key, "the merge key << appears twice; the first is at line %d, column %d: merge several mappings with one, as <<: [*a, *b]", p.line, p.col)
					}
					if merge {
						merged = mv
					}
					if err := c.entry(out, mv); err != nil {
						return nil, err
					}
				}
			}
		}
		return out.weigh(), nil
	case *ast.MappingValueNode:
		out := &cnode{kind: mapNode, pos: tokenPos(n.Key.GetToken())}
		if err := c.entry(out, n); err != nil {
			return nil, err
		}
		return out.weigh(), nil
	case *ast.SequenceNode:
		out := &cnode{kind: seqNode, pos: pos}
		for _, v := range n.Values {
			item, err := c.conv(v)
			if err != nil {
				return nil, err
			}
			out.vals = append(out.vals, item)
		}
		return out.weigh(), nil
	case *ast.AnchorNode:
		v, err := c.conv(n.Value)
		if err != nil {
			return nil, err
		}
		c.anchors[n.Name.GetToken().Value] = v
		return v, nil
	case *ast.AliasNode:
		v, ok := c.anchors[n.Value.GetToken().Value]
		if !ok {
			return nil, c.errorf(n, "alias *%s names no earlier anchor", n.Value.GetToken().Value)
		}
		// The alias counts as the nodes it names (it counted one already).
		c.nodes += v.weight - 1
		if c.nodes > maxConfigNodes {
			return nil, c.errorf(n, "%v (its aliases stand for more than %d nodes)", errTooLarge, maxConfigNodes)
		}
		// Where the alias stands, for the errors about the value there
		// (burst: *x, not at the limit the anchor marks); what is within
		// it stays where the anchor's text is.
		at := *v
		at.pos = pos
		return &at, nil
	case *ast.MappingKeyNode:
		// An explicit key ("? limit" then ": 5") is the key itself; it
		// counted as one node, as the key it stands for will.
		c.nodes--
		if n.Value == nil {
			return nil, c.errorf(n, "an explicit key (?) needs a key after it")
		}
		return c.conv(n.Value)
	case *ast.TagNode:
		return nil, c.errorf(n, "YAML tags such as %s are not supported", n.Start.Value)
	case *ast.NullNode:
		return &cnode{kind: scalarNode, pos: pos, tag: nullTag, text: "", weight: 1}, nil
	case *ast.BoolNode:
		return &cnode{kind: scalarNode, pos: pos, tag: boolTag, text: fmt.Sprint(n.Value), weight: 1}, nil
	case *ast.IntegerNode:
		return &cnode{kind: scalarNode, pos: pos, tag: intTag, text: n.GetToken().Value, weight: 1}, nil
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return &cnode{kind: scalarNode, pos: pos, tag: floatTag, text: n.GetToken().Value, weight: 1}, nil
	case *ast.StringNode:
		tag := strTag
		if n.Token != nil && n.Token.Type == token.StringType {
			switch {
			case bigInteger(n.Value):
				// The parser reads an unquoted integer too large for 64
				// bits as a string: it is an integer, out of range.
				tag = intTag
			case yamlFloat.MatchString(n.Value):
				// And a float with an exponent but no point (1e3), a
				// float in YAML 1.2 as in JSON.
				tag = floatTag
			}
		}
		out := &cnode{kind: scalarNode, pos: pos, tag: tag, text: n.Value, weight: 1,
			plain: n.Token != nil && n.Token.Type == token.StringType}
		if n.Token != nil && n.Token.Type == token.DoubleQuoteType && strings.ContainsRune(n.Value, utf8.RuneError) {
			out.halfPair = loneSurrogate(c.quoted(pos))
		}
		return out, nil
	case *ast.LiteralNode:
		return &cnode{kind: scalarNode, pos: pos, tag: strTag, text: n.Value.Value, weight: 1}, nil
	case *ast.CommentGroupNode, *ast.CommentNode:
		return &cnode{kind: scalarNode, pos: pos, tag: nullTag, weight: 1}, nil
	}
	return nil, c.errorf(n, "unsupported YAML node %s", n.Type())
}

// entry appends one key: value pair to out; a merge key (<<) adds the
// entries of a mapping that out does not set itself, or of each mapping of
// a list in turn (<<: [*a, *b]: a's keys win over b's, as YAML's merge
// key has it).
func (c *yamlConv) entry(out *cnode, mv *ast.MappingValueNode) error {
	if _, ok := mv.Key.(*ast.MergeKeyNode); ok {
		src, err := c.conv(mv.Value)
		if err != nil {
			return err
		}
		srcs, list := []*cnode{src}, src.kind == seqNode
		if list {
			srcs = src.vals
		}
		for _, src := range srcs {
			if src.kind != mapNode {
				what := src.describe()
				if list {
					what = "a list holding " + what
				}
				return &ConfigError{File: c.file, Line: src.pos.line, Column: src.pos.col,
					Reason: "the merge key << needs a mapping or a list of mappings, not " + what}
			}
			for i, k := range src.keys {
				if first := src.lookup(k.text); first != k {
					// Merged, a key written twice would be dropped unseen.
					return &ConfigError{File: c.file, Line: k.pos.line, Column: k.pos.col,
						Reason: fmt.Sprintf("key %q appears twice in the mapping merged by <<; the first is at line %d, column %d", k.text, first.pos.line, first.pos.col)}
				}
				if out.lookup(k.text) == nil {
					out.keys = append(out.keys, k)
					out.vals = append(out.vals, src.vals[i])
				}
			}
		}
		return nil
	}
	k, err := c.conv(mv.Key)
	if err != nil {
		return err
	}
	if k.kind != scalarNode || k.tag == nullTag {
		return c.errorf(mv.Key, "a mapping key must be a plain string")
	}
	v, err := c.conv(mv.Value)
	if err != nil {
		return err
	}
	out.keys = append(out.keys, k)
	out.vals = append(out.vals, v)
	return nil
}

// lookup returns the key node named name in a mapping, or nil.
func (n *cnode) lookup(name string) *cnode {
	for _, k := range n.keys {
		if k.text == name {
			return k
		}
	}
	return nil
}

// parseJSON parses data into a tree, with positions computed from byte
// offsets. Keys written twice are kept, as in YAML, for the decoder to
// report at their field.
func parseJSON(data []byte, file string) (*cnode, error) {
	if len(bytes.TrimLeft(data, " \t\r\n")) == 0 {
		return nil, &ConfigError{File: file, Line: 1, Column: 1, Reason: "the document is empty"}
	}
	p := &jsonConv{data: data, file: file, dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	root, err := p.value()
	if err != nil {
		return nil, err
	}
	// Blanks alone may follow it: not a separator, which next skips
	// within the value ("{...}," is no JSON document).
	off := int(p.dec.InputOffset())
	for off < len(p.data) && strings.IndexByte(" \t\r\n", p.data[off]) >= 0 {
		off++
	}
	if off < len(p.data) {
		return nil, p.errorAt(off, "unexpected data after the top-level value")
	}
	return root, nil
}

type jsonConv struct {
	data  []byte
	file  string
	dec   *json.Decoder
	nodes int
	keys  int
	depth int
	// pos counts positions incrementally (offsets mostly grow): the
	// offset last asked for, its line, and its column less one.
	lastOff, lastLine, lastCol int
}

// next returns the offset of the next token: the decoder's offset moved
// past separators.
func (p *jsonConv) next() int {
	off := int(p.dec.InputOffset())
	for off < len(p.data) && strings.IndexByte(" \t\r\n,:", p.data[off]) >= 0 {
		off++
	}
	return off
}

func (p *jsonConv) errorAt(off int, format string, args ...any) error {
	pos := p.pos(off)
	return &ConfigError{File: p.file, Line: pos.line, Column: pos.col, Reason: errorText(fmt.Sprintf(format, args...))}
}

// pos converts a byte offset into a 1-based line and column, counting on
// from the previous offset asked for. The column counts characters, as
// the YAML parser's do (and editors), not bytes.
func (p *jsonConv) pos(off int) position {
	off = min(max(off, 0), len(p.data))
	if off < p.lastOff || p.lastLine == 0 {
		p.lastOff, p.lastLine, p.lastCol = 0, 1, 0
	}
	for i := p.lastOff; i < off; i++ {
		switch c := p.data[i]; {
		case c == '\n':
			p.lastLine++
			p.lastCol = 0
		case utf8.RuneStart(c):
			p.lastCol++
		}
	}
	p.lastOff = off
	return position{p.lastLine, p.lastCol + 1}
}

// jsonError reports err, the decoder's error for the token at offset off.
func (p *jsonConv) jsonError(off int, err error) error {
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return p.errorAt(len(p.data), "invalid JSON: unexpected end of input")
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// The Offset of a token out of place is where it is, but that of
		// an error within a value counts only the bytes the decoder has
		// scanned for values so far: the value at off, scanned alone,
		// tells which, and where.
		var raw json.RawMessage
		var ve *json.SyntaxError
		if errors.As(json.NewDecoder(bytes.NewReader(p.data[off:])).Decode(&raw), &ve) {
			off += int(ve.Offset) - 1
		} else {
			off = int(se.Offset)
		}
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if off >= 0 && off < len(p.data) && p.data[off] >= utf8.RuneSelf {
		msg = nameCharacter(msg, p.data[off:])
	}
	return p.errorAt(off, "invalid JSON: %s", msg)
}

// nameCharacter returns msg, encoding/json's message for the character at
// the start of rest, a character outside ASCII, with that character named:
// encoding/json names the first byte of its UTF-8 encoding as if it were
// a character of its own ('â' for a typographic quote), which the file
// does not hold. A typographic quote and a space other than U+0020 (one
// pasted from a word processor or a web page) are told how to write.
func nameCharacter(msg string, rest []byte) string {
	q := strconv.Quote(string(rune(rest[0]))) // as encoding/json quotes the byte
	said := "'" + q[1:len(q)-1] + "'"
	r, _ := utf8.DecodeRune(rest)
	if r == utf8.RuneError || !strings.Contains(msg, said) {
		return msg
	}
	name := fmt.Sprintf("%s (%U", strconv.QuoteRune(r), r)
	switch {
	case unicode.Is(unicode.Quotation_Mark, r):
		name += `, a typographic quote: write "`
	case unicode.IsSpace(r) || unicode.Is(unicode.Zs, r):
		name += ", a space JSON does not read as one: write a space"
	}
	return strings.Replace(msg, said, name+")", 1)
}

func (p *jsonConv) value() (*cnode, error) {
	p.nodes++
	if p.nodes > maxConfigNodes {
		return nil, p.errorAt(p.next(), "%v", errTooLarge)
	}
	if p.depth >= maxJSONNesting {
		return nil, p.errorAt(p.next(), "nests more than %d levels deep", maxJSONNesting)
	}
	off := p.next()
	tok, err := p.dec.Token()
	if err != nil {
		return nil, p.jsonError(off, err)
	}
	pos := p.pos(off)
	switch t := tok.(type) {
	case json.Delim:
		p.depth++
		defer func() { p.depth-- }()
		if t == '[' {
			out := &cnode{kind: seqNode, pos: pos}
			for p.dec.More() {
				v, err := p.value()
				if err != nil {
					return nil, err
				}
				out.vals = append(out.vals, v)
			}
			if _, err := p.dec.Token(); err != nil {
				return nil, p.jsonError(p.next(), err)
			}
			return out, nil
		}
		out := &cnode{kind: mapNode, pos: pos}
		for p.dec.More() {
			koff := p.next()
			ktok, err := p.dec.Token()
			if err != nil {
				return nil, p.jsonError(koff, err)
			}
			if p.keys++; p.keys > maxConfigKeys {
				return nil, p.errorAt(koff, "%v", errTooManyKeys)
			}
			name, _ := ktok.(string)
			// Its position before its value's: pos counts on from the
			// offset asked before, and back from the start.
			key := &cnode{kind: scalarNode, pos: p.pos(koff), text: name}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			out.keys = append(out.keys, key)
			out.vals = append(out.vals, v)
		}
		if _, err := p.dec.Token(); err != nil {
			return nil, p.jsonError(p.next(), err)
		}
		return out, nil
	case string:
		out := &cnode{kind: scalarNode, pos: pos, tag: strTag, text: t}
		if strings.ContainsRune(t, utf8.RuneError) {
			out.halfPair = loneSurrogate(string(p.data[off:p.dec.InputOffset()]))
		}
		return out, nil
	case json.Number:
		tag := intTag
		if strings.ContainsAny(string(t), ".eE") {
			tag = floatTag
		}
		return &cnode{kind: scalarNode, pos: pos, tag: tag, text: string(t)}, nil
	case bool:
		return &cnode{kind: scalarNode, pos: pos, tag: boolTag, text: fmt.Sprint(t)}, nil
	case nil:
		return &cnode{kind: scalarNode, pos: pos, tag: nullTag}, nil
	}
	return nil, p.errorAt(off, "unexpected JSON token %v", tok)
}

// loneSurrogate returns the first escape of raw, a quoted string as the
// file writes it (JSON, or YAML in double quotes), that writes half of a
// UTF-16 surrogate pair alone (\udce9, \uD800 not followed by the other
// half, \U0000DCE9), or "". encoding/json and the YAML parser read it as
// U+FFFD; Python's json and yaml modules write it for a byte that was not
// text (decoded with surrogateescape), so that a route "/caf\udce9"
// would load as a path no request has.
func loneSurrogate(raw string) string {
	high := "" // a high half waiting for its low half
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 == len(raw) {
			if high != "" {
				return high
			}
			continue
		}
		esc, v := raw[i:i+2], rune(-1)
		for _, e := range []struct {
			c byte
			n int
		}{{'u', 4}, {'U', 8}} {
			if raw[i+1] != e.c || i+2+e.n > len(raw) {
				continue
			}
			if x, err := strconv.ParseUint(raw[i+2:i+2+e.n], 16, 32); err == nil {
				esc, v = raw[i:i+2+e.n], rune(x)
			}
		}
		i += len(esc) - 1
		low := v >= 0xdc00 && v <= 0xdfff
		switch {
		case high != "" && low:
			high = ""
		case high != "":
			return high
		case low:
			return esc
		case v >= 0xd800 && v <= 0xdbff:
			high = esc
		}
	}
	return high
}

// quoted returns the double-quoted scalar at pos, as the file writes it,
// quotes included, or "" when pos does not hold its opening quote. The
// lexer counts lines (broken by LF, CRLF or CR, as YAML breaks them) and
// columns in characters from 1; the byte offset of each character and the
// first character of each line are computed once, when a first scalar
// needs them, so that reading many costs one pass over the file.
func (c *yamlConv) quoted(pos position) string {
	if c.runeAt == nil {
		c.runeAt = make([]int, 0, len(c.data))
		c.lineAt = []int{0}
		for i, r := range string(c.data) {
			c.runeAt = append(c.runeAt, i)
			if r == '\n' || r == '\r' && (i+1 == len(c.data) || c.data[i+1] != '\n') {
				c.lineAt = append(c.lineAt, len(c.runeAt))
			}
		}
	}
	if pos.line < 1 || pos.line > len(c.lineAt) || pos.col < 1 {
		return ""
	}
	r := c.lineAt[pos.line-1] + pos.col - 1
	if r >= len(c.runeAt) || c.data[c.runeAt[r]] != '"' {
		return ""
	}
	i := c.runeAt[r]
	for j := i + 1; j < len(c.data); j++ {
		switch c.data[j] {
		case '\\':
			j++
		case '"':
			return string(c.data[i : j+1])
		}
	}
	return ""
}

// yamlFloat matches a float of the YAML 1.2 core schema, without the
// special values (.inf, .nan).
var yamlFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// bigInteger reports whether s is written as a decimal integer: an
// optional sign, then digits (underscores allowed between them).
func bigInteger(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "" || s[0] < '0' || s[0] > '9' {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}
