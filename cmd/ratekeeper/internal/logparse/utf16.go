package logparse

import (
	"bufio"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// A log saved as UTF-16 starts with its byte order mark: FF FE for
// little-endian, as Windows PowerShell 5 writes text ("Get-Content
// u_ex*.log > all.log" joins IIS logs so), FE FF for big-endian. No
// server writes one; the Reader decodes it to UTF-8, which the parsers
// read.

// decodeUTF16 returns br when it does not start with a UTF-16 byte order
// mark, else a reader of its text after the mark, decoded to UTF-8.
func decodeUTF16(br *bufio.Reader) *bufio.Reader {
	bom, _ := br.Peek(2)
	if len(bom) < 2 || !(bom[0] == 0xff && bom[1] == 0xfe || bom[0] == 0xfe && bom[1] == 0xff) {
		return br
	}
	u := &utf16Reader{src: br, bigEndian: bom[0] == 0xfe, held: -1, buf: make([]byte, 0, utf16Chunk+utf8.UTFMax)}
	br.Discard(2)
	return bufio.NewReaderSize(u, bufSize)
}

// utf16Chunk is about the number of UTF-8 bytes a utf16Reader decodes at
// a time.
const utf16Chunk = 4096

// A utf16Reader decodes UTF-16 text to UTF-8. An unpaired surrogate, and
// an odd byte at the end, become U+FFFD. The errors of src are its own,
// unchanged (a compressed log's damage among them).
type utf16Reader struct {
	src       *bufio.Reader
	bigEndian bool
	held      int32  // a code unit read ahead, after an unpaired high surrogate; -1 for none
	buf       []byte // backs out
	out       []byte // decoded, not yet read
	err       error  // src's, once out is read
}

func (u *utf16Reader) Read(p []byte) (int, error) {
	for len(u.out) == 0 {
		if u.err != nil {
			return 0, u.err
		}
		u.decode()
	}
	n := copy(p, u.out)
	u.out = u.out[n:]
	return n, nil
}

// decode decodes the next code units into out, until it holds
// utf16Chunk bytes or src fails.
func (u *utf16Reader) decode() {
	out := u.buf[:0]
	for len(out) < utf16Chunk {
		c, err := u.unit()
		if err != nil {
			u.err = err
			break
		}
		r := rune(c)
		if utf16.IsSurrogate(r) {
			if r >= 0xdc00 { // a low surrogate first
				r = utf8.RuneError
			} else if c2, err := u.unit(); err != nil {
				r, u.err = utf8.RuneError, err
			} else if r2 := rune(c2); 0xdc00 <= r2 && r2 < 0xe000 {
				r = utf16.DecodeRune(r, r2)
			} else {
				r, u.held = utf8.RuneError, int32(c2)
			}
		}
		out = utf8.AppendRune(out, r)
		if u.err != nil {
			break
		}
	}
	u.buf, u.out = out[:0], out
}

// unit returns the next code unit.
func (u *utf16Reader) unit() (uint16, error) {
	if u.held >= 0 {
		c := uint16(u.held)
		u.held = -1
		return c, nil
	}
	a, err := u.src.ReadByte()
	if err != nil {
		return 0, err
	}
	b, err := u.src.ReadByte()
	if err == io.EOF {
		return utf8.RuneError, nil // an odd byte at the end; EOF follows
	}
	if err != nil {
		return 0, err
	}
	if u.bigEndian {
		return uint16(a)<<8 | uint16(b), nil
	}
	return uint16(b)<<8 | uint16(a), nil
}
