package acpwire

// Method names of ACP v1 used by this client.
const (
	MethodInitialize        = "initialize"
	MethodSessionNew        = "session/new"
	MethodSessionLoad       = "session/load"
	MethodSessionResume     = "session/resume"
	MethodSessionClose      = "session/close"
	MethodSessionDelete     = "session/delete"
	MethodSessionPrompt     = "session/prompt"
	MethodSessionCancel     = "session/cancel"
	MethodSessionUpdate     = "session/update"
	MethodRequestPermission = "session/request_permission"
	MethodElicitationCreate = "elicitation/create"
	MethodCancelRequest     = "$/cancel_request"
)

// MethodAuthStatusUpdate is the Claude agent adapter's notification of its
// authentication status (not part of ACP v1; a "_" extension).
const MethodAuthStatusUpdate = "_auth/status_update"
