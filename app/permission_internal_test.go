package app

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// permissionParams renders session/request_permission params offering
// options of these kinds, with ids "<kind>-<index>".
func permissionParams(kinds ...string) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"sessionId":"s-1","options":[`)
	for i, k := range kinds {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"optionId":"%s-%d","name":"%s","kind":"%s"}`, k, i, k, k)
	}
	b.WriteString(`]}`)
	return json.RawMessage(b.String())
}

// TestDecide is every row of docs/behaviour.md#permission-posture, as the
// pure policy decides it.
func TestDecide(t *testing.T) {
	t.Parallel()
	const (
		allowOnce    = acpwire.OptionAllowOnce
		allowAlways  = acpwire.OptionAllowAlways
		rejectOnce   = acpwire.OptionRejectOnce
		rejectAlways = acpwire.OptionRejectAlways
	)
	invalid := answer{errCode: jsonrpc.CodeInvalidParams, errMsg: "Invalid params"}
	selected := func(id string) answer {
		return answer{result: acpwire.SelectedAnswer(id), refused: true, notice: domain.MsgPermissionRefused}
	}
	cancelled := answer{result: acpwire.CancelledAnswer()}
	needsPerson := answer{result: acpwire.CancelledAnswer(), person: domain.MsgPermissionUngrantable}
	notFound := answer{errCode: jsonrpc.CodeMethodNotFound, errMsg: "Method not found", unimplemented: true}

	many := make([]string, 10000)
	for i := range many {
		many[i] = allowOnce
	}
	manyWithReject := append(append([]string(nil), many...), rejectAlways)

	perm := acpwire.MethodRequestPermission
	cases := []struct {
		name    string
		method  string
		params  json.RawMessage
		pending bool
		want    answer
	}{
		// Params that carry no options to choose a refusal from (decision 4).
		{"params null", perm, json.RawMessage(`null`), false, invalid},
		{"params null with spaces", perm, json.RawMessage(" null\n"), false, invalid},
		{"params missing", perm, nil, false, invalid},
		{"params empty", perm, json.RawMessage(``), false, invalid},
		{"params garbage", perm, json.RawMessage(`{"options":`), false, invalid},
		{"params a number", perm, json.RawMessage(`42`), false, invalid},
		{"params an array", perm, json.RawMessage(`[]`), false, invalid},
		{"options not a list", perm, json.RawMessage(`{"options":"reject"}`), false, invalid},
		{"params null while an ending is pending", perm, json.RawMessage(`null`), true, invalid},
		// A refusing option: reject_once first, else reject_always; never allow.
		{"reject_once", perm, permissionParams(allowOnce, allowAlways, rejectOnce, rejectAlways), false, selected("reject_once-2")},
		{"reject_once preferred over an earlier reject_always", perm, permissionParams(rejectAlways, allowOnce, rejectOnce), false, selected("reject_once-2")},
		{"first reject_once of two", perm, permissionParams(rejectOnce, rejectOnce), false, selected("reject_once-0")},
		{"reject_always when no reject_once", perm, permissionParams(allowOnce, rejectAlways, allowAlways, rejectAlways), false, selected("reject_always-1")},
		{"refusal after 10,000 allow options", perm, permissionParams(manyWithReject...), false, selected(fmt.Sprintf("reject_always-%d", len(many)))},
		// No refusing option: cancelled, and a person-needed ending.
		{"only allow options", perm, permissionParams(allowOnce, allowAlways), false, needsPerson},
		{"10,000 allow options", perm, permissionParams(many...), false, needsPerson},
		{"no options", perm, json.RawMessage(`{"sessionId":"s-1","options":[]}`), false, needsPerson},
		{"options absent", perm, json.RawMessage(`{"sessionId":"s-1"}`), false, needsPerson},
		{"unknown kinds only", perm, permissionParams("deny", "REJECT_ONCE"), false, needsPerson},
		// An ending already decided or held: cancelled at once, nothing more.
		{"refusable while pending", perm, permissionParams(rejectOnce), true, cancelled},
		{"no refusal while pending", perm, permissionParams(allowOnce), true, cancelled},
		// Elicitation: -32601 and a person-needed ending.
		{"elicitation", acpwire.MethodElicitationCreate, json.RawMessage(`{"message":"Which branch?"}`), false,
			answer{errCode: jsonrpc.CodeMethodNotFound, errMsg: "Method not found", person: domain.MsgElicitation}},
		// Any other method: -32601, reported as unimplemented.
		{"fs read", "fs/read_text_file", json.RawMessage(`{"path":"/x"}`), false, notFound},
		{"terminal", "terminal/create", nil, false, notFound},
		{"unknown", "_vendor/thing", nil, true, notFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := decide(jsonrpc.Request{ID: jsonrpc.IntID(7), Method: c.method, Params: c.params}, c.pending, nil)
			// Every permission request answered with an outcome is
			// reported (permission_decision); the rest is not.
			assert.Equal(t, got.result != nil, got.decision != nil)
			got.decision = nil
			assert.Equal(t, c.want, got)
			if got.result != nil {
				raw, err := json.Marshal(got.result)
				assert.NoError(t, err)
				assert.True(t, strings.HasPrefix(string(raw), `{"outcome":{"outcome":"`), "%s", raw)
			}
		})
	}
}

// TestDecideAnswersOnTheWire pins the JSON of the two permission answers
// (docs/behaviour.md#permission-posture).
func TestDecideAnswersOnTheWire(t *testing.T) {
	t.Parallel()
	a := decide(jsonrpc.Request{Method: acpwire.MethodRequestPermission, Params: permissionParams(acpwire.OptionRejectOnce)}, false, nil)
	raw, _ := json.Marshal(a.result)
	assert.JSONEq(t, `{"outcome":{"outcome":"selected","optionId":"reject_once-0"}}`, string(raw))
	a = decide(jsonrpc.Request{Method: acpwire.MethodRequestPermission, Params: permissionParams(acpwire.OptionAllowOnce)}, false, nil)
	raw, _ = json.Marshal(a.result)
	assert.JSONEq(t, `{"outcome":{"outcome":"cancelled"}}`, string(raw))
}
