// Package logparse reads HTTP access logs, plain or gzip- or
// bzip2-compressed, in UTF-8 or, after its byte order mark, UTF-16 (see
// decodeUTF16):
//
//   - the Common and Combined Log Formats (Apache, nginx; Apache's
//     vhost_common and vhost_combined too, the virtual host first), also
//     with an X-Forwarded-For list in place of the client address (Apache's
//     "%{X-Forwarded-For}i %l %u %t ..." behind a proxy): the entry has
//     the list as its X-Forwarded-For header and its last entry as the
//     address, for the configuration's trusted proxies to choose the
//     client from; a single IP address there is the address and also a
//     header of one entry (%h or, behind one proxy, the header: see
//     parseCLF); nginx's stock "main" format, Combined followed by
//     "$http_x_forwarded_for", has that header and $remote_addr as the
//     address, as the same variables in a JSON line have;
//   - JSON lines, one object per line, with the field names of nginx,
//     Apache, Caddy, Traefik and others (see JSONFields); a client field
//     holding an X-Forwarded-For list is read as in the Common Log Format;
//   - the W3C Extended Log File Format of IIS, CloudFront and other
//     servers, whose #Fields directive gives the layout of the entries
//     after it (see Auto); a CloudFront entry has the X-Forwarded-For
//     header CloudFront sends the origin (the viewer's own, then c-ip).
//
// Any of them may come in a container runtime's envelope (Docker's
// json-file, the CRI format of containerd and CRI-O): the server's line
// is read out of it, the lines the runtime split joined (see
// unwrapContainer); after the prefix docker compose logs prints (see
// unwrapCompose); and behind a syslog header (RFC 3164 or 5424, as
// rsyslog, syslog-ng and journalctl write a log a server sent to syslog):
// the server's line is read after it (see unwrapSyslog).
//
// Malformed lines are counted and sampled, never fatal.
package logparse

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/quote"
)

// An Entry is one request of an access log.
type Entry struct {
	Time      time.Time
	Addr      string // client address as logged (an IP, or a host name)
	User      string // authenticated user; "" when the log has none
	Method    string
	Path      string // raw (escaped) path
	Query     string
	Proto     string
	Status    int // 0 when the log has none
	Referer   string
	UserAgent string
	Headers   []Header // further request headers (JSON lines; X-Forwarded-For: the first field of a Common Log Format line, or nginx's "main" format's last)
}

// A Header is a request header field read from a log.
type Header struct{ Name, Value string }

// A Format selects the parser of a log.
type Format string

// The formats. Auto tells JSON lines (starting with '{') from the Common
// and Combined Log Formats line by line, and reads the lines after a W3C
// #Fields directive (other than JSON lines) as W3C entries.
const (
	Auto Format = "auto"
	CLF  Format = "clf" // Common and Combined Log Format
	JSON Format = "json"
	W3C  Format = "w3c" // W3C Extended Log File Format (IIS and others)
)

// Options configure a Reader.
type Options struct {
	Format Format
	JSON   JSONFields
}

// A Malformed line could not be parsed.
type Malformed struct {
	File   string
	Line   int64
	Text   string // the start of the line
	Reason string
}

// String formats m as "file:line: reason" and, on the next line, the
// start of the line, quoted; the file's name is quoted when it holds a
// character other than a graphic one (quote.IfNeeded).
func (m Malformed) String() string {
	return fmt.Sprintf("%s:%d: %s\n      %s", quote.IfNeeded(m.File), m.Line, m.Reason, strconv.QuoteToGraphic(m.Text))
}

// The times a log line may have: from the Unix epoch to the last year
// whose instants Unix nanoseconds (the replay's time unit) can hold.
var (
	minTime = time.Unix(0, 0)
	maxTime = time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC)
)

// maxLine is the longest line parsed, not counting its end (LF or CRLF);
// longer ones are malformed.
const maxLine = 64 << 10

// bufSize is the size of the buffer lines are read in: the longest line
// and its end.
const bufSize = maxLine + 2

// maxSamples is the number of malformed lines a Reader keeps.
const maxSamples = 5

// A Reader reads the entries of one log.
type Reader struct {
	name    string
	opts    Options
	count   *countingReader
	br      *bufio.Reader
	gz      bool
	tc      timeCache
	hs      headerSlab
	line    int64
	lineLen int64 // the bytes of the lines read (see LineBytes)
	bad     int64
	noPath  int64 // JSON entries without a request target field
	noVerb  int64 // JSON entries without a method
	hosts   int64 // entries whose client is a host name (see HostNames)
	host    string
	hostAt  int64
	samples []Malformed
	damage  error
	w3c     w3cState
	parts   [2]part // lines a container runtime split, by stream
	long    []byte  // a line longer than what the buffer holds after a hole (see readLine)
}

// NewReader returns a Reader of the log r, named name in reports (and in
// its errors and Damage, quoted as quote.IfNeeded quotes it). A gzip
// or bzip2 stream is recognised by its magic bytes and decompressed; a
// zstd or xz one is refused with an error that says so (the standard
// library reads neither), rather than read as lines that are all
// malformed, and so are a zip or tar archive, compressed or not, and a
// log gzip-compressed twice.
func NewReader(r io.Reader, name string, opts Options) (*Reader, error) {
	if opts.Format == "" {
		opts.Format = Auto
	}
	if opts.Format != Auto && opts.Format != CLF && opts.Format != JSON && opts.Format != W3C {
		return nil, fmt.Errorf("logparse: unknown format %q; want auto, clf, json or w3c", opts.Format)
	}
	cr := &countingReader{r: r}
	br := bufio.NewReaderSize(cr, bufSize)
	gz := false
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		gs := &gzipStream{src: br}
		zr, err := gzip.NewReader(br)
		if err == nil {
			zr.Multistream(false)
			gs.zr = zr
		}
		if err != nil && (err == io.EOF || gzipDamage(err)) {
			// Cut within its header (a copy taken as the compressor
			// starts it) or damaged there: a log that ends early, like
			// one cut later, with no line.
			r := &Reader{name: name, opts: opts, count: cr, br: br, gz: true}
			r.damaged(err)
			return r, nil
		}
		if err != nil {
			return nil, fmt.Errorf("logparse: %s: gzip header: %w", quote.IfNeeded(name), err)
		}
		br = bufio.NewReaderSize(gs, bufSize)
		rd := &Reader{name: name, opts: opts, count: cr, br: br, gz: true}
		gs.trailing = rd.trailing
		if m := peekBuffered(br, 2); bytes.Equal(m, []byte{0x1f, 0x8b}) {
			q := quote.IfNeeded(name)
			return nil, fmt.Errorf("logparse: %s: gzip-compressed twice; decompress it first (for example: gzip -dc %s | gzip -dc | ratekeeper replay --config FILE -)", q, q)
		}
		if err := archive(br, name); err != nil {
			return nil, err
		}
		rd.br = decodeUTF16(br) // reads the stream: trailing is set
		skipBOM(rd.br)
		return rd, nil
	} else if magic, _ := br.Peek(4); len(magic) == 4 && magic[0] == 'B' && magic[1] == 'Z' && magic[2] == 'h' && magic[3] >= '1' && magic[3] <= '9' {
		br = bufio.NewReaderSize(bzip2.NewReader(br), bufSize)
		gz = true
	} else if other := compressedAs(br); other != "" {
		q := quote.IfNeeded(name)
		return nil, fmt.Errorf("logparse: %s: %s-compressed, which replay does not read; decompress it first (for example: %s -dc %s | ratekeeper replay --config FILE -)", q, other, other, q)
	}
	if err := archive(br, name); err != nil {
		return nil, err
	}
	br = decodeUTF16(br)
	skipBOM(br)
	return &Reader{name: name, opts: opts, count: cr, br: br, gz: gz}, nil
}

// utf8BOM is the UTF-8 byte order mark, U+FEFF.
var utf8BOM = []byte{0xef, 0xbb, 0xbf}

// skipBOM skips a UTF-8 byte order mark (logs saved by some editors) at
// the start of br, decompressed: it is no part of the first line.
func skipBOM(br *bufio.Reader) {
	if bom, _ := br.Peek(3); bytes.Equal(bom, utf8BOM) {
		br.Discard(3)
	}
}

// A gzipStream reads the members of a gzip log one after the other, as
// gzip -d does: zero bytes after the last member are padding, ignored;
// other bytes that begin no member are reported to trailing, and ignored.
// (The gzip.Reader's own multistream mode takes them for a damaged member
// header: a log read whole reported as cut short.)
type gzipStream struct {
	src      *bufio.Reader // the compressed bytes
	zr       *gzip.Reader  // the member being read; Multistream(false)
	trailing func(n int64)
}

func (g *gzipStream) Read(p []byte) (int, error) {
	for {
		n, err := g.zr.Read(p)
		if err != io.EOF {
			return n, err
		}
		if n > 0 {
			return n, nil // the member's end comes again with no bytes
		}
		// The member is whole (its checksum and size checked).
		magic, _ := g.src.Peek(2)
		switch {
		case len(magic) == 0:
			return 0, io.EOF
		case magic[0] == 0x1f && (len(magic) == 1 || magic[1] == 0x8b):
			// Another member, or the start of one cut short.
			if err := g.zr.Reset(g.src); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return 0, err
			}
			g.zr.Multistream(false)
		default:
			var rest int64
			zeros := true
			for {
				b, err := g.src.ReadByte()
				if err != nil {
					break
				}
				rest++
				zeros = zeros && b == 0
			}
			if !zeros {
				g.trailing(rest)
			}
			return 0, io.EOF
		}
	}
}

// trailing records that n bytes after a gzip log's last member, not all
// zero, were ignored.
func (r *Reader) trailing(n int64) {
	unit := "bytes"
	if n == 1 {
		unit = "byte"
	}
	r.damage = fmt.Errorf("%s: %d %s after the compressed data are no gzip data; ignored (the log before them was read whole)", quote.IfNeeded(r.name), n, unit)
}

// archive returns an error that says so when br, decompressed, starts a
// zip or tar archive (IIS logs are often zipped; logs are shipped as a
// .tar.gz), named name: its headers, padding and files joined end to end
// are no log, and read as lines they gave binary samples, or files
// replayed as one; nil otherwise.
func archive(br *bufio.Reader, name string) error {
	name = quote.IfNeeded(name)
	m := peekBuffered(br, 262)
	if len(m) >= 4 && (bytes.Equal(m[:4], []byte("PK\x03\x04")) || bytes.Equal(m[:4], []byte("PK\x05\x06"))) {
		return fmt.Errorf("logparse: %s: a zip archive, which replay does not read; extract the logs first (for example: unzip -p %s | ratekeeper replay --config FILE -)", name, name)
	}
	// A tar header block: "ustar" at offset 257 (POSIX, and GNU's "ustar ").
	if len(m) == 262 && bytes.Equal(m[257:262], []byte("ustar")) {
		return fmt.Errorf("logparse: %s: a tar archive, which replay does not read; extract the logs first and name each (tar -xf %s)", name, name)
	}
	return nil
}

// peekBuffered returns up to n bytes at the start of br, from what one
// read of its source gives, no more: reading on until n bytes came would
// wait on a pipe whose writer has written fewer (tail -f), and read a
// short gzip log to its end, where bytes after its compressed data are
// reported before its lines are read.
func peekBuffered(br *bufio.Reader, n int) []byte {
	br.Peek(1)
	m, _ := br.Peek(min(n, br.Buffered()))
	return m
}

// compressedAs returns the name of the compressor whose magic bytes start
// br ("zstd", "xz"), or "".
func compressedAs(br *bufio.Reader) string {
	if m, _ := br.Peek(4); bytes.Equal(m, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
		return "zstd"
	}
	if m, _ := br.Peek(6); bytes.Equal(m, []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}) {
		return "xz"
	}
	return ""
}

// gzipDamage reports whether err, read from a gzip or bzip2 stream, says
// that the compressed data ends early or is corrupt (rather than that the
// file could not be read).
func gzipDamage(err error) bool {
	var corrupt flate.CorruptInputError
	var bz bzip2.StructuralError
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) || errors.As(err, &corrupt) || errors.As(err, &bz)
}

// Damage returns, once Next has returned io.EOF, why a compressed log
// ended before its end (a truncated or corrupt file: the rest is
// missing), or that bytes after the end of a gzip log's compressed data
// (other than zero padding) were ignored; nil otherwise.
func (r *Reader) Damage() error { return r.damage }

// Next returns the next well-formed entry, or io.EOF at the end of the
// log. Other errors are read errors of the log itself.
func (r *Reader) Next() (Entry, error) {
	var e Entry
	if r.damage != nil {
		return e, io.EOF
	}
	for {
		raw, tooLong, err := r.readLine()
		if err != nil && err != io.EOF && r.gz && gzipDamage(err) {
			if len(raw) > 0 {
				r.line++
				r.malformed(raw, "line cut off where the compressed data ends")
			}
			r.unfinished()
			r.damaged(err)
			return e, io.EOF
		}
		// A read that failed mid-line returns its error, not an entry
		// parsed from the part read (it could parse as a request cut
		// short); at the end of the log, a last line without its newline
		// is whole.
		if err != nil && (len(raw) == 0 || err != io.EOF) {
			if err == io.EOF {
				r.unfinished()
				return e, io.EOF
			}
			// "read NAME: is a directory" names the log again.
			var pe *fs.PathError
			if errors.As(err, &pe) && pe.Path == r.name {
				err = pe.Err
			}
			return e, fmt.Errorf("logparse: %s: %w", quote.IfNeeded(r.name), err)
		}
		r.line++
		r.lineLen += int64(len(raw))
		raw = bytes.TrimRight(raw, "\r\n")
		// A UTF-8 byte order mark starting a line within the log (logs
		// saved with one and joined end to end: cat, or gzip members
		// one after the other) is no part of the line, as at its start
		// (skipBOM).
		raw = bytes.TrimPrefix(raw, utf8BOM)
		if tooLong || len(raw) > maxLine {
			r.malformed(raw, "line longer than 64 KiB")
			continue
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		if text, stream, partial, ok := unwrapContainer(raw); ok {
			whole := false
			if raw, whole = r.joinParts(text, stream, partial); !whole {
				continue
			}
			raw = bytes.TrimRight(raw, "\r\n")
			if len(raw) > maxLine {
				r.malformed(raw, "line longer than 64 KiB")
				continue
			}
			if len(bytes.TrimSpace(raw)) == 0 {
				continue
			}
		}
		if text, ok := unwrapCompose(raw); ok {
			if raw = text; len(bytes.TrimSpace(raw)) == 0 {
				continue
			}
		}
		if msg, ok := unwrapSyslog(raw); ok {
			if raw = msg; len(bytes.TrimSpace(raw)) == 0 {
				continue
			}
		} else if text, ok := cutReceivedTime(raw); ok {
			if raw = text; len(bytes.TrimSpace(raw)) == 0 {
				continue
			}
		}
		line := string(raw)
		if f := r.opts.Format; raw[0] == '#' && (f == Auto || f == W3C) {
			// A W3C directive; in a W3C log, every line starting with
			// '#' is one.
			if name, value, ok := w3cDirective(line); ok {
				r.w3c.directive(name, value, r.line)
				continue
			} else if f == W3C {
				continue
			}
		}
		var perr error
		var miss missing
		switch f := r.opts.Format; {
		case f == JSON, f == Auto && strings.HasPrefix(strings.TrimLeft(line, " \t"), "{"):
			perr = parseJSONLine(line, &r.opts.JSON, &r.tc, &e, &miss)
		case f == W3C, f == Auto && r.w3c.layout != nil:
			perr = r.w3c.parse(line, &r.tc, &e)
		default:
			perr = parseCLF(line, &r.tc, &r.hs, &e)
		}
		if perr == nil && (e.Time.Before(minTime) || !e.Time.Before(maxTime)) {
			perr = errors.New("time " + e.Time.UTC().Format(time.RFC3339) + " out of range (1970 to 2261)")
		}
		if perr != nil {
			r.malformed(raw, perr.Error())
			continue
		}
		if miss.path {
			r.noPath++
		}
		if miss.method {
			r.noVerb++
		}
		if isHostName(e.Addr) && !forwarded(e.Headers) {
			if r.hosts++; r.hosts == 1 {
				r.host, r.hostAt = strings.Clone(e.Addr), r.line
			}
		}
		return e, nil
	}
}

// readLine reads the next line with its end (LF or CRLF; none at the end
// of the log). NUL bytes before a line are no part of it: a hole, the
// start of a log that logrotate's copytruncate emptied under a writer that
// does not append (it writes on at its offset: the file has as many NUL
// bytes as it had before, then the writer's next line), or left by a
// crash. A line longer than the buffer is read to its end and returned as
// its first 120 bytes, with tooLong.
func (r *Reader) readLine() (raw []byte, tooLong bool, err error) {
	raw, err = r.br.ReadSlice('\n')
	if len(raw) == 0 || raw[0] != 0 && !errors.Is(err, bufio.ErrBufferFull) {
		return raw, false, err
	}
	// A hole, a buffer of NUL bytes at a time, then the line after it.
	raw = bytes.TrimLeft(raw, "\x00")
	for len(raw) == 0 && errors.Is(err, bufio.ErrBufferFull) {
		raw, err = r.br.ReadSlice('\n')
		raw = bytes.TrimLeft(raw, "\x00")
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return raw, false, err
	}
	// The line goes on past the buffer: kept while it may fit.
	r.long = append(r.long[:0], raw...)
	for errors.Is(err, bufio.ErrBufferFull) {
		raw, err = r.br.ReadSlice('\n')
		if len(r.long) <= bufSize {
			r.long = append(r.long, raw...)
		}
	}
	if len(r.long) > bufSize {
		return bytes.Clone(r.long[:120]), true, err // the start, for the sample
	}
	return r.long, false, err
}

// damaged records that the compressed log ends early (err) after the
// lines read, or for a checksum that fails (the data decompressed to the
// end of its stream, some bytes of it wrong), that it is damaged.
func (r *Reader) damaged(err error) {
	var bz bzip2.StructuralError
	if errors.Is(err, gzip.ErrChecksum) || errors.As(err, &bz) && strings.Contains(string(bz), "checksum") {
		r.damage = fmt.Errorf("%s: compressed data is damaged (%v, found after line %d): lines before it may be garbled (counted as malformed, or read wrong), and the rest of the log, if any, is missing", quote.IfNeeded(r.name), err, r.line)
		return
	}
	r.damage = fmt.Errorf("%s: compressed data ends early after line %d (a truncated or damaged file: %v); the rest of the log is missing", quote.IfNeeded(r.name), r.line, err)
}

func (r *Reader) malformed(raw []byte, reason string) {
	r.bad++
	if len(r.samples) < maxSamples {
		text := raw
		if len(text) > 120 {
			text = text[:120]
		}
		r.samples = append(r.samples, Malformed{File: r.name, Line: r.line, Text: string(bytes.TrimRight(text, "\r\n")), Reason: reason})
	}
}

// LineBytes returns the bytes of the lines read so far, decompressed and
// decoded, their ends included (the first bytes of a line longer than
// 64 KiB, which is malformed): the entries Next returned keep their lines
// (their strings are substrings of them), and this bounds what a batch of
// them keeps.
func (r *Reader) LineBytes() int64 { return r.lineLen }

// Lines returns the number of lines read so far.
func (r *Reader) Lines() int64 { return r.line }

// NoPath returns the number of JSON lines so far, not malformed, that
// name no request target under any field looked for (JSONFields.Path, or
// the defaults): their entries have the path /.
func (r *Reader) NoPath() int64 { return r.noPath }

// NoMethod returns the number of JSON lines so far, not malformed, that
// give no method (in JSONFields.Method, the defaults, or a request line):
// their entries have the method GET.
func (r *Reader) NoMethod() int64 { return r.noVerb }

// HostNames returns the number of entries so far whose client is a host
// name, not an address (Apache's %h with HostnameLookups On), with no
// forwarding header to find the client in either, and the first one's
// host name and line: the ip key part finds no client in them.
func (r *Reader) HostNames() (n int64, first string, line int64) {
	return r.hosts, r.host, r.hostAt
}

// isHostName reports whether s, a client field, is a DNS name with a
// dot and a letter (crawl-66-249-66-1.googlebot.com), which no address
// is in any form the ip key part reads (an IPv4 address has no letter,
// an IPv6 one a ':').
func isHostName(s string) bool {
	letter, dot := false, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			letter = true
		case c == '.':
			dot = true
		case '0' <= c && c <= '9' || c == '-':
		default:
			return false
		}
	}
	return letter && dot
}

// forwarded reports whether hs holds a forwarding header, in which a
// configuration's trusted proxies or hops may find the client.
func forwarded(hs []Header) bool {
	for _, h := range hs {
		if strings.EqualFold(h.Name, "X-Forwarded-For") || strings.EqualFold(h.Name, "Forwarded") || strings.EqualFold(h.Name, "X-Real-IP") {
			return true
		}
	}
	return false
}

// MalformedCount returns the number of malformed lines so far.
func (r *Reader) MalformedCount() int64 { return r.bad }

// Samples returns the first malformed lines (at most 5).
func (r *Reader) Samples() []Malformed { return r.samples }

// BytesRead returns the bytes read from the underlying (possibly
// compressed) stream, for progress reports.
func (r *Reader) BytesRead() int64 { return r.count.n }

// A countingReader counts the bytes read from r, and reads r no more
// once r has reported its end: bufio retries a read after an io.EOF it
// returned (each Peek of NewReader's sniffing, each Next), which on a
// terminal waits for the user to type more, though Ctrl-D ended it.
type countingReader struct {
	r     io.Reader
	n     int64
	ended bool
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.ended {
		return 0, io.EOF
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.ended = err == io.EOF
	return n, err
}
