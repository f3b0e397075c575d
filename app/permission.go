package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// answer is the decision on one request from the runtime
// (docs/behaviour.md#permission-posture): what to reply, and what follows
// for the session.
type answer struct {
	// result is the reply's result, when errCode is zero.
	result any
	// errCode and errMsg make the reply an error response.
	errCode int64
	errMsg  string
	// refused reports a refusal the stream announces, with notice.
	refused bool
	notice  string
	// detail, with person, says what sent the request to a person (the
	// ending's detail); "" for a request that offered no option to refuse.
	detail string
	// person, when set, is the notice of a person-needed ending: the
	// running turn ends turn_input_required, or the next one does.
	person string
	// unimplemented reports a method this client does not implement,
	// which the stream reports as malformed.
	unimplemented bool
	// decision, set for every permission request answered with an
	// outcome, is the permission_decision event's account.
	decision *domain.PermissionInfo
	// question, set for every elicitation/create whose params could be
	// read, is the elicitation event's account (and, with person, the
	// question on the turn's result).
	question *domain.ElicitationInfo
}

// judged is the permission policy's decision on one request, taken
// before the turn engine's lock (the policy may look at the file system):
// the request as the policy saw it and its verdict.
type judged struct {
	req domain.PermissionRequest
	dec domain.PermissionDecision

	// q is an elicitation/create request's question (nil for a
	// permission request); ans is the answers policy's answer, nil when no
	// policy is set or the policy was not asked (a mode not offered).
	q   *domain.ElicitationQuestion
	ans *domain.ElicitationAnswer
	// offered: an answers policy is set, so elicitation was offered.
	offered bool
}

// decide is the answer to req, given whether an ending is already decided
// for the running (or next) turn and the policy's decision j on a
// permission request (nil: the default refusal). It is a pure function of
// its inputs, so the posture is tested without a process.
//
//   - session/request_permission with params null, missing or undecodable:
//     -32602 invalid params; the session goes on.
//   - an ending already decided: the cancelled outcome, nothing more.
//   - allow: the allow_once option; refuse: reject_once, else
//     reject_always; no option fits: refused the documented way
//     (domain.ChoosePermissionOption).
//   - person, or no refusing option: the cancelled outcome and a
//     person-needed ending.
//   - elicitation/create: see decideElicitation.
//   - anything else: -32601, reported as an unimplemented method.
func decide(req jsonrpc.Request, endingPending bool, j *judged) answer {
	switch req.Method {
	case acpwire.MethodRequestPermission:
		return decidePermission(req.Params, endingPending, j)
	case acpwire.MethodElicitationCreate:
		return decideElicitation(endingPending, j)
	}
	return answer{errCode: jsonrpc.CodeMethodNotFound, errMsg: "Method not found", unimplemented: true}
}

// decideElicitation answers elicitation/create (docs/behaviour.md#elicitation):
//
//   - no answers policy (elicitation not offered): -32601 and a
//     person-needed ending;
//   - a policy, params that cannot be read: -32602; the session goes on;
//   - a policy, a mode other than form: -32602 and a person-needed ending;
//   - an ending already decided: the cancel action, nothing more;
//   - the policy's accept: the accept action with the form's content;
//   - the policy's decline or cancel: that action and a person-needed
//     ending.
//
// Every question that could be read gets the elicitation event; a
// person-needed ending carries it as the turn's question.
func decideElicitation(endingPending bool, j *judged) answer {
	if j == nil || !j.offered {
		a := answer{errCode: jsonrpc.CodeMethodNotFound, errMsg: "Method not found", person: domain.MsgElicitation}
		if j != nil && j.q != nil {
			a.question = questionInfo(*j.q, domain.ElicitUnanswered, domain.ElicitByNoPolicy,
				"no answers policy is set, so elicitation was not offered")
		}
		return a
	}
	if j.q == nil {
		return answer{errCode: jsonrpc.CodeInvalidParams, errMsg: "Invalid params"}
	}
	q := *j.q
	if j.ans == nil {
		return answer{errCode: jsonrpc.CodeInvalidParams, errMsg: "Invalid params", person: domain.MsgElicitation,
			question: questionInfo(q, domain.ElicitUnanswered, domain.ElicitByModeNotOffered,
				"acpdrive offers the form mode only and never opens a URL")}
	}
	if endingPending {
		return answer{result: acpwire.ElicitationResponse{Action: string(domain.ElicitCancel)},
			question: questionInfo(q, domain.ElicitCancel, domain.ElicitByEndingPending, "")}
	}
	ans := *j.ans
	if ans.Action == domain.ElicitAccept && len(ans.Content) > 0 {
		info := questionInfo(q, domain.ElicitAccept, domain.ElicitByAnswers, "")
		for name := range ans.Content {
			info.Fields = append(info.Fields, name)
		}
		slices.Sort(info.Fields)
		return answer{result: acpwire.ElicitationResponse{Action: string(domain.ElicitAccept), Content: ans.Content},
			question: info}
	}
	action := domain.ElicitDecline
	if ans.Action == domain.ElicitCancel {
		action = domain.ElicitCancel
	}
	reason := ans.Reason
	if reason == "" {
		reason = "the answers policy gave no answer"
	}
	return answer{result: acpwire.ElicitationResponse{Action: string(action)}, person: domain.MsgElicitation,
		question: questionInfo(q, action, domain.ElicitByAnswers, reason)}
}

// questionInfo is the account of question q answered with action.
func questionInfo(q domain.ElicitationQuestion, action domain.ElicitationAction, by, reason string) *domain.ElicitationInfo {
	return &domain.ElicitationInfo{Session: q.Session, ToolCallID: q.ToolCallID, Mode: q.Mode, Message: q.Message,
		Schema: q.Schema, URL: q.URL, Action: action, By: by, Reason: reason}
}

// decodeQuestion reads elicitation/create params as the policy sees them;
// ok is false for params null, missing, undecodable, or without a message
// or a mode.
func decodeQuestion(params json.RawMessage, session string) (domain.ElicitationQuestion, bool) {
	var p acpwire.ElicitationRequest
	if t := bytes.TrimSpace(params); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return domain.ElicitationQuestion{}, false
	}
	if err := json.Unmarshal(params, &p); err != nil || p.Message == "" || p.Mode == "" {
		return domain.ElicitationQuestion{}, false
	}
	q := domain.ElicitationQuestion{Session: session, ToolCallID: p.ToolCallID, Mode: p.Mode,
		Message: p.Message, URL: p.URL}
	if t := bytes.TrimSpace(p.RequestedSchema); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		q.Schema = p.RequestedSchema
	}
	return q, true
}

func decidePermission(params json.RawMessage, endingPending bool, j *judged) answer {
	p, ok := decodePermission(params)
	if !ok {
		return answer{errCode: jsonrpc.CodeInvalidParams, errMsg: "Invalid params"}
	}
	if j == nil {
		j = &judged{req: describeRequest(p, params, domain.PermissionParent, nil),
			dec: domain.PermissionPolicy{}.Decide(domain.PermissionRequest{})}
	}
	info := &domain.PermissionInfo{Request: j.req, By: j.dec.By}
	if endingPending {
		info.Decision, info.By = domain.PermissionCancelled, "ending_pending"
		return answer{result: acpwire.CancelledAnswer(), decision: info}
	}
	asked := j.dec.Verdict
	if _, known := domain.ParsePermissionVerdict(string(asked)); !known {
		asked = domain.PermissionRefuse
	}
	sent, id := domain.ChoosePermissionOption(asked, j.req.Options)
	info.Decision, info.OptionID = sent, id
	if sent != asked {
		info.Asked = asked
	}
	switch sent {
	case domain.PermissionAllow:
		return answer{result: acpwire.SelectedAnswer(id), decision: info}
	case domain.PermissionRefuse:
		return answer{result: acpwire.SelectedAnswer(id), refused: true, notice: domain.PermissionRefusedNotice(j.dec), decision: info}
	}
	a := answer{result: acpwire.CancelledAnswer(), person: domain.MsgPermissionUngrantable, decision: info}
	if asked == domain.PermissionPerson {
		a.detail = domain.PermissionPersonDetail(j.dec)
	}
	return a
}

// decodePermission decodes session/request_permission params; ok is false
// for params null, missing or undecodable.
func decodePermission(params json.RawMessage) (acpwire.RequestPermissionRequest, bool) {
	var p acpwire.RequestPermissionRequest
	if t := bytes.TrimSpace(params); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return p, false
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return p, false
	}
	return p, true
}

// permissionJudge asks the session's permission policy
// (docs/behaviour.md#permission-posture), with the request's paths judged
// against the workspace roots after resolving "..", "." and symbolic
// links. On a remote launch no path can be known here: none is inside.
type permissionJudge struct {
	policy    ports.PermissionPolicy
	answers   ports.AnswerPolicy // nil: elicitation is not offered
	workspace string             // the workspace as given ("" on a remote launch)
	roots     []string           // the resolved workspace and additional directories

	// resultTool: the session declares acpdrive's result tool, whose
	// calls are allowed (docs/behaviour.md#structured-results).
	resultTool bool
	// announced, when set, is the latest title the parent session's open
	// tool call of an id was announced with ("" when none): a request
	// whose own title is not the result tool's is judged with it for the
	// result tool's exception.
	announced func(toolCallID string) string
}

// newPermissionJudge is the judge of a session: Options.PermissionPolicy,
// else Settings.Permissions (whose zero value refuses); announced is the
// title of the session's open tool calls (eventStream.announcedTitle).
func newPermissionJudge(opts Options, remote bool, announced func(toolCallID string) string) *permissionJudge {
	j := &permissionJudge{policy: opts.PermissionPolicy, answers: opts.answerPolicy(), announced: announced}
	if j.policy == nil {
		j.policy = opts.Settings.Permissions
	}
	if remote {
		return j
	}
	j.resultTool = opts.output != nil && opts.ResultServer != nil
	j.workspace = opts.Workspace
	for _, d := range append([]string{opts.Workspace}, opts.Settings.Session.AdditionalDirectories...) {
		if r, ok := resolvePath(d); ok {
			j.roots = append(j.roots, r)
		}
	}
	return j
}

// judge asks the policy about a permission request of session ("parent"
// or "child"); nil when req is no permission request with valid params
// (decide answers those without the policy). A request naming a session
// this run does not follow is never the policy's: it gets the default
// refusal, decided by "other_session".
func (j *permissionJudge) judge(req jsonrpc.Request, session string, ours bool) *judged {
	if req.Method == acpwire.MethodElicitationCreate {
		return j.judgeQuestion(req, session, ours)
	}
	if req.Method != acpwire.MethodRequestPermission {
		return nil
	}
	p, ok := decodePermission(req.Params)
	if !ok {
		return nil
	}
	r := describeRequest(p, req.Params, session, j)
	if !ours {
		return &judged{req: r, dec: domain.PermissionDecision{Verdict: domain.PermissionRefuse, By: "other_session"}}
	}
	if j != nil && j.resultTool && session == domain.PermissionParent {
		if rt, ok := resultToolRequest(r, j.announced); ok {
			// acpdrive's own result tool, the posture's one exception
			// (docs/behaviour.md#structured-results).
			return &judged{req: rt, dec: domain.PermissionDecision{Verdict: domain.PermissionAllow, By: domain.ByResultTool}}
		}
	}
	var policy ports.PermissionPolicy = domain.PermissionPolicy{}
	if j != nil && j.policy != nil {
		policy = j.policy
	}
	return &judged{req: r, dec: policy.Decide(r)}
}

// judgeQuestion asks the answers policy about an elicitation/create
// request (docs/behaviour.md#elicitation): the policy is asked about a
// form-mode question of a session this run follows; a question naming
// another session is declined without it.
func (j *permissionJudge) judgeQuestion(req jsonrpc.Request, session string, ours bool) *judged {
	jd := &judged{offered: j != nil && j.answers != nil}
	q, ok := decodeQuestion(req.Params, session)
	if !ok {
		return jd
	}
	jd.q = &q
	switch {
	case !jd.offered || q.Mode != domain.ElicitModeForm:
	case !ours:
		jd.ans = &domain.ElicitationAnswer{Action: domain.ElicitDecline,
			Reason: "the question names a session this run does not follow"}
	default:
		ans := j.answers.Answer(q)
		jd.ans = &ans
	}
	return jd
}

// resultToolRequest reports whether r asks to call acpdrive's result
// tool, under its own title or, when that is not one of the result tool's,
// under the title its tool call was announced with (codex-acp's request
// carries none, or one shared by every MCP tool; Qwen Code's carries the
// arguments): the request as recognised, with that title.
func resultToolRequest(r domain.PermissionRequest, announced func(string) string) (domain.PermissionRequest, bool) {
	if domain.IsResultToolRequest(r) {
		return r, true
	}
	if announced == nil || r.ToolCallID == "" {
		return r, false
	}
	t := announced(r.ToolCallID)
	if t == "" {
		return r, false
	}
	as := r
	as.Title = t
	return as, domain.IsResultToolRequest(as)
}

// describeRequest is the request as the policy sees it. j nil (no judge)
// leaves every path unknown.
func describeRequest(p acpwire.RequestPermissionRequest, params json.RawMessage, session string, j *permissionJudge) domain.PermissionRequest {
	d := acpwire.DecodePermissionDetail(params)
	r := domain.PermissionRequest{SessionID: p.SessionID, Session: session, ToolCallID: d.ToolCallID,
		Kind: domain.NormalizeToolKind(d.Kind), Title: d.Title}
	for _, o := range p.Options {
		r.Options = append(r.Options, domain.PermissionOffer{ID: o.OptionID, Kind: o.Kind})
	}
	seen := map[string]bool{}
	add := func(path string, known bool) {
		if known && seen[path] {
			return
		}
		seen[path] = true
		r.Paths = append(r.Paths, j.judgePath(path, known))
	}
	for _, raw := range d.Locations {
		var loc struct {
			Path string `json:"path"`
		}
		known := json.Unmarshal(raw, &loc) == nil && loc.Path != ""
		add(loc.Path, known)
	}
	var in map[string]json.RawMessage
	if json.Unmarshal(d.RawInput, &in) == nil {
		// The rawInput members that name paths a tool acts on
		// (docs/behaviour.md#permission-policy).
		for _, k := range [...]string{
			"path", "file_path", "filePath", "notebook_path", "abs_path", "absolute_path",
			"source", "destination", "target", "from", "to", "old_path", "new_path",
			"oldPath", "newPath", "paths", "files",
		} {
			raw, ok := in[k]
			if !ok || string(raw) == "null" {
				continue
			}
			var one string
			var many []string
			switch {
			case json.Unmarshal(raw, &one) == nil:
				add(one, one != "")
			case json.Unmarshal(raw, &many) == nil:
				for _, m := range many {
					add(m, m != "")
				}
			default:
				add("", false)
			}
		}
		var changes map[string]json.RawMessage
		if raw, ok := in["changes"]; ok && json.Unmarshal(raw, &changes) == nil {
			for path := range changes {
				add(path, path != "")
			}
		}
		r.Command = commandText(in["command"])
		if r.Command == "" {
			r.Command = commandText(in["cmd"])
		}
	}
	return r
}

// commandText is a command given as a string, or a list of words joined
// with spaces.
func commandText(raw json.RawMessage) string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one
	}
	var words []string
	if json.Unmarshal(raw, &words) == nil {
		return strings.Join(words, " ")
	}
	return ""
}

// judgePath judges one path: a relative path is the workspace's (the
// runtime's working directory); it is resolved, then compared with the
// roots. A path that cannot be known is not inside.
func (j *permissionJudge) judgePath(p string, known bool) domain.PermissionPath {
	out := domain.PermissionPath{Path: p}
	if !known || j == nil || j.workspace == "" {
		return out
	}
	abs := p
	if !filepath.IsAbs(abs) {
		// Not filepath.Join: it would clean "link/.." away before the
		// link is resolved.
		abs = j.workspace + string(filepath.Separator) + p
	}
	r, ok := resolvePath(abs)
	if !ok {
		return out
	}
	out.Resolved = r
	out.Inside = domain.PathInside(r, j.roots)
	return out
}

// maxLinkHops bounds the symbolic links followed in one path.
const maxLinkHops = 40

// resolvePath resolves an absolute path one name at a time, as the
// system would: "." is dropped, ".." goes to the parent of what was
// resolved so far, a symbolic link is replaced by its target. A name that
// does not exist is kept as written, and the names after it are resolved
// the same way (a ".." after it goes back up). ok is false when the path
// cannot be known: relative, a directory that cannot be read, a link that
// cannot be read, a loop of links.
func resolvePath(p string) (string, bool) {
	if p == "" || !filepath.IsAbs(p) || strings.ContainsRune(p, 0) {
		return "", false
	}
	vol := filepath.VolumeName(p)
	root := vol + string(filepath.Separator)
	names := splitNames(p[len(vol):])
	cur, hops := root, 0
	for len(names) > 0 {
		name := names[0]
		names = names[1:]
		switch name {
		case ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, name)
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			cur = next
			continue
		case err != nil:
			return "", false
		case fi.Mode()&fs.ModeSymlink == 0:
			cur = next
			continue
		}
		if hops++; hops > maxLinkHops {
			return "", false
		}
		target, err := os.Readlink(next)
		if err != nil || target == "" {
			return "", false
		}
		if filepath.IsAbs(target) {
			tv := filepath.VolumeName(target)
			cur = tv + string(filepath.Separator)
			target = target[len(tv):]
		}
		names = append(splitNames(target), names...)
	}
	return cur, true
}

// splitNames splits a path into its names, empty ones dropped.
func splitNames(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r < 0x80 && os.IsPathSeparator(uint8(r)) })
}

// answerPolicy is the session's answers policy: Options.Answers, else
// Settings.Answers; nil when neither is set (docs/behaviour.md#elicitation).
func (o Options) answerPolicy() ports.AnswerPolicy {
	if o.Answers != nil {
		return o.Answers
	}
	if o.Settings.Answers != nil {
		return *o.Settings.Answers
	}
	return nil
}

// decided reports on s what a's answer decided: the permission decision
// and the question, when it carries them.
func (s *eventStream) decided(a answer) {
	if a.decision != nil {
		s.permission(*a.decision)
	}
	if a.question != nil {
		s.elicitation(*a.question)
	}
}
