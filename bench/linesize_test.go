package bench

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// lineSizes are BenchmarkLineSize's line lengths in bytes, terminator
// included: from a short chunk to just under the 10 MiB line bound.
var lineSizes = []int{100, 1000, 100_000, 1_000_000, 10_000_000}

// BenchmarkLineSize reads lines of one size through the library's read
// path and through the floor, from the same in-memory stream handed out
// in reads of at most 64 KiB (what a pipe gives). One op is one line:
// an agent_message_chunk session/update whose text fills the line.
//
// The library: a jsonrpc.Conn (line reader, envelope scan, dispatch) whose
// handler decodes each notification with acpwire.DecodeSessionUpdate, the
// path every session/update of a session takes before the event mapping.
// The floor: a bufio.Scanner (64 KiB buffer, growing to the same 10 MiB
// bound) and one json.Unmarshal per line into floorLine.
//
// Metrics: ns/B (the library's time per byte), x-floor (the library's
// time over the floor's on the same lines) and MB/s.
func BenchmarkLineSize(b *testing.B) {
	for _, size := range lineSizes {
		b.Run("bytes="+strconv.Itoa(size), func(b *testing.B) {
			line := chunkLine(size)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			// The library and the floor take turns, a tenth of the
			// lines at a time, so that a change in the machine's load
			// during the run weighs on both alike.
			var lib, floor time.Duration
			b.ResetTimer()
			for done := 0; done < b.N; {
				n := max(1, min(b.N-done, b.N/10))
				b.StartTimer()
				start := time.Now()
				got := readLibrary(line, n)
				lib += time.Since(start)
				b.StopTimer()
				if got != n {
					b.Fatalf("library handled %d of %d lines", got, n)
				}
				start = time.Now()
				if got := readFloor(line, n); got != n {
					b.Fatalf("floor handled %d of %d lines", got, n)
				}
				floor += time.Since(start)
				done += n
			}
			b.ReportMetric(float64(lib.Nanoseconds())/float64(int64(b.N)*int64(size)), "ns/B")
			if floor > 0 {
				b.ReportMetric(float64(lib)/float64(floor), "x-floor")
			}
		})
	}
}

// chunkLine is one agent_message_chunk notification of exactly size bytes,
// its '\n' included.
func chunkLine(size int) []byte {
	head := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"ref-1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m-1","content":{"type":"text","text":"`
	tail := `"}}}}` + "\n"
	fill := size - len(head) - len(tail)
	if fill < 1 {
		fill = 1
	}
	return []byte(head + strings.Repeat("x", fill) + tail)
}

// repeatReader hands out n copies of line, at most 64 KiB per Read.
type repeatReader struct {
	line []byte
	left int // copies still to start
	off  int // offset in the current copy
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if len(p) > 64<<10 {
		p = p[:64<<10]
	}
	n := 0
	for n < len(p) {
		if r.off == 0 {
			if r.left == 0 {
				break
			}
			r.left--
		}
		c := copy(p[n:], r.line[r.off:])
		n += c
		r.off += c
		if r.off == len(r.line) {
			r.off = 0
		}
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// countingHandler decodes every session/update the way a session does and
// counts the chunks.
type countingHandler struct {
	chunks int
	bad    int
}

func (h *countingHandler) HandleNotification(method string, params json.RawMessage) {
	if method != acpwire.MethodSessionUpdate {
		return
	}
	_, u, err := acpwire.DecodeSessionUpdate(params)
	if err != nil || u.Chunk == nil {
		h.bad++
		return
	}
	h.chunks++
}

func (h *countingHandler) HandleRequest(jsonrpc.Request) { h.bad++ }
func (h *countingHandler) HandleMalformed([]byte, error) { h.bad++ }
func (h *countingHandler) HandleOversize(int64)          { h.bad++ }

// readLibrary reads n copies of line through a jsonrpc.Conn and returns
// the chunks its handler decoded.
func readLibrary(line []byte, n int) int {
	h := &countingHandler{}
	c := jsonrpc.NewConn(&repeatReader{line: line, left: n}, io.Discard, h, jsonrpc.Options{})
	<-c.Done()
	_ = c.Close()
	c.Wait()
	return h.chunks
}

// readFloor reads n copies of line through the floor's loop.
func readFloor(line []byte, n int) int { return floorLoop(&repeatReader{line: line, left: n}) }

// floorLoop is the floor's read loop over r.
func floorLoop(r io.Reader) int {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), floorMaxLine+1)
	n := 0
	for sc.Scan() {
		var m floorLine
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Params.Update.SessionUpdate == "agent_message_chunk" {
			n++
		}
	}
	return n
}
