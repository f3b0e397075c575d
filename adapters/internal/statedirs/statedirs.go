// Package statedirs lists where each runtime keeps the state it needs to
// keep its sessions, which a sandboxed runtime may write
// (docs/behaviour.md#sandbox; docs/runtimes.md lists them per runtime).
// Both transports (adapters/localexec and the SSH transports) read it.
package statedirs

import "path"

// Dir is where a runtime keeps the state it needs to keep its
// sessions (credentials, transcripts, journals), which a sandboxed runtime
// may write (docs/runtimes.md).
type Dir struct {
	// Runtime names the runtime the directory is for.
	Runtime string
	// Sub is the path under the home directory.
	Sub string
	// Env, when set on the host, moves the directory: it is $Env/EnvSub
	// instead (both are writable then).
	Env string
	// EnvSub is the path under $Env ("" for $Env itself).
	EnvSub string
}

// All returns the runtime state directories every sandboxed
// session may write (docs/runtimes.md lists them per runtime). One that
// does not exist when the session starts is not created.
func All() []Dir {
	return []Dir{
		{Runtime: "claude", Sub: ".claude", Env: "CLAUDE_CONFIG_DIR"},
		{Runtime: "claude", Sub: ".claude.json"},
		{Runtime: "claude", Sub: ".cache/claude-cli-nodejs"},
		{Runtime: "codex", Sub: ".codex", Env: "CODEX_HOME"},
		{Runtime: "gemini", Sub: ".gemini", Env: "GEMINI_CLI_HOME", EnvSub: ".gemini"},
		{Runtime: "qwen", Sub: ".qwen"},
		{Runtime: "opencode", Sub: ".local/share/opencode", Env: "XDG_DATA_HOME", EnvSub: "opencode"},
		{Runtime: "opencode", Sub: ".local/state/opencode", Env: "XDG_STATE_HOME", EnvSub: "opencode"},
		{Runtime: "opencode", Sub: ".cache/opencode", Env: "XDG_CACHE_HOME", EnvSub: "opencode"},
		{Runtime: "opencode", Sub: ".config/opencode", Env: "XDG_CONFIG_HOME", EnvSub: "opencode"},
		{Runtime: "copilot", Sub: ".copilot"},
		{Runtime: "npx", Sub: ".npm"},
	}
}

// Paths returns where d is on a host whose home directory is home and
// whose environment getenv reads: home/Sub, then $Env/EnvSub when Env is
// set there.
func (d Dir) Paths(home string, getenv func(string) string) []string {
	out := []string{path.Join(home, d.Sub)}
	if d.Env != "" {
		if v := getenv(d.Env); v != "" && path.IsAbs(v) {
			out = append(out, path.Join(v, d.EnvSub))
		}
	}
	return out
}

// ShellPaths returns d as POSIX shell words a remote shell expands (each
// is to be double-quoted): "${HOME}/Sub", then, when Env is named,
// "${Env:-${HOME}/Sub}/EnvSub" (the home path again when Env is unset).
func (d Dir) ShellPaths() []string {
	out := []string{"${HOME}/" + d.Sub}
	if d.Env != "" {
		w := "${" + d.Env + ":-${HOME}/" + d.Sub + "}"
		if d.EnvSub != "" {
			w += "/" + d.EnvSub
		}
		out = append(out, w)
	}
	return out
}
