package app

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// heldProc is a held link for the follower's accounting: what the resume
// counted, and what the follower writes.
type heldProc struct {
	ports.Process // only Stdin and ResumedReceived are used
	received      int64
	wrote         bytes.Buffer
}

func (p *heldProc) Stdin() io.WriteCloser               { return nopCloser{&p.wrote} }
func (p *heldProc) ResumedReceived() (int64, bool)      { return p.received, true }
func (nopCloser) Close() error                          { return nil }
func (n nopCloser) Write(b []byte) (int, error)         { return n.w.Write(b) }
func (p *heldProc) messages(t *testing.T) []heldMessage { return decodeLines(t, p.wrote.String()) }

type nopCloser struct{ w io.Writer }

func decodeLines(t *testing.T, s string) []heldMessage {
	t.Helper()
	var out []heldMessage
	for l := range strings.SplitSeq(strings.TrimSpace(s), "\n") {
		if l == "" {
			continue
		}
		var m heldMessage
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		out = append(out, m)
	}
	return out
}

// The held messages of a session s-1 whose first client sent
// initialize (id 0), session/new (id 1) and the first prompt (id 2).
const (
	heldInit   = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`
	heldNew    = `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s-1"}}`
	heldChunk  = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`
	heldEnd    = `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`
	heldAsk    = `{"jsonrpc":"2.0","id":"p-1","method":"session/request_permission","params":{"sessionId":"s-1","toolCall":{"toolCallId":"t-1","title":"Read a.txt","kind":"read"},"options":[{"optionId":"yes","name":"Yes","kind":"allow_once"},{"optionId":"no","name":"No","kind":"reject_once"}]}}`
	heldCancel = `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}`
)

// TestHeldFollowerAccounting: which prompts and which request answers a
// follower sends, from the held messages and the resume's count of the
// earlier client's messages (docs/behaviour.md#held-prompts).
func TestHeldFollowerAccounting(t *testing.T) {
	for _, tc := range []struct {
		name     string
		held     []string
		received int64
		// methods are what the follower writes: the method of a request,
		// "answer <id>" for an answer.
		methods  []string
		prompt   string // the text of the prompt it sends, when it sends one
		finished bool
	}{
		{"mid-turn: the second prompt follows the first's answer", []string{heldInit, heldNew, heldChunk, heldEnd}, 3,
			[]string{"session/prompt"}, "second", false},
		{"the second prompt already sent: none", []string{heldInit, heldNew, heldChunk, heldEnd}, 4,
			nil, "", false},
		{"killed before the first prompt: both sent in turn", []string{heldInit, heldNew}, 2,
			[]string{"session/prompt"}, "first", false},
		{"a request nobody answered: answered", []string{heldInit, heldNew, heldChunk, heldAsk}, 3,
			[]string{"answer p-1"}, "", false},
		{"a request the earlier client answered: not again", []string{heldInit, heldNew, heldChunk, heldAsk}, 4,
			nil, "", false},
		{"a turn that did not complete ends the run", []string{heldInit, heldNew, heldCancel}, 4,
			nil, "", true},
		{"an error answer to the prompt under way ends the run", []string{heldInit, heldNew,
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"boom"}}`}, 3, nil, "", true},
		{"answers and a request after a completed turn", []string{heldInit, heldNew, heldAsk, heldChunk, heldEnd}, 5,
			nil, "", false},
		{"the first client answered the request, not the second prompt", []string{heldInit, heldNew, heldAsk, heldChunk, heldEnd}, 4,
			[]string{"session/prompt"}, "second", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &heldProc{received: tc.received}
			f := newHeldFollower(AttachOptions{Prompts: []string{"first", "second"}, Clock: systemClock{},
				Logger: slog.New(slog.DiscardHandler), PermissionPolicy: domain.PermissionPolicy{Preset: domain.PresetRead}}, p)
			for _, l := range tc.held {
				var m heldMessage
				require.NoError(t, json.Unmarshal([]byte(l), &m))
				f.step(m)
			}
			var got []string
			for _, m := range p.messages(t) {
				if m.Method != "" {
					got = append(got, m.Method)
					var params struct {
						SessionID string `json:"sessionId"`
						Prompt    []struct{ Text string }
					}
					require.NoError(t, json.Unmarshal(m.Params, &params))
					assert.Equal(t, "s-1", params.SessionID)
					require.Len(t, params.Prompt, 1)
					assert.Equal(t, tc.prompt, params.Prompt[0].Text)
					continue
				}
				var id string
				require.NoError(t, json.Unmarshal(m.ID, &id))
				got = append(got, "answer "+id)
				assert.Contains(t, string(m.Result), `"yes"`, "answered with the follower's policy (read: allow)")
			}
			assert.Equal(t, tc.methods, got)
			assert.Equal(t, tc.finished, f.finished)
		})
	}
}
