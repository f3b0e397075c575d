//go:build interop

package interop

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/mcpresult"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// withResultToolOverHTTP asks for a structured result through acpdrive's
// result tool served from this process over HTTP: no binary is
// re-executed (docs/behaviour.md#structured-results).
func withResultToolOverHTTP() optFn {
	return func(o *app.Options) {
		o.Settings.OutputSchema = json.RawMessage(resultSchemaText)
		o.ResultServer = mcpresult.New(mcpresult.Options{HTTP: true, Logger: o.Logger})
	}
}

// TestResultToolOverHTTP: a runtime that advertises mcpCapabilities.http
// (today's Claude and Codex adapters) is declared the result server as an
// HTTP server on 127.0.0.1 and reaches it: the model's invalid call is
// answered with the validation errors, its valid call is the turn's
// result, source tool, with no follow-up.
func TestResultToolOverHTTP(t *testing.T) {
	t.Parallel()
	for _, c := range resultRows() {
		if c.row != "claude-current" && c.row != "codex-current" {
			continue // they advertise mcpCapabilities.http
		}
		t.Run(c.row, func(t *testing.T) {
			r, srv := c.rig(t)
			var script []fakes.Reply
			if c.before != nil {
				script = append(script, c.before("")...)
			}
			script = append(script,
				fakes.Reply{Tool: c.call("1", map[string]any{"done": "yes"}), Usage: fakes.Usage{Input: 100, Output: 9}},
				fakes.Reply{Tool: c.call("2", map[string]any{"done": true}), Usage: fakes.Usage{Input: 120, Output: 9}},
				fakes.TextReply(fakes.Usage{Input: 140, Output: 6}, "Submitted."),
			)
			srv.Script(script...)
			srv.SetFallback(fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "Nothing more."))
			sess := r.mustStart(withResultToolOverHTTP())
			res := r.turn(sess, "finish the work")
			t.Logf("%s: %d model calls; outcome %s; result %s (%s); missing %q",
				c.row, len(srv.ModelCalls()), res.Outcome, res.Result, res.ResultSource, res.ResultMissing)

			declared := false
			for _, m := range r.wire.messages() {
				if m.Out && m.Method == "session/new" {
					declared = strings.Contains(string(m.Params), `"type":"http"`) &&
						strings.Contains(string(m.Params), `"name":"`+domain.ResultServerName+`"`) &&
						strings.Contains(string(m.Params), `"url":"http://127.0.0.1:`)
				}
			}
			assert.True(t, declared, "session/new declares the result server over HTTP on 127.0.0.1")
			calls := srv.ModelCalls()
			require.NotEmpty(t, calls, srv.Describe())
			for _, d := range c.declared {
				assert.True(t, calls[0].BodyContains(d), "the first model request offers the result tool: %q", d)
			}
			corrected := false
			for _, call := range calls[1:] {
				corrected = corrected || call.BodyContains(domain.MsgResultInvalidPrefix) || call.BodyContains("must be boolean")
			}
			assert.True(t, corrected, "a later model call carries the validation errors")
			assert.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
			assert.JSONEq(t, `{"done":true}`, string(res.Result), res.ResultMissing)
			assert.Equal(t, domain.ResultSourceTool, res.ResultSource)
			assert.Len(t, promptsSent(t, r), 1, "a valid result: no follow-up")
		})
	}
}
