package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// DefaultMaxLineBytes is the default bound on one line (10 MiB), the size at
// which the reference Go SDK gives up on the whole connection. Here a longer
// line is discarded and the connection goes on.
const DefaultMaxLineBytes = 10 << 20

const (
	// readBufferSize is the bufio buffer (smaller when the line bound is):
	// lines up to this size are handed out without copying. 64 KiB matches
	// the default Linux pipe capacity.
	readBufferSize = 64 << 10
	// keepAccumulator is the largest long-line buffer kept for reuse;
	// a larger one is released after its line has been handled.
	keepAccumulator = 1 << 20
)

// lineReader reads '\n'-terminated lines with a bound on their length. A line
// that fits in the bufio buffer is returned as a slice of that buffer; a
// longer one is assembled in a reusable accumulator, from whatever bytes
// have arrived, until it either ends or certainly exceeds the bound. Then it
// is reported at once, without waiting for its newline, and the rest of it is
// skipped as it arrives, without being stored.
type lineReader struct {
	br  *bufio.Reader
	max int
	acc []byte // reusable buffer for lines longer than the bufio buffer
	// err is the error to report on the next call (after a final partial
	// line), or errSkipRest when the next call must first skip the rest of
	// a line reported as oversize.
	err error
}

// errSkipRest marks a line that was reported as oversize before its end.
var errSkipRest = errors.New("jsonrpc: skipping the rest of an oversize line")

// newLineReader reads r with a bufio buffer of bufSize bytes, or of
// maxLine+1 bytes when that is smaller (but at least bufio's minimum), so
// that a line without a newline leaves the fast path as soon as it could
// exceed the bound.
func newLineReader(r io.Reader, maxLine, bufSize int) *lineReader {
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	if maxLine < bufSize {
		bufSize = maxLine + 1
	}
	return &lineReader{br: bufio.NewReaderSize(r, bufSize), max: maxLine}
}

// next returns the next line without its "\n" or "\r\n" terminator. The slice
// is valid only until the following call. When a line longer than the bound
// was found, next returns a nil line and in oversize the bytes of it seen so
// far, terminator excluded: the full length when its newline had arrived,
// otherwise at least the bound plus one (the following call skips the rest
// of that line through its newline). A final line without '\n' before EOF is
// returned as a line; err is io.EOF at a clean end, or the read error that
// ended the stream (a partial line before a read error other than EOF is
// dropped).
func (lr *lineReader) next() (line []byte, oversize int64, err error) {
	if lr.err != nil {
		if lr.err != errSkipRest {
			return nil, 0, lr.err
		}
		if err := lr.skipRest(); err != nil {
			lr.err = err
			return nil, 0, err
		}
		lr.err = nil
	}
	if cap(lr.acc) > keepAccumulator {
		lr.acc = nil
	}
	frag, err := lr.br.ReadSlice('\n')
	switch {
	case err == nil:
		return lr.bounded(trimEOL(frag))
	case errors.Is(err, bufio.ErrBufferFull):
		return lr.long(frag)
	case errors.Is(err, io.EOF) && len(frag) > 0:
		lr.err = err
		return lr.bounded(trimEOL(frag))
	default:
		return nil, 0, err
	}
}

// bounded applies the bound to a complete line.
func (lr *lineReader) bounded(line []byte) ([]byte, int64, error) {
	if len(line) > lr.max {
		return nil, int64(len(line)), nil
	}
	return line, 0, nil
}

// long continues a line that did not fit in the bufio buffer; first is its
// first fragment. It checks the bound after every read, so that a line that
// never ends is reported as soon as it is certainly too long.
func (lr *lineReader) long(first []byte) ([]byte, int64, error) {
	total := int64(len(first))
	last := first[len(first)-1] // the last byte of the line so far
	lr.acc = append(lr.acc[:0], first...)
	for {
		// Without a newline yet, the line holds at least total bytes, or
		// total-1 when the last one is a '\r' that a '\n' may follow.
		seen := total
		if last == '\r' {
			seen--
		}
		if seen > int64(lr.max) {
			lr.acc = lr.acc[:0]
			lr.err = errSkipRest
			return nil, seen, nil
		}
		frag, complete, err := lr.more()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return nil, 0, err
			}
			lr.err = err
			break
		}
		total += int64(len(frag))
		last = frag[len(frag)-1]
		lr.acc = append(lr.acc, frag...)
		if complete {
			break
		}
	}
	return lr.bounded(trimEOL(lr.acc))
}

// more returns the bytes of the current line that have arrived: through the
// next '\n' (complete is then true) or everything buffered, reading once from
// the underlying reader when nothing is. Unlike ReadSlice it does not wait
// for the buffer to fill. The slice is valid until the next read.
func (lr *lineReader) more() (frag []byte, complete bool, err error) {
	n := lr.br.Buffered()
	if n == 0 {
		if _, err := lr.br.Peek(1); err != nil {
			return nil, false, err
		}
		n = lr.br.Buffered()
	}
	frag, _ = lr.br.Peek(n)
	if i := bytes.IndexByte(frag, '\n'); i >= 0 {
		frag, complete = frag[:i+1], true
	}
	_, _ = lr.br.Discard(len(frag))
	return frag, complete, nil
}

// skipRest discards the rest of a line already reported as oversize, through
// its newline, without storing it.
func (lr *lineReader) skipRest() error {
	for {
		_, err := lr.br.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err // nil at the newline; EOF or a read error otherwise
		}
	}
}

// trimEOL removes a trailing "\n" and then a trailing "\r".
func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}
