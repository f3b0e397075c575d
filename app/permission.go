package app

import (
	"bytes"
	"encoding/json"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// answer is the permission policy's decision on one request from the
// runtime (docs/behaviour.md#permission-posture): what to reply, and what
// follows for the session.
type answer struct {
	// result is the reply's result, when errCode is zero.
	result any
	// errCode and errMsg make the reply an error response.
	errCode int64
	errMsg  string
	// refused reports a refusal the stream announces.
	refused bool
	// person, when set, is the notice of a person-needed ending: the
	// running turn ends turn_input_required, or the next one does.
	person string
	// unimplemented reports a method this client does not implement,
	// which the stream reports as malformed.
	unimplemented bool
}

// decide is the permission policy: the answer to req, given whether an
// ending is already decided for the running (or next) turn. It is a pure
// function of its inputs, so the policy is tested without a process.
//
//   - session/request_permission with params null, missing or undecodable:
//     -32602 invalid params; the session goes on.
//   - an ending already decided: the cancelled outcome, nothing more.
//   - a refusing option (reject_once, else reject_always): selected.
//   - no refusing option: the cancelled outcome and a person-needed ending.
//   - elicitation/create: -32601 and a person-needed ending.
//   - anything else: -32601, reported as an unimplemented method.
func decide(req jsonrpc.Request, endingPending bool) answer {
	switch req.Method {
	case acpwire.MethodRequestPermission:
		return decidePermission(req.Params, endingPending)
	case acpwire.MethodElicitationCreate:
		return answer{errCode: jsonrpc.CodeMethodNotFound, errMsg: "Method not found", person: domain.MsgElicitation}
	}
	return answer{errCode: jsonrpc.CodeMethodNotFound, errMsg: "Method not found", unimplemented: true}
}

func decidePermission(params json.RawMessage, endingPending bool) answer {
	invalid := answer{errCode: jsonrpc.CodeInvalidParams, errMsg: "Invalid params"}
	if p := bytes.TrimSpace(params); len(p) == 0 || bytes.Equal(p, []byte("null")) {
		return invalid
	}
	var p acpwire.RequestPermissionRequest
	if err := json.Unmarshal(params, &p); err != nil {
		return invalid
	}
	if endingPending {
		return answer{result: acpwire.CancelledAnswer()}
	}
	if opt, ok := acpwire.RefusingOption(p.Options); ok {
		return answer{result: acpwire.SelectedAnswer(opt.OptionID), refused: true}
	}
	return answer{result: acpwire.CancelledAnswer(), person: domain.MsgPermissionUngrantable}
}
