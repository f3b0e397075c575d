package jsonrpc

import (
	"bytes"
	"errors"
	"io"
	"sync"
)

// DefaultMaxLineBytes is the default bound on one line (10 MiB), the size at
// which the reference Go SDK gives up on the whole connection. Here a longer
// line is discarded and the connection goes on.
const DefaultMaxLineBytes = 10 << 20

const (
	// readBufferSize is the read buffer of a flowing stream (smaller when
	// the line bound is): lines up to this size are handed out without
	// copying. 64 KiB matches the default Linux pipe capacity.
	readBufferSize = 64 << 10
	// idleBufferSize is the buffer a connection keeps while the peer is
	// quiet, so that an idle connection holds a few KiB rather than a
	// flowing stream's buffer (docs/behaviour.md#bounds).
	idleBufferSize = 4 << 10
	// minBufferSize is the smallest read buffer (bufio's minimum).
	minBufferSize = 16
	// maxEmptyReads is how many reads in a row may return nothing before
	// the stream counts as broken (io.ErrNoProgress), as in bufio.
	maxEmptyReads = 100
)

// Buffers shared by every connection of the process: a flowing stream's
// read buffer, taken when reads start filling the idle buffer and given back
// once the peer is quiet, and the accumulators of long lines, given back
// after their line was handled. A stream of long lines thus reuses one
// accumulator instead of allocating and growing one per line, and an idle
// connection holds neither.
var (
	flowBuffers sync.Pool // *[]byte of readBufferSize bytes
	longBuffers sync.Pool // *[]byte, any capacity
)

// lineReader reads '\n'-terminated lines with a bound on their length. A line
// that fits in the read buffer is returned as a slice of that buffer; a
// longer one is assembled in an accumulator, from whatever bytes have
// arrived, until it either ends or certainly exceeds the bound. Then it is
// reported at once, without waiting for its newline, and the rest of it is
// skipped as it arrives, without being stored.
//
// The read buffer is small (idleBufferSize) while the peer is quiet and
// grows to the flowing size when a read fills it; it shrinks back when the
// reader has consumed everything and the last read did not fill the space
// it was given (the peer had nothing more: the next read may block).
type lineReader struct {
	r   io.Reader
	max int
	// fast is the largest line (terminator included) handed out from the
	// read buffer: max+1 when the bound is smaller than the flowing
	// buffer (so a line without a newline leaves the fast path as soon
	// as it could exceed the bound), at least minBufferSize.
	fast int

	small []byte // the idle buffer, kept
	flow  *[]byte
	buf   []byte // small, or *flow while the stream flows
	r0    int    // unread bytes are buf[r0:w0]
	w0    int
	// drained: the last read returned less than it asked for.
	drained bool
	rerr    error // the read error to report once buf is consumed

	acc      *[]byte // the accumulator of the current long line
	lastLong int     // the length of the last long line, to size the next
	accPeak  int     // the largest accumulator capacity used (for tests)
	// err is the error to report on the next call (after a final partial
	// line), or errSkipRest when the next call must first skip the rest of
	// a line reported as oversize.
	err error
	// idle, when set, is called before a read that follows a short one.
	idle func()
}

// errSkipRest marks a line that was reported as oversize before its end.
var errSkipRest = errors.New("jsonrpc: skipping the rest of an oversize line")

// newLineReader reads r with a flowing buffer of bufSize bytes, or of
// maxLine+1 bytes when that is smaller (but at least minBufferSize).
func newLineReader(r io.Reader, maxLine, bufSize int) *lineReader {
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	if maxLine < bufSize {
		bufSize = maxLine + 1
	}
	bufSize = max(bufSize, minBufferSize)
	lr := &lineReader{r: r, max: maxLine, fast: bufSize, drained: true}
	lr.small = make([]byte, min(idleBufferSize, bufSize))
	lr.buf = lr.small
	return lr
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
	lr.releaseAcc()
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
	for {
		unread := lr.buf[lr.r0:lr.w0]
		if i := bytes.IndexByte(unread, '\n'); i >= 0 {
			lr.r0 += i + 1
			return lr.bounded(trimEOL(unread[:i+1]))
		}
		if lr.rerr != nil {
			lr.r0 = lr.w0
			if errors.Is(lr.rerr, io.EOF) && len(unread) > 0 {
				lr.err = lr.rerr
				return lr.bounded(trimEOL(unread))
			}
			return nil, 0, lr.rerr
		}
		if len(unread) >= lr.fast {
			lr.r0 = lr.w0
			return lr.long(unread)
		}
		lr.fill(true)
	}
}

// fill reads once into the free end of the buffer, making room first:
// moving the unread bytes to the front, growing the idle buffer to the
// flowing one when the last read filled it or a line does not fit in it,
// or (with shrink, between lines) shrinking
// back to the idle buffer when everything was consumed and the peer had
// nothing more.
func (lr *lineReader) fill(shrink bool) {
	if lr.r0 == lr.w0 {
		lr.r0, lr.w0 = 0, 0
		if shrink && lr.drained && lr.flow != nil {
			flowBuffers.Put(lr.flow)
			lr.flow, lr.buf = nil, lr.small
		}
	}
	if !lr.drained && lr.flow == nil && len(lr.small) < lr.fast {
		lr.takeFlow() // the last read filled the idle buffer: the stream flows
	}
	if lr.w0 == len(lr.buf) && lr.r0 > 0 {
		lr.w0 = copy(lr.buf, lr.buf[lr.r0:lr.w0])
		lr.r0 = 0
	}
	if lr.w0 == len(lr.buf) && len(lr.buf) < lr.fast {
		lr.takeFlow()
	}
	if lr.drained && lr.idle != nil {
		lr.idle()
	}
	space := len(lr.buf) - lr.w0
	for range maxEmptyReads {
		n, err := lr.r.Read(lr.buf[lr.w0:])
		lr.w0 += n
		lr.drained = n < space
		if err != nil {
			lr.rerr = err
			return
		}
		if n > 0 {
			return
		}
	}
	lr.rerr = io.ErrNoProgress
}

// takeFlow moves the unread bytes into a flowing buffer.
func (lr *lineReader) takeFlow() {
	p, _ := flowBuffers.Get().(*[]byte)
	if p == nil || len(*p) < lr.fast {
		b := make([]byte, lr.fast)
		p = &b
	}
	buf := (*p)[:lr.fast]
	lr.w0 = copy(buf, lr.buf[lr.r0:lr.w0])
	lr.r0 = 0
	lr.flow, lr.buf = p, buf
}

// bounded applies the bound to a complete line.
func (lr *lineReader) bounded(line []byte) ([]byte, int64, error) {
	if len(line) > lr.max {
		return nil, int64(len(line)), nil
	}
	return line, 0, nil
}

// long continues a line that did not fit in the read buffer; first is its
// first fragment. It checks the bound after every read, so that a line that
// never ends is reported as soon as it is certainly too long.
func (lr *lineReader) long(first []byte) ([]byte, int64, error) {
	total := int64(len(first))
	last := first[len(first)-1] // the last byte of the line so far
	acc := lr.grow(lr.takeAcc(), first)
	defer func() {
		*lr.acc = acc[:0]
		lr.accPeak = max(lr.accPeak, cap(acc))
	}()
	for {
		// Without a newline yet, the line holds at least total bytes, or
		// total-1 when the last one is a '\r' that a '\n' may follow.
		seen := total
		if last == '\r' {
			seen--
		}
		if seen > int64(lr.max) {
			lr.err = errSkipRest
			return nil, seen, nil
		}
		var n int
		var complete bool
		var err error
		acc, n, complete, err = lr.more(acc)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return nil, 0, err
			}
			lr.err = err
			break
		}
		total += int64(n)
		last = acc[len(acc)-1]
		if complete {
			break
		}
	}
	lr.lastLong = len(acc)
	return lr.bounded(trimEOL(acc))
}

// accLimit is the most an accumulator can need: a kept line of max bytes
// plus "\r\n", or a discarded one stopped just past the bound.
func (lr *lineReader) accLimit() int { return lr.max + lr.fast + 2 }

// takeAcc returns an empty accumulator for a long line, a shared one when
// one is large enough for the last long line (and no larger than this
// reader could need), otherwise a new one sized for it.
func (lr *lineReader) takeAcc() []byte {
	want := min(max(lr.lastLong+lr.lastLong/8, 2*lr.fast), lr.accLimit())
	p, _ := longBuffers.Get().(*[]byte)
	if p != nil && (cap(*p) < want || cap(*p) > lr.accLimit()) {
		longBuffers.Put(p)
		p = nil
	}
	if p == nil {
		b := make([]byte, 0, want)
		p = &b
	}
	lr.acc = p
	return (*p)[:0]
}

// grow appends frag to acc, making room first with reserve.
func (lr *lineReader) grow(acc, frag []byte) []byte {
	return append(lr.reserve(acc, len(frag)), frag...)
}

// reserve makes room for n more bytes in acc, doubling its capacity when
// it must grow but never beyond accLimit.
func (lr *lineReader) reserve(acc []byte, n int) []byte {
	if len(acc)+n > cap(acc) {
		c := max(min(2*cap(acc), lr.accLimit()), len(acc)+n)
		bigger := make([]byte, len(acc), c)
		copy(bigger, acc)
		acc = bigger
	}
	return acc
}

// releaseAcc gives the accumulator of the previous long line back to the
// shared ones: its line is no longer in use.
func (lr *lineReader) releaseAcc() {
	if lr.acc != nil {
		longBuffers.Put(lr.acc)
		lr.acc = nil
	}
}

// more appends to acc the bytes of the current line that have arrived:
// through the next '\n' (complete is then true) or everything buffered.
// When nothing is buffered it reads once, straight into acc (the line's
// bytes are not copied through the read buffer), and moves whatever
// follows a '\n' in what it read to the read buffer. Unlike a full read it
// does not wait for the space to fill. n is how many bytes it appended.
func (lr *lineReader) more(acc []byte) (_ []byte, n int, complete bool, err error) {
	if lr.r0 < lr.w0 {
		frag := lr.buf[lr.r0:lr.w0]
		if i := bytes.IndexByte(frag, '\n'); i >= 0 {
			frag, complete = frag[:i+1], true
		}
		lr.r0 += len(frag)
		return lr.grow(acc, frag), len(frag), complete, nil
	}
	if lr.rerr != nil {
		return acc, 0, false, lr.rerr
	}
	lr.r0, lr.w0 = 0, 0
	chunk := min(readBufferSize, lr.fast)
	acc = lr.reserve(acc, chunk)
	if lr.drained && lr.idle != nil {
		lr.idle()
	}
	start := len(acc)
	for range maxEmptyReads {
		got, err := lr.r.Read(acc[start : start+chunk])
		lr.drained = got < chunk
		if err != nil {
			lr.rerr = err
		}
		if got == 0 {
			if err != nil {
				return acc, 0, false, err
			}
			continue
		}
		read := acc[start : start+got]
		if i := bytes.IndexByte(read, '\n'); i >= 0 {
			if rest := read[i+1:]; len(rest) > 0 {
				if len(lr.buf) < len(rest) {
					lr.takeFlow()
				}
				lr.w0 = copy(lr.buf, rest)
			}
			return acc[:start+i+1], i + 1, true, nil
		}
		return acc[:start+got], got, false, nil
	}
	lr.rerr = io.ErrNoProgress
	return acc, 0, false, lr.rerr
}

// skipRest discards the rest of a line already reported as oversize, through
// its newline, without storing it.
func (lr *lineReader) skipRest() error {
	for {
		unread := lr.buf[lr.r0:lr.w0]
		if i := bytes.IndexByte(unread, '\n'); i >= 0 {
			lr.r0 += i + 1
			return nil
		}
		lr.r0 = lr.w0
		if lr.rerr != nil {
			return lr.rerr
		}
		lr.fill(true)
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
