package ports

import "github.com/acpdrive/acpdrive/domain"

// PermissionPolicy decides each permission request a runtime sends, the
// parent session's or a child's, during a turn or between turns
// (docs/behaviour.md#permission-posture). It is asked on the session's
// reader, one request at a time, and must answer promptly: the runtime
// waits for the answer. Whatever it decides, the library answers with an
// option the request offers, chosen by kind; when none fits, the request
// is refused the documented way. domain.PermissionPolicy (the presets and
// rules files) implements it.
type PermissionPolicy interface {
	// Decide is the verdict on one request: allow, refuse or person, and
	// what decided it (for the permission_decision event).
	Decide(req domain.PermissionRequest) domain.PermissionDecision
}

var _ PermissionPolicy = domain.PermissionPolicy{}
