package fakes

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHoldStreamingFakes: on the Anthropic and OpenAI Responses fakes a
// held reply streams its first text chunk and waits: released, the rest
// of the reply and its end follow; never released, the stream does not
// end on its own (the client gives up).
func TestHoldStreamingFakes(t *testing.T) {
	cases := []struct {
		name, path, body, first, second string
		server                          func() *Server
	}{
		{"anthropic", "/v1/messages", `{"model":"m","stream":true}`, `"text":"first "`, `"text":"second"`, NewAnthropic},
		{"openai", "/v1/responses", `{"model":"m","stream":true}`, `"delta":"first "`, `"delta":"second"`, NewOpenAI},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hold := make(chan struct{})
			s := c.server().Script(Reply{Text: []string{"first ", "second"}, Hold: hold})
			defer s.Close()
			resp := post(t, s.URL()+c.path, c.body, nil)
			r := bufio.NewReader(resp.Body)
			var before strings.Builder
			for !strings.Contains(before.String(), c.first) {
				line, err := r.ReadString('\n')
				require.NoError(t, err, "the first chunk is streamed: %s", before.String())
				before.WriteString(line)
			}
			assert.NotContains(t, before.String(), c.second, "held after the first chunk")
			close(hold)
			rest, err := io.ReadAll(r)
			require.NoError(t, err)
			assert.Contains(t, string(rest), c.second, "released: the rest follows")

			gone := make(chan struct{})
			defer close(gone)
			s.Script(Reply{Text: []string{"never ", "finished"}, Hold: gone})
			client := &http.Client{Timeout: 300 * time.Millisecond}
			req, err := http.NewRequest(http.MethodPost, s.URL()+c.path, strings.NewReader(c.body))
			require.NoError(t, err)
			held, err := client.Do(req)
			if err == nil {
				_, err = io.ReadAll(held.Body)
				held.Body.Close()
			}
			assert.Error(t, err, "the held stream does not end on its own")
			assert.Len(t, s.ModelCalls(), 2)
		})
	}
}
