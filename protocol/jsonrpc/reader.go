package jsonrpc

import (
	"bufio"
	"errors"
	"io"
)

// DefaultMaxLineBytes is the default bound on one line (10 MiB), the size at
// which the reference Go SDK gives up on the whole connection. Here a longer
// line is discarded and the connection goes on.
const DefaultMaxLineBytes = 10 << 20

const (
	// readBufferSize is the bufio buffer: lines up to this size are handed
	// out without copying. 64 KiB matches the default Linux pipe capacity.
	readBufferSize = 64 << 10
	// keepAccumulator is the largest long-line buffer kept for reuse;
	// a larger one is released after its line has been handled.
	keepAccumulator = 1 << 20
)

// lineReader reads '\n'-terminated lines with a bound on their length. A line
// that fits in the bufio buffer is returned as a slice of that buffer; a
// longer one is assembled in a reusable accumulator until it either ends or
// exceeds the bound, at which point the rest of it is skipped without being
// stored.
type lineReader struct {
	br  *bufio.Reader
	max int
	acc []byte // reusable buffer for lines longer than the bufio buffer
	err error  // error to report on the next call (after a final partial line)
}

func newLineReader(r io.Reader, maxLine, bufSize int) *lineReader {
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	return &lineReader{br: bufio.NewReaderSize(r, bufSize), max: maxLine}
}

// next returns the next line without its "\n" or "\r\n" terminator. The slice
// is valid only until the following call. When a line longer than the bound
// was skipped, next returns a nil line and its length (terminator excluded)
// in oversize. A final line without '\n' before EOF is returned as a line;
// err is io.EOF at a clean end, or the read error that ended the stream (a
// partial line before a read error other than EOF is dropped).
func (lr *lineReader) next() (line []byte, oversize int64, err error) {
	if lr.err != nil {
		return nil, 0, lr.err
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
// first fragment.
func (lr *lineReader) long(first []byte) ([]byte, int64, error) {
	total := int64(len(first))
	var tail [2]byte // the last two bytes of the line so far, to size its terminator
	tail = pushTail(tail, first)
	// The accumulator may hold the bound plus a "\r\n" terminator; past
	// that the line is certainly too long. bounded makes the exact check.
	keeping := len(first) <= lr.max+2
	if keeping {
		lr.acc = append(lr.acc[:0], first...)
	}
	for {
		frag, err := lr.br.ReadSlice('\n')
		total += int64(len(frag))
		tail = pushTail(tail, frag)
		if keeping {
			lr.acc = append(lr.acc, frag...)
			if len(lr.acc) > lr.max+2 {
				keeping = false
				lr.acc = lr.acc[:0]
			}
		}
		switch {
		case err == nil:
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			lr.err = err
		default:
			return nil, 0, err
		}
		if keeping {
			return lr.bounded(trimEOL(lr.acc))
		}
		return nil, total - int64(eolLen(tail)), nil
	}
}

// pushTail shifts the bytes of frag into the two-byte window tail.
func pushTail(tail [2]byte, frag []byte) [2]byte {
	switch n := len(frag); n {
	case 0:
		return tail
	case 1:
		return [2]byte{tail[1], frag[0]}
	default:
		return [2]byte{frag[n-2], frag[n-1]}
	}
}

// eolLen is how many of the final bytes tail trimEOL would remove. It is only
// used for lines longer than two bytes.
func eolLen(tail [2]byte) int {
	n := 0
	if tail[1] == '\n' {
		n = 1
		if tail[0] == '\r' {
			n = 2
		}
	} else if tail[1] == '\r' {
		n = 1
	}
	return n
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
