package netdial

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/internal/netwire"
)

// fakeHTTP is a Streamable HTTP server of two events, each on a stream
// of its own: the first stream drops after event 0, and the reopened one
// must ask for what follows it. The token is "right".
type fakeHTTP struct {
	mu      sync.Mutex
	lasts   []string // Last-Event-ID of each GET
	deleted bool
	gone    bool // answer GET 409
}

func (f *fakeHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer right" {
		http.Error(w, "no", http.StatusUnauthorized)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.Method {
	case http.MethodPost:
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"initialize"`) {
			w.Header().Set(netwire.HeaderConnection, "c1")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":0,"result":{}}`)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	case http.MethodGet:
		if r.Header.Get(netwire.HeaderConnection) != "c1" {
			http.Error(w, "unknown", http.StatusNotFound)
			return
		}
		last := r.Header.Get(netwire.HeaderLastEventID)
		f.lasts = append(f.lasts, last)
		if f.gone {
			http.Error(w, "gone", http.StatusConflict)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		switch last {
		case "":
			_ = netwire.WriteEvent(w, 0, []byte(`{"n":0}`)) // then the stream drops
		case "0":
			_ = netwire.WriteEvent(w, 1, []byte(`{"n":1}`))
			f.gone = true // a later reopen finds nothing held
		}
	case http.MethodDelete:
		f.deleted = true
		w.WriteHeader(http.StatusNoContent)
	}
}

// TestStreamableHTTP: the initialize answer on its POST, the event
// stream reopened after Last-Event-ID (nothing lost, nothing twice), a
// 409 ending the connection, DELETE at close.
func TestStreamableHTTP(t *testing.T) {
	f := &fakeHTTP{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p, err := start(t, Options{URL: srv.URL + "/acp", TokenEnv: "T", Getenv: func(string) string { return "right" }})
	require.NoError(t, err)
	_, err = p.Stdin().Write([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize"}` + "\n"))
	require.NoError(t, err)
	r := bufio.NewReader(p.Stdout())
	var got []string
	for range 3 {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		got = append(got, strings.TrimSpace(line))
	}
	assert.Equal(t, []string{`{"jsonrpc":"2.0","id":0,"result":{}}`, `{"n":0}`, `{"n":1}`}, got)
	_, err = r.ReadString('\n')
	assert.ErrorIs(t, err, io.EOF, "the 409 ends the connection")
	<-p.Exited()
	assert.Contains(t, p.Exit().Message, "409")
	f.mu.Lock()
	assert.Equal(t, []string{"", "0", "1"}, f.lasts[:3])
	f.mu.Unlock()
	require.NoError(t, p.Stdin().Close())
	require.NoError(t, p.Release())
}

// TestStreamableHTTPTokenRefused: the 401 answers initialize with the
// variable named.
func TestStreamableHTTPTokenRefused(t *testing.T) {
	srv := httptest.NewServer(&fakeHTTP{})
	defer srv.Close()
	p, err := start(t, Options{URL: srv.URL + "/acp", TokenEnv: "HTTP_TOKEN", Getenv: func(string) string { return "wrong" }})
	require.NoError(t, err)
	_, err = p.Stdin().Write([]byte(`{"jsonrpc":"2.0","id":7,"method":"initialize"}` + "\n"))
	require.NoError(t, err)
	line, err := bufio.NewReader(p.Stdout()).ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"error":{"code":-32001,"message":"%s held in HTTP_TOKEN (401 Unauthorized)"}}`+"\n", MsgTokenRefused), line)
	require.NoError(t, p.Stdin().Close())
	require.NoError(t, p.Release())
}

// TestStreamableHTTPSendsAgainOnADeadConnection: a POST whose reused
// keep-alive connection dies before its answer (here the server drops it
// once it read the message, as a cut link) is sent again on a new
// connection with the same Idempotency-Key, and the write succeeds. (A
// POST on a connection dialled for it is not sent again: whether it went
// on a reused one is the HTTP client's choice, so the server drops the
// first that came on a connection which had served a request before, and
// the test writes until one did.)
func TestStreamableHTTPSendsAgainOnADeadConnection(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	served := map[string]int{} // requests served per connection (its remote address)
	dropped := ""
	stop := make(chan struct{}) // ends the event stream: DELETE, or the test's end
	var stopOnce sync.Once
	end := func() { stopOnce.Do(func() { close(stop) }) }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		served[r.RemoteAddr]++
		reused := served[r.RemoteAddr] > 1
		mu.Unlock()
		switch r.Method {
		case http.MethodPost:
			body, _ := io.ReadAll(r.Body)
			if strings.Contains(string(body), `"initialize"`) {
				w.Header().Set(netwire.HeaderConnection, "c1")
				_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":0,"result":{}}`)
				return
			}
			key := r.Header.Get(netwire.HeaderIdempotencyKey)
			mu.Lock()
			keys = append(keys, key)
			drop := dropped == "" && reused
			if drop {
				dropped = key
			}
			mu.Unlock()
			if drop {
				c, _, err := http.NewResponseController(w).Hijack()
				if assert.NoError(t, err) {
					_ = c.Close()
				}
				return
			}
			w.WriteHeader(http.StatusAccepted)
		case http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			select { // the stream ends with the connection
			case <-stop:
			case <-r.Context().Done():
			}
		case http.MethodDelete:
			end()
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	defer srv.Close()
	defer end() // before the server's Close, which waits for the stream
	p, err := start(t, Options{URL: srv.URL + "/acp"})
	require.NoError(t, err)
	_, err = p.Stdin().Write([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize"}` + "\n"))
	require.NoError(t, err)
	sc := bufio.NewScanner(p.Stdout())
	require.True(t, sc.Scan())
	for range 3 {
		_, err = p.Stdin().Write([]byte(`{"jsonrpc":"2.0","method":"session/cancel","params":{}}` + "\n"))
		require.NoError(t, err, "sent again on a new connection")
		mu.Lock()
		done := dropped != ""
		mu.Unlock()
		if done {
			break
		}
	}
	mu.Lock()
	require.NotEmpty(t, dropped, "no POST came on a reused connection: %v", served)
	count := map[string]int{}
	for _, k := range keys {
		assert.NotEmpty(t, k)
		count[k]++
	}
	assert.Equal(t, 2, count[dropped], "the dropped message, sent again with the same key: %v", keys)
	assert.Len(t, count, len(keys)-1, "every other message once: %v", keys)
	mu.Unlock()
	require.NoError(t, p.Stdin().Close())
	for sc.Scan() {
	}
	require.NoError(t, p.Release())
}
