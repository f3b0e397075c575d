package bench

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
// The library: one jsonrpc.Conn (line reader, envelope scan, dispatch)
// whose handler decodes each notification with acpwire.DecodeSessionUpdate,
// the path every session/update of a session takes before the event
// mapping. The floor: one bufio.Scanner (64 KiB buffer, growing to the same
// 10 MiB bound) and one json.Unmarshal per line into floorLine. Each reads
// one stream for the whole benchmark, like a session reads its runtime.
//
// Metrics: ns/B (the library's time per byte), x-floor (the library's
// time over the floor's on the same lines) and MB/s.
func BenchmarkLineSize(b *testing.B) {
	for _, size := range lineSizes {
		b.Run("bytes="+strconv.Itoa(size), func(b *testing.B) {
			line := chunkLine(size)
			lib, floor := startLibraryReader(line), startFloorReader(line)
			defer lib.close()
			defer floor.close()
			b.SetBytes(int64(size))
			b.ReportAllocs()
			// The library and the floor take turns, a tenth of the
			// lines at a time, so that a change in the machine's load
			// during the run weighs on both alike.
			var libTime, floorTime time.Duration
			b.ResetTimer()
			for done := 0; done < b.N; {
				n := max(1, min(b.N-done, b.N/10))
				b.StartTimer()
				libTime += lib.read(n)
				b.StopTimer()
				floorTime += floor.read(n)
				done += n
			}
			b.ReportMetric(float64(libTime.Nanoseconds())/float64(int64(b.N)*int64(size)), "ns/B")
			if floorTime > 0 {
				b.ReportMetric(float64(libTime)/float64(floorTime), "x-floor")
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

// gate is a stream of copies of one line that a benchmark releases a
// round at a time: a Read past the released copies waits for the next
// round (EOF once rounds is closed).
type gate struct {
	rounds chan int
	cur    repeatReader
}

func (g *gate) Read(p []byte) (int, error) {
	for g.cur.left == 0 && g.cur.off == 0 {
		n, ok := <-g.rounds
		if !ok {
			return 0, io.EOF
		}
		g.cur.left = n
	}
	return g.cur.Read(p)
}

// roundReader is one reader of a gate: read releases n lines and waits
// until all of them were handled.
type roundReader struct {
	g      *gate
	target atomic.Int64 // lines to handle before done fires
	n      int64        // lines handled (the reading goroutine's)
	done   chan struct{}
	wait   func() // waits for the reading goroutine's end
}

func newRoundReader(line []byte) *roundReader {
	return &roundReader{g: &gate{rounds: make(chan int), cur: repeatReader{line: line}}, done: make(chan struct{}, 1)}
}

// handled counts one line on the reading goroutine.
func (r *roundReader) handled() {
	r.n++
	if r.n == r.target.Load() {
		r.done <- struct{}{}
	}
}

// read releases n lines and returns how long they took to be handled.
func (r *roundReader) read(n int) time.Duration {
	r.target.Add(int64(n))
	start := time.Now()
	r.g.rounds <- n
	<-r.done
	return time.Since(start)
}

func (r *roundReader) close() {
	close(r.g.rounds)
	r.wait()
}

// startLibraryReader reads a gate through one jsonrpc.Conn.
func startLibraryReader(line []byte) *roundReader {
	r := newRoundReader(line)
	h := &countingHandler{chunk: r.handled}
	c := jsonrpc.NewConn(r.g, io.Discard, h, jsonrpc.Options{})
	r.wait = func() {
		<-c.Done()
		_ = c.Close()
		c.Wait()
	}
	return r
}

// startFloorReader reads a gate through the floor's loop.
func startFloorReader(line []byte) *roundReader {
	r := newRoundReader(line)
	var wg sync.WaitGroup
	wg.Go(func() { floorLoop(r.g, r.handled) })
	r.wait = wg.Wait
	return r
}

// countingHandler decodes every session/update the way a session does and
// calls chunk for each chunk.
type countingHandler struct {
	chunk func()
}

func (h *countingHandler) HandleNotification(method string, params json.RawMessage) {
	if method != acpwire.MethodSessionUpdate {
		return
	}
	if _, u, err := acpwire.DecodeSessionUpdate(params); err == nil && u.Chunk != nil {
		h.chunk()
	}
}

func (h *countingHandler) HandleRequest(jsonrpc.Request) {}
func (h *countingHandler) HandleMalformed([]byte, error) {}
func (h *countingHandler) HandleOversize(int64)          {}

// floorLoop is the floor's read loop over r, calling chunk for each chunk.
func floorLoop(r io.Reader, chunk func()) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), floorMaxLine+1)
	for sc.Scan() {
		var m floorLine
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Params.Update.SessionUpdate == "agent_message_chunk" {
			chunk()
		}
	}
}
