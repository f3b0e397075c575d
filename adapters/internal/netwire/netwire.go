// Package netwire is what both ends of acpdrive's network transport share
// (docs/behaviour.md#network): the address grammar, the bearer token's
// exchange on a byte stream, and the conversion between newline-delimited
// JSON-RPC (what a runtime speaks on stdio) and one message per frame (a
// WebSocket). Only adapters import it (test/imports_test.go).
package netwire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
)

// Schemes of an address (docs/behaviour.md#network).
const (
	SchemeTCP   = "tcp"
	SchemeUnix  = "unix"
	SchemeWS    = "ws"
	SchemeWSS   = "wss"
	SchemeHTTP  = "http"
	SchemeHTTPS = "https"
)

// Path is where a server answers a WebSocket, as qwen serve does.
const Path = "/acp"

// MaxMessageBytes bounds one message either way. It is above the JSON-RPC
// reader's own line bound (10 MiB), so a longer line still reaches the
// client, which discards and reports it as over stdio
// (docs/behaviour.md#events).
const MaxMessageBytes = 64 << 20

// Address is a parsed network address of a runtime.
type Address struct {
	// Scheme is one of the Scheme constants.
	Scheme string
	// Host is HOST:PORT for tcp, ws and http; the socket path for unix.
	Host string
	// URL is the address as a client dials it.
	URL string
}

// Stream reports whether the address carries newline-delimited JSON-RPC
// on a byte stream (tcp, unix).
func (a Address) Stream() bool { return a.Scheme == SchemeTCP || a.Scheme == SchemeUnix }

// Network is the net package's name of a stream address's network.
func (a Address) Network() string { return a.Scheme }

// forms are the address forms, for messages.
const forms = "tcp://HOST:PORT, unix:PATH, ws://…, wss://…, http://…, https://…"

// Parse reads addr: tcp://HOST:PORT, unix:PATH (or unix://PATH), ws://…,
// wss://…, http://… or https://…. The error says what is wrong in words
// for the operator.
func Parse(addr string) (Address, error) {
	if rest, ok := strings.CutPrefix(addr, "unix:"); ok {
		path := strings.TrimPrefix(rest, "//")
		if path == "" {
			return Address{}, fmt.Errorf("address %q names no socket path (unix:PATH)", addr)
		}
		return Address{Scheme: SchemeUnix, Host: path, URL: "unix:" + path}, nil
	}
	u, err := url.Parse(addr)
	if err != nil {
		return Address{}, fmt.Errorf("address %q is not one of %s", addr, forms)
	}
	switch u.Scheme {
	case SchemeTCP:
		if u.Port() == "" || u.Hostname() == "" {
			return Address{}, fmt.Errorf("address %q names no HOST:PORT (tcp://HOST:PORT)", addr)
		}
		if u.Path != "" && u.Path != "/" {
			return Address{}, fmt.Errorf("address %q: a tcp address has no path", addr)
		}
		return Address{Scheme: SchemeTCP, Host: u.Host, URL: "tcp://" + u.Host}, nil
	case SchemeWS, SchemeWSS, SchemeHTTP, SchemeHTTPS:
		if u.Host == "" {
			return Address{}, fmt.Errorf("address %q names no host", addr)
		}
		return Address{Scheme: u.Scheme, Host: u.Host, URL: u.String()}, nil
	case "":
		return Address{}, fmt.Errorf("address %q has no scheme: want one of %s", addr, forms)
	}
	return Address{}, fmt.Errorf("address %q: scheme %q is not one of %s", addr, u.Scheme, forms)
}

// Loopback reports whether host (HOST or HOST:PORT) is a loopback
// address or "localhost".
func Loopback(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// The bearer token on a byte stream (tcp, unix): the client's first line
// is a request of TokenMethod with the token, which the server answers
// before anything else; without it, a server that needs a token answers
// the first request with CodeUnauthorized and closes the connection.
const (
	// TokenMethod is the extension method carrying the token.
	TokenMethod = "_acpdrive/token"
	// TokenRequestID is the id of the token request.
	TokenRequestID = "acpdrive-token"
	// CodeUnauthorized is the JSON-RPC error code of a refused or missing
	// token.
	CodeUnauthorized = -32001
	// MsgTokenRefused is the server's word for a wrong token.
	MsgTokenRefused = "the bearer token was refused"
	// MsgTokenRequired is the server's word for a missing token.
	MsgTokenRequired = "this server requires a bearer token; none was given"
)

// TokenRequest is the first line a client sends on a byte stream when it
// has a token.
func TokenRequest(token string) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      string `json:"id"`
		Method  string `json:"method"`
		Params  struct {
			Token string `json:"token"`
		} `json:"params"`
	}{JSONRPC: "2.0", ID: TokenRequestID, Method: TokenMethod, Params: struct {
		Token string `json:"token"`
	}{token}})
	return append(b, '\n')
}

// Message is the part of a JSON-RPC message the token exchange reads.
type Message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params struct {
		Token string `json:"token"`
	} `json:"params"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// Answer is a JSON-RPC answer to id: an empty result when msg is "",
// else an error of CodeUnauthorized with msg; newline-terminated.
func Answer(id json.RawMessage, msg string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	var b []byte
	if msg == "" {
		b, _ = json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  struct{}        `json:"result"`
		}{JSONRPC: "2.0", ID: id})
	} else {
		type rpcErr struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		b, _ = json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   rpcErr          `json:"error"`
		}{JSONRPC: "2.0", ID: id, Error: rpcErr{CodeUnauthorized, msg}})
	}
	return append(b, '\n')
}

// ErrTooLong is returned by ReadLine for a line over MaxMessageBytes.
var ErrTooLong = errors.New("a message is longer than the transport's bound")

// ReadLine reads one line without its terminator; a line over
// MaxMessageBytes is read to its end and discarded, and ErrTooLong
// returned. A last line without terminator is returned with io.EOF only
// when empty. The line may be r's own buffer: it is valid until the next
// read of r.
func ReadLine(r *bufio.Reader) ([]byte, error) {
	frag, err := r.ReadSlice('\n')
	if err == nil {
		return bytes.TrimRight(frag[:len(frag)-1], "\r"), nil // the common case: no copy
	}
	line := append([]byte(nil), frag...)
	for {
		if err == nil {
			return bytes.TrimRight(line[:len(line)-1], "\r"), nil
		}
		if err != bufio.ErrBufferFull {
			break
		}
		frag, err = r.ReadSlice('\n')
		line = append(line, frag...)
		if len(line) > MaxMessageBytes+1 {
			for err == bufio.ErrBufferFull {
				_, err = r.ReadSlice('\n')
			}
			if err != nil && err != io.EOF {
				return nil, err
			}
			return nil, ErrTooLong
		}
	}
	if len(line) > 0 && err == io.EOF {
		return bytes.TrimRight(line, "\r"), nil
	}
	return nil, err
}

// FrameReader presents messages from Next as newline-delimited lines.
type FrameReader struct {
	// Next returns the next message; its error ends the stream.
	Next func() ([]byte, error)
	buf  []byte // the message and its terminator, reused
	off  int    // how much of buf was read
	err  error
}

// Read implements io.Reader.
func (f *FrameReader) Read(p []byte) (int, error) {
	for f.off == len(f.buf) {
		if f.err != nil {
			return 0, f.err
		}
		msg, err := f.Next()
		if err != nil {
			f.err = err
			continue
		}
		msg = bytes.TrimRight(msg, "\r\n")
		if len(msg) == 0 {
			continue
		}
		f.buf, f.off = append(append(f.buf[:0], msg...), '\n'), 0
	}
	n := copy(p, f.buf[f.off:])
	f.off += n
	return n, nil
}

// LineWriter sends every complete line written to it as one message
// through Send (without the terminator). It is safe for concurrent use.
type LineWriter struct {
	// Send sends one message.
	Send func(msg []byte) error
	mu   sync.Mutex
	buf  []byte
}

// Write implements io.Writer: the bytes count as written once every
// complete line among them was sent.
func (w *LineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		line := bytes.TrimRight(w.buf[:i], "\r")
		if len(line) > 0 {
			if err := w.Send(line); err != nil {
				w.buf = w.buf[:0]
				return 0, err
			}
		}
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > MaxMessageBytes {
		w.buf = w.buf[:0]
		return 0, ErrTooLong
	}
	return len(p), nil
}
