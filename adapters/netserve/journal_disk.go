package netserve

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"os"
)

// DefaultJournalBytes bounds a connection's journal on disk when
// Options.JournalDir is set and Options.JournalBytes is not: 64 MiB.
const DefaultJournalBytes = 64 << 20

// Bounds of the journal on disk.
const (
	// diskFlushBytes is how much is gathered before a write: the
	// runtime's messages cost a copy each, and a write per this many
	// bytes (docs/behaviour.md#network).
	diskFlushBytes = 256 << 10
	// diskReadBytes is about how much a resume reads from disk at a
	// time, the journal locked meanwhile.
	diskReadBytes = 1 << 20
	// markEvery is how many records apart a segment remembers where a
	// record starts, so that a resume seeks near its cursor.
	markEvery = 256
)

// diskJournal is a connection's messages on disk, as the journal numbered
// them: one record a line (the message, carrying its cursor), in at most
// two segment files of the directory (mode 0600, named journal-*), each
// at most half the bound (but for a message larger than that, alone in
// its segment). A segment that fills starts the next, and the oldest of
// two is removed whole: the latest half of the bound, at least, is kept.
// A write or a file that fails ends it (its files removed, a warning
// logged): the runtime never waits on the disk. It is the journal's, used
// under its lock (docs/behaviour.md#held-sessions).
type diskJournal struct {
	dir    string
	half   int64 // a segment's bound
	log    *slog.Logger
	segs   []*segment // oldest first
	buf    []byte     // records not yet written to the last segment
	failed bool
}

// segment is one file of records.
type segment struct {
	f     *os.File
	first int64   // the sequence of its first record
	n     int64   // its records (written or buffered)
	size  int64   // its bytes (written or buffered)
	marks []int64 // where record k*markEvery starts
}

func newDiskJournal(dir string, bound int64, log *slog.Logger) *diskJournal {
	return &diskJournal{dir: dir, half: max(bound/2, 1), log: log}
}

// append records msg, of sequence seq (each one more than the last).
func (d *diskJournal) append(seq int64, msg []byte) {
	if d.failed {
		return
	}
	var cur *segment
	if len(d.segs) > 0 {
		cur = d.segs[len(d.segs)-1]
	}
	if cur == nil || (cur.n > 0 && cur.size+int64(len(msg))+1 > d.half) {
		if cur = d.rotate(seq); cur == nil {
			return
		}
	}
	if cur.n%markEvery == 0 {
		cur.marks = append(cur.marks, cur.size)
	}
	d.buf = append(append(d.buf, msg...), '\n')
	cur.n++
	cur.size += int64(len(msg)) + 1
	if len(d.buf) >= diskFlushBytes {
		d.flush()
	}
}

// rotate starts a segment at sequence seq, removing the oldest when two
// are kept; nil once failed.
func (d *diskJournal) rotate(seq int64) *segment {
	if !d.flush() {
		return nil
	}
	if len(d.segs) == 2 {
		d.segs[0].remove()
		d.segs = d.segs[1:]
	}
	f, err := os.CreateTemp(d.dir, "journal-*") // mode 0600
	if err != nil {
		d.fail(err)
		return nil
	}
	s := &segment{f: f, first: seq}
	d.segs = append(d.segs, s)
	return s
}

// flush writes the buffered records; false once failed.
func (d *diskJournal) flush() bool {
	if d.failed {
		return false
	}
	if len(d.buf) == 0 {
		return true
	}
	if _, err := d.segs[len(d.segs)-1].f.Write(d.buf); err != nil {
		d.fail(err)
		return false
	}
	d.buf = d.buf[:0]
	return true
}

// fail ends the journal on disk: nothing more is kept there.
func (d *diskJournal) fail(err error) {
	d.log.Warn("the journal on disk failed: resumes are served from memory only", "error", err)
	d.failed = true
	d.close()
}

// oldest is the sequence of the oldest record held; false when none is.
func (d *diskJournal) oldest() (int64, bool) {
	if d.failed || len(d.segs) == 0 {
		return 0, false
	}
	return d.segs[0].first, true
}

// read returns the records from sequence from up to (not including) to,
// about diskReadBytes of them at most and at least one, in order.
func (d *diskJournal) read(from, to int64) ([][]byte, error) {
	if !d.flush() {
		return nil, errors.New("the journal on disk failed")
	}
	var s *segment
	for _, c := range d.segs {
		if c.first <= from && from < c.first+c.n {
			s = c
		}
	}
	if s == nil {
		return nil, errors.New("the journal on disk no longer holds the message")
	}
	k := (from - s.first) / markEvery
	off := s.marks[k]
	skip := (from - s.first) - k*markEvery
	br := bufio.NewReaderSize(io.NewSectionReader(s.f, off, s.size-off), 64<<10)
	for ; skip > 0; skip-- {
		if _, err := br.ReadSlice('\n'); err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		} else if errors.Is(err, bufio.ErrBufferFull) {
			skip++ // the rest of the same record
		}
	}
	var out [][]byte
	bytes := 0
	for seq := from; seq < to && seq < s.first+s.n && (bytes < diskReadBytes || len(out) == 0); seq++ {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		out = append(out, line[:len(line)-1])
		bytes += len(line)
	}
	return out, nil
}

// close removes the files; nothing more is kept.
func (d *diskJournal) close() {
	d.failed = true
	for _, s := range d.segs {
		s.remove()
	}
	d.segs, d.buf = nil, nil
}

func (s *segment) remove() {
	_ = s.f.Close()
	_ = os.Remove(s.f.Name())
}
