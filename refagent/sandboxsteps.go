package refagent

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// daemon starts st.Command (default sleep 600) the way a daemonizing tool
// does: in a session of its own (so outside the agent's process group),
// with no standard stream of the agent's, and not waited for. It then
// reports "daemon started" (or why not) as an agent_message_chunk. It
// stands in for a tool that leaves a background process behind
// (docs/behaviour.md#sandbox).
func (a *agent) daemon(sc *stepCtx, st *Step) error {
	argv := st.Command
	if len(argv) == 0 {
		argv = []string{"sleep", "600"}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = detachedAttr()
	text := "daemon started"
	if err := cmd.Start(); err != nil {
		text = fmt.Sprintf("daemon %q: %v", argv, err)
	} else {
		fmt.Fprintf(a.stderr, "acpdrive reference agent: daemonized descendant pid %d\n", cmd.Process.Pid)
		_ = cmd.Process.Release()
	}
	return a.sendChunks(sc, &Step{}, "agent_message_chunk", text, msgID(st, "m", sc.turn), true)
}

// writeFile writes st.Text to st.Path (the turn's argument instead when
// fromArgument is set and the argument is not empty) and reports the
// outcome as an agent_message_chunk: "writeFile <path>: ok" or
// "writeFile <path>: error <err>".
func (a *agent) writeFile(sc *stepCtx, st *Step) error {
	path := st.Path
	if arg := strings.TrimSpace(sc.arg); st.FromArgument && arg != "" {
		path = arg
	}
	text := fmt.Sprintf("writeFile %s: ok", path)
	if err := os.WriteFile(path, []byte(st.Text), 0o600); err != nil {
		text = fmt.Sprintf("writeFile %s: error %v", path, err)
	}
	return a.sendChunks(sc, &Step{}, "agent_message_chunk", text, msgID(st, "m", sc.turn), true)
}
