package jsonrpc

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

// chunkLines returns realistic ACP session/update agent_message_chunk lines,
// as an agent streaming a reply would send them.
func chunkLines(n int) [][]byte {
	words := strings.Fields(`I'll start by reading the configuration loader, then trace how the
		"timeout" value flows into the HTTP client. The bug is in retry.go: the backoff
		resets after every attempt, so the total wait never exceeds 2s. Here is a patch:
		func (r *Retrier) Next() time.Duration { r.n++; return min(r.base<<r.n, r.max) }`)
	lines := make([][]byte, n)
	for i := range lines {
		text := strings.Join(words[i%len(words):min(len(words), i%len(words)+8)], " ")
		if i%5 == 0 {
			text += "\n\n"
		}
		params := map[string]any{
			"sessionId": "sess_7f3a9c2e41b04d8a9e5f",
			"update": map[string]any{
				"sessionUpdate": "agent_message_chunk",
				"messageId":     fmt.Sprintf("msg_agent_%08x", i/20),
				"content":       map[string]any{"type": "text", "text": text},
			},
		}
		p, err := json.Marshal(params)
		if err != nil {
			panic(err)
		}
		lines[i] = fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"session/update","params":%s}`+"\n", p)
	}
	return lines
}

// countingHandler counts notifications and touches their params.
type countingHandler struct {
	n     int
	bytes int
}

func (h *countingHandler) HandleNotification(_ string, params json.RawMessage) {
	h.n++
	h.bytes += len(params)
}
func (h *countingHandler) HandleRequest(Request)         {}
func (h *countingHandler) HandleMalformed([]byte, error) {}
func (h *countingHandler) HandleOversize(int64)          {}

// BenchmarkNotifications measures inbound notifications per second through an
// os.Pipe, with a writer goroutine producing agent_message_chunk lines.
func BenchmarkNotifications(b *testing.B) {
	lines := chunkLines(256)
	var size int
	for _, l := range lines {
		size += len(l)
	}
	b.SetBytes(int64(size / len(lines)))
	b.ReportAllocs()

	r, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	h := &countingHandler{}
	b.ResetTimer()
	c := NewConn(r, io.Discard, h, Options{})
	writeErr := make(chan error, 1)
	go func() {
		defer w.Close()
		bw := bufio.NewWriterSize(w, 64<<10)
		for i := range b.N {
			if _, err := bw.Write(lines[i%len(lines)]); err != nil {
				writeErr <- err
				return
			}
		}
		writeErr <- bw.Flush()
	}()
	c.Wait()
	b.StopTimer()
	_ = r.Close()
	if err := <-writeErr; err != nil {
		b.Fatal(err)
	}
	if h.n != b.N {
		b.Fatalf("handled %d of %d notifications", h.n, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "notifs/s")
}

// BenchmarkDispatch measures the per-line cost without the pipe.
func BenchmarkDispatch(b *testing.B) {
	lines := chunkLines(256)
	h := &countingHandler{}
	c := &Conn{h: h, pending: map[int64]*Pending{}}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		l := lines[i%len(lines)]
		c.dispatch(l[:len(l)-1])
	}
}
