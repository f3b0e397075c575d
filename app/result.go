package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// MsgOutputSchema is the message of an output schema refused at start;
// the library's text is its cause (docs/behaviour.md#structured-results).
const MsgOutputSchema = "agent.output_schema"

// CompileOutputSchema compiles an output schema
// (docs/behaviour.md#structured-results) with a JSON Schema library
// (github.com/google/jsonschema-go, draft 2020-12): a schema that does not
// decode or resolve is refused with the library's text, and so is one
// that does not describe an object ("type": "object"). `acpdrive
// validate` and Start both call it.
func CompileOutputSchema(raw json.RawMessage) (*jsonschema.Resolved, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return nil, err
	}
	if s.Type != "object" {
		return nil, errors.New(`not an object schema: the result must be a JSON object, so the schema's "type" must be "object"`)
	}
	return r, nil
}

// outputSchemaError is the start's refusal of an output schema.
func outputSchemaError(err error) error {
	err = fmt.Errorf("%s: %w", MsgOutputSchema, err)
	return domain.WrapError(domain.KindAgentNotFound, err.Error(), err)
}

// outputSchema is a session's compiled output schema and its text.
type outputSchema struct {
	resolved *jsonschema.Resolved
	raw      json.RawMessage
}

// check returns the reason v does not validate, "" when it does.
func (o *outputSchema) check(v json.RawMessage) string {
	var inst any
	if err := json.Unmarshal(v, &inst); err != nil {
		return domain.MsgResultInvalidPrefix + err.Error()
	}
	if err := o.resolved.Validate(inst); err != nil {
		return domain.MsgResultInvalidPrefix + err.Error()
	}
	return ""
}

// fromReply sets res's result from its reply, or says why it has none
// (docs/behaviour.md#structured-results).
func (o *outputSchema) fromReply(res *domain.TurnResult) {
	if res.Result != nil {
		return
	}
	tool := res.ResultMissing // the result tool's last validation error, if any
	if res.Reply == "" {
		res.ResultMissing = cmp.Or(tool, domain.MsgResultNoReply)
		return
	}
	v, ok := domain.ReplyJSON(res.Reply)
	if !ok {
		res.ResultMissing = cmp.Or(tool, domain.MsgResultNoJSON)
		return
	}
	if why := o.check(v); why != "" {
		res.ResultMissing = why
		return
	}
	res.Result, res.ResultSource, res.ResultMissing = v, domain.ResultSourceReply, ""
}

// Turn sends one prompt and relays the runtime's updates as events until
// the turn ends (docs/behaviour.md#turn-disposition), and returns how it
// ended: the outcome, the error (nil on turn_completed), the turn's reply
// (TurnResult.Reply: the agent's last message of the turn, whole up to
// domain.ReplyCap), and its usage and cost when measured.
//
// Cancelling ctx cancels the turn (session/cancel is sent once):
// turn_cancelled. ctx's deadline ends it as turn_timeout with
// domain.MsgCallerDeadline, told apart from Settings.TurnTimeout's
// "the turn exceeded turn_timeout_ms". Only one turn may run at a time: a
// second concurrent call is refused with response_error before anything
// reaches the runtime. A Turn after Stop is refused with turn_cancelled
// (not retryable) and domain.MsgSessionStopped, and sends nothing. An
// ending held from between turns (a request only a person could answer)
// ends this turn without sending the prompt.
//
// Under an output schema (docs/behaviour.md#structured-results) with
// Settings.OutputSchemaTurns each (the default), every Turn asks for the
// result as TurnWithResult does. With OutputSchemaTurns last, Turn sends
// the prompt as given and reports no result (TurnResult.Result nil,
// ResultMissing ""), sends no follow-up, and a call of the result tool
// during it is answered domain.MsgResultNotAsked and not kept: the caller
// sends its last prompt with TurnWithResult.
func (s *Session) Turn(ctx context.Context, prompt string) domain.TurnResult {
	return s.resultTurn(ctx, prompt, s.opts.Settings.OutputSchemaTurns.EachTurn())
}

// TurnWithResult is Turn for a turn that asks for the structured result
// whatever Settings.OutputSchemaTurns says
// (docs/behaviour.md#structured-results): under OutputSchemaTurns last, a
// caller sends its last prompt with it. The prompt carries the result
// instruction, the result tool's valid call (else the reply's JSON
// object, validated) is TurnResult.Result, and a completed turn without a
// valid result sends at most Settings.OutputRetries follow-up prompts
// asking for it; each follow-up is a turn of its own in the stream, and
// the TurnResult returned is the last one's. Without an output schema it
// is Turn.
func (s *Session) TurnWithResult(ctx context.Context, prompt string) domain.TurnResult {
	return s.resultTurn(ctx, prompt, true)
}

// resultTurn runs prompt as a turn that asks for the result when asks
// and an output schema is set, with the instruction and the follow-ups.
func (s *Session) resultTurn(ctx context.Context, prompt string, asks bool) domain.TurnResult {
	o := s.opts.output
	if o == nil || !asks {
		return s.turn(ctx, prompt, false, started())
	}
	instruction := domain.ResultInstruction(o.raw)
	if s.tools.result != nil {
		instruction = domain.ResultToolInstruction + domain.ResultInstructionFallback(o.raw)
	}
	res := s.turn(ctx, prompt+instruction, true, started())
	for n := 0; n < s.opts.Settings.OutputRetries && res.Result == nil && res.Outcome == domain.OutcomeCompleted && ctx.Err() == nil; n++ {
		s.log.Info("turn ended without a valid result; asking for it", "reason", res.ResultMissing, "follow_up", n+1)
		follow := domain.Event{Type: domain.EventResultFollowUp, Origin: domain.OriginAcpdrive,
			Message: domain.ResultFollowUpNotice(n+1, s.opts.Settings.OutputRetries, res.ResultMissing)}
		res = s.turn(ctx, domain.ResultFollowUp(res.ResultMissing, s.tools.result != nil), true, follow)
	}
	if res.Result == nil {
		s.log.Info("turn ended without a valid result", "reason", res.ResultMissing)
	}
	return res
}

// askResult tells the result tool whether the turn now beginning asks for
// the result: each turn's own, so a call in a turn that does not ask is
// answered so and kept for no later turn.
func (s *Session) askResult(asks bool) {
	if s.tools.result != nil {
		s.tools.result.Ask(asks)
	}
}

// takeResult sets the result of a turn that asked for it, from the tool,
// else from the reply, before the next turn may begin; then no turn asks
// until the next one says so.
func (s *Session) takeResult(res *domain.TurnResult, asks bool) {
	if !asks || s.opts.output == nil {
		return
	}
	s.fromTool(res)
	s.opts.output.fromReply(res)
	s.askResult(false)
}

// compiledOutput compiles Settings.OutputSchema, nil when none is set.
func compiledOutput(settings domain.SessionSettings) (*outputSchema, error) {
	if len(settings.OutputSchema) == 0 {
		return nil, nil
	}
	r, err := CompileOutputSchema(settings.OutputSchema)
	if err != nil {
		return nil, outputSchemaError(err)
	}
	return &outputSchema{resolved: r, raw: settings.OutputSchema}, nil
}

// fromTool sets res's result from the result tool: the last valid call of
// the turn, checked again against the schema.
func (s *Session) fromTool(res *domain.TurnResult) {
	if s.tools.result == nil {
		return
	}
	v, invalid := s.tools.result.Take()
	if v == nil {
		res.ResultMissing = invalid // the reply may still hold one
		return
	}
	if why := s.opts.output.check(v); why != "" {
		res.ResultMissing = why
		return
	}
	res.Result, res.ResultSource, res.ResultMissing = v, domain.ResultSourceTool, ""
}

// armResult declares the result tool's server beside the others when an
// output schema is set and a ResultServer is given, once the handshake
// said which MCP transports the runtime takes: the server is armed for
// them (over HTTP from this process when the runtime advertises
// mcpCapabilities.http and the server serves it, else over stdio). A
// server that offers no transport the runtime takes
// (ports.ErrResultNotServed), and a remote launch (it declares no MCP
// server), leave the result to the reply
// (docs/behaviour.md#structured-results).
func (s *Session) armResult(ctx context.Context) error {
	if s.opts.output == nil || s.opts.ResultServer == nil {
		return nil
	}
	if s.conn.rt.target.Remote() {
		s.log.Info("a remote launch delivers no MCP servers; the result is taken from the reply", "host", s.conn.rt.target.Host)
		return nil
	}
	adv := s.res.agent.Advertised
	a, err := s.opts.ResultServer.Arm(ctx, s.opts.output.raw, ports.MCPTransports{HTTP: adv.MCPHTTP, SSE: adv.MCPSSE})
	if errors.Is(err, ports.ErrResultNotServed) {
		s.log.Info("the result server offers no MCP transport the runtime takes; the result is taken from the reply",
			"http", adv.MCPHTTP, "sse", adv.MCPSSE)
		return nil
	}
	if err != nil {
		return keepKind(err, msgResultArm+": "+err.Error())
	}
	srv := a.Server()
	if !srv.Deliverable(adv.MCPHTTP, adv.MCPSSE) {
		s.log.Info("the result server's transport is not one the runtime takes; the result is taken from the reply",
			"transport", string(srv.Transport), "http", adv.MCPHTTP, "sse", adv.MCPSSE)
		if err := a.Release(); err != nil {
			s.log.Debug("could not release the result server", "error", err)
		}
		return nil
	}
	a.Ask(false) // until a turn that asks begins
	s.tools.result = a
	s.res.servers = append(append([]domain.MCPServer{}, s.res.servers...), srv)
	s.stream.serveTools(true)
	s.log.Debug("result server declared", "transport", string(cmp.Or(srv.Transport, domain.MCPStdio)))
	return nil
}

// msgResultArm is the message of a start that could not arm the result
// server.
const msgResultArm = "could not arm the result server"

// releaseResult releases the result server at teardown.
func (s *Session) releaseResult() {
	if s.tools.result == nil {
		return
	}
	if err := s.tools.result.Release(); err != nil {
		s.log.Debug("could not release the result server", "error", err)
	}
}
