package gemini_measure

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
)

// objectReader reads a file of concatenated JSON values incrementally: each
// call decodes the complete values after the last one it read, and stops
// before a partial trailing value, which the next call reads once it is
// whole. Memory holds one value at a time.
type objectReader struct {
	path   string
	offset int64 // where the next value starts (or whitespace before it)
}

// read calls fn with each complete value after the offset and the offset
// at which the value starts. A missing file reads as empty. A value that
// does not parse (not a partial tail) is skipped up to the next line that
// opens an object.
func (r *objectReader) read(fn func(start int64, raw json.RawMessage)) error {
	f, err := os.Open(r.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		if _, err := f.Seek(r.offset, io.SeekStart); err != nil {
			return err
		}
		base := r.offset
		dec := json.NewDecoder(f)
		for {
			var raw json.RawMessage
			err := dec.Decode(&raw)
			if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil // all read, or a partial tail left for later
			}
			var syn *json.SyntaxError
			if errors.As(err, &syn) {
				next, ok, rerr := r.resync(f, base+max(syn.Offset, 1))
				if rerr != nil {
					return rerr
				}
				if !ok {
					return nil // maybe a tail still being written
				}
				r.offset = next
				break // decode again from the new offset
			}
			if err != nil {
				return err
			}
			end := base + dec.InputOffset()
			start := end - int64(len(raw))
			r.offset = end
			fn(start, raw)
		}
	}
}

// resync finds the next line opening an object ("\n{") at or after from,
// returning the offset of its "{".
func (r *objectReader) resync(f *os.File, from int64) (int64, bool, error) {
	buf := make([]byte, 32<<10)
	pos := from - 1 // include the byte before, which may be the newline
	for {
		n, err := f.ReadAt(buf, pos)
		if i := bytes.Index(buf[:n], []byte("\n{")); i >= 0 {
			return pos + int64(i) + 1, true, nil
		}
		if err == io.EOF || n == 0 {
			return 0, false, nil
		}
		if err != nil {
			return 0, false, err
		}
		pos += int64(n) - 1 // keep one byte: "\n" may end this chunk
	}
}

// size is the file's current size (0 when it does not exist yet).
func size(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}
