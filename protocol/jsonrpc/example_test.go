package jsonrpc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// printer is a Handler that prints what the agent sends.
type printer struct{}

func (printer) HandleNotification(method string, params json.RawMessage) {
	// params is only valid during this call; printing it is fine.
	fmt.Println("notification", method, string(params))
}

func (printer) HandleRequest(req jsonrpc.Request) {
	fmt.Println("request", req.ID, req.Method)
}

func (printer) HandleMalformed(line []byte, err error) {
	fmt.Printf("malformed %q: %v\n", line, err)
}

func (printer) HandleOversize(n int64) {
	fmt.Println("discarded a line of", n, "bytes")
}

// A client calls session/prompt on an agent; the agent streams an update
// before it answers, and the client then stops it. Two io.Pipe pairs stand
// in for the agent's stdin and stdout.
func Example() {
	agentStdoutR, agentStdoutW := io.Pipe()
	agentStdinR, agentStdinW := io.Pipe()

	// The agent answers the first request, streaming one update first.
	agentDone := make(chan struct{})
	go func() {
		defer close(agentDone)
		defer agentStdoutW.Close() // like an agent exiting
		in := bufio.NewScanner(agentStdinR)
		if !in.Scan() {
			return
		}
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(in.Bytes(), &req)
		fmt.Fprintln(agentStdoutW, `{"jsonrpc":"2.0","method":"session/update","params":{"text":"hello"}}`)
		fmt.Fprintf(agentStdoutW, `{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"end_turn"}}`+"\n", req.ID)
		// Then it reads its stdin until the client closes it.
		for in.Scan() {
			var msg struct {
				Method string `json:"method"`
			}
			_ = json.Unmarshal(in.Bytes(), &msg)
			fmt.Println("agent got", msg.Method)
		}
	}()

	conn := jsonrpc.NewConn(agentStdoutR, agentStdinW, printer{}, jsonrpc.Options{})
	result, err := conn.Call(context.Background(), "session/prompt", map[string]string{"sessionId": "s1"})
	if err != nil {
		fmt.Println("call failed:", err)
		return
	}
	// Every update sent before the response has been handled by now.
	fmt.Println("result", string(result))

	// Tell the agent it may stop; every write is bounded by its context.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := conn.Notify(ctx, "session/cancel", map[string]string{"sessionId": "s1"}); err != nil {
		fmt.Println("notify failed:", err)
	}

	// The owner's contract: Close, close the agent's stdin, let its stdout
	// end, Wait.
	_ = conn.Close()
	_ = agentStdinW.Close()
	<-agentDone
	conn.Wait()
	fmt.Println("ended:", conn.Err())
	// Output:
	// notification session/update {"text":"hello"}
	// result {"stopReason":"end_turn"}
	// agent got session/cancel
	// ended: EOF
}
