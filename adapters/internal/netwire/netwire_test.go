package netwire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Address
		wantErr string
	}{
		{"tcp://127.0.0.1:7000", Address{SchemeTCP, "127.0.0.1:7000", "tcp://127.0.0.1:7000"}, ""},
		{"unix:/run/acp.sock", Address{SchemeUnix, "/run/acp.sock", "unix:/run/acp.sock"}, ""},
		{"unix:///run/acp.sock", Address{SchemeUnix, "/run/acp.sock", "unix:/run/acp.sock"}, ""},
		{"ws://127.0.0.1:9/acp", Address{SchemeWS, "127.0.0.1:9", "ws://127.0.0.1:9/acp"}, ""},
		{"https://example.invalid/acp", Address{SchemeHTTPS, "example.invalid", "https://example.invalid/acp"}, ""},
		{"tcp://127.0.0.1", Address{}, "names no HOST:PORT"},
		{"tcp://127.0.0.1:1/x", Address{}, "has no path"},
		{"unix:", Address{}, "names no socket path"},
		{"127.0.0.1:80", Address{}, "is not one of tcp://HOST:PORT"},
		{"h:80", Address{}, `scheme "h"`},
		{"ftp://h:1", Address{}, `scheme "ftp"`},
		{"ws://", Address{}, "names no host"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Parse(tc.in)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:0": true, "localhost:80": true, "[::1]:9": true, "127.1.2.3": true,
		"0.0.0.0:0": false, "10.0.0.1:80": false, "example.invalid:80": false, ":8080": false,
	} {
		assert.Equal(t, want, Loopback(host), host)
	}
}

func TestAnswerAndTokenRequest(t *testing.T) {
	assert.Equal(t, `{"jsonrpc":"2.0","id":"acpdrive-token","method":"_acpdrive/token","params":{"token":"t\"k"}}`+"\n", string(TokenRequest(`t"k`)))
	assert.Equal(t, `{"jsonrpc":"2.0","id":3,"result":{}}`+"\n", string(Answer([]byte("3"), "")))
	assert.Equal(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"no"}}`+"\n", string(Answer(nil, "no")))
}

func TestReadLine(t *testing.T) {
	r := bufio.NewReaderSize(strings.NewReader("a\r\n\nbb\nlast"), 16)
	var got []string
	for {
		l, err := ReadLine(r)
		if err != nil {
			assert.ErrorIs(t, err, io.EOF)
			break
		}
		got = append(got, string(l))
	}
	assert.Equal(t, []string{"a", "", "bb", "last"}, got)

	long := bufio.NewReader(strings.NewReader(strings.Repeat("x", MaxMessageBytes+2) + "\nnext\n"))
	_, err := ReadLine(long)
	assert.ErrorIs(t, err, ErrTooLong)
	next, err := ReadLine(long)
	require.NoError(t, err)
	assert.Equal(t, "next", string(next), "the long line is discarded whole")
}

// TestFramesRoundTrip: lines written through a LineWriter come out of a
// FrameReader as the same lines, whatever the write boundaries.
func TestFramesRoundTrip(t *testing.T) {
	var frames [][]byte
	w := &LineWriter{Send: func(m []byte) error { frames = append(frames, bytes.Clone(m)); return nil }}
	for _, chunk := range []string{`{"a":1}`, "\n{\"b\"", ":2}\r\n\n", `{"c":3}` + "\n"} {
		n, err := w.Write([]byte(chunk))
		require.NoError(t, err)
		assert.Equal(t, len(chunk), n)
	}
	assert.Equal(t, [][]byte{[]byte(`{"a":1}`), []byte(`{"b":2}`), []byte(`{"c":3}`)}, frames)

	i := 0
	r := &FrameReader{Next: func() ([]byte, error) {
		if i == len(frames) {
			return nil, io.EOF
		}
		i++
		return frames[i-1], nil
	}}
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.Equal(t, "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n", string(out))

	broken := &LineWriter{Send: func([]byte) error { return errors.New("gone") }}
	_, err = broken.Write([]byte("x\n"))
	assert.EqualError(t, err, "gone")
}

func TestEvents(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteEvent(&b, 7, []byte(`{"a":1}`)))
	b.WriteString(": a comment\nevent: message\ndata: x\ndata: y\n\nid: 9\n\ndata: last")
	r := bufio.NewReader(&b)
	for _, want := range []Event{{"7", []byte(`{"a":1}`)}, {"", []byte("x\ny")}, {"9", []byte("last")}} {
		ev, err := ReadEvent(r)
		require.NoError(t, err)
		assert.Equal(t, want, ev)
	}
	_, err := ReadEvent(r)
	assert.ErrorIs(t, err, io.EOF)
}
