package journaltail

import (
	"bytes"
	"io"
	"os"
	"time"
)

// Tail follows one JSONL journal: the bytes of whole lines already read,
// and when a read last found a new line (the settle rule's clock). A
// partial last line is left unread until its newline is written. The
// zero value follows no journal; it is not safe for concurrent use.
type Tail struct {
	// Path is the journal; empty until it is found.
	Path string
	// Offset is the number of bytes of whole lines read.
	Offset int64
	// Grew is when a read last found a whole new line.
	Grew time.Time
}

// Reset forgets the journal and starts the settle clock now.
func (t *Tail) Reset() {
	*t = Tail{Grew: time.Now()}
}

// Read hands each whole line written since the last read, trimmed of
// surrounding white space, to each with the offset it starts at (nil
// skips them: a continued session's past) and moves Offset past it. An
// unreadable journal reads nothing.
func (t *Tail) Read(each func(pos int64, line []byte)) {
	f, err := os.Open(t.Path)
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.Seek(t.Offset, io.SeekStart); err != nil {
		return
	}
	data, _ := io.ReadAll(f)
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return
		}
		t.Grew = time.Now()
		if each != nil {
			each(t.Offset, bytes.TrimSpace(data[:i]))
		}
		t.Offset += int64(i) + 1
		data = data[i+1:]
	}
}
