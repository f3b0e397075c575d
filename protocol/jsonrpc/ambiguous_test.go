package jsonrpc

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestAmbiguousResponseFailsTheWaitingCall checks that a response carrying
// both a result and an error fails the Call waiting for its id with
// ErrAmbiguousResponse, and that one nobody waits for is malformed.
func TestAmbiguousResponseFailsTheWaitingCall(t *testing.T) {
	h := &recorder{}
	p := newPeer(t, h, Options{})
	done := make(chan error, 1)
	go func() {
		_, err := p.conn.Call(context.Background(), "session/prompt", nil)
		done <- err
	}()
	p.recv()
	p.send(`{"jsonrpc":"2.0","id":0,"result":{"stopReason":"end_turn"},"error":{"code":-32603,"message":"m"}}`)
	if err := <-done; !errors.Is(err, ErrAmbiguousResponse) {
		t.Fatalf("Call = %v, want ErrAmbiguousResponse", err)
	}
	// No one waits for id 7: the line is malformed, the connection goes on.
	p.send(`{"jsonrpc":"2.0","id":7,"result":1,"error":{"code":1,"message":"m"}}`)
	p.send(`{"jsonrpc":"2.0","method":"after"}`)
	for h.notificationCount() == 0 {
		select {
		case <-p.conn.Done():
			t.Fatal("connection ended")
		case <-time.After(time.Millisecond):
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.malformed) != 1 || !errors.Is(h.malformed[0].err, errResultAndError) {
		t.Fatalf("malformed = %+v, want one line with both result and error", h.malformed)
	}
}
