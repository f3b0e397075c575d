package acpwire

// AuthStatusUpdate is the params of the _auth/status_update notification:
// {"authStatus":{"kind":"api_key","label":"Anthropic API key","detail":"ANTHROPIC_API_KEY"}}.
type AuthStatusUpdate struct {
	AuthStatus *AuthStatus `json:"authStatus"`
}

// AuthStatus is how a runtime says it is authenticated.
type AuthStatus struct {
	Kind   string `json:"kind"`
	Label  string `json:"label,omitempty"`
	Detail string `json:"detail,omitempty"`
}
