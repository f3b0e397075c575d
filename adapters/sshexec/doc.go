// Package sshexec launches the agent runtime on a remote host through the
// local ssh binary, implementing ports.Launcher with the option set and
// remote command of docs/behaviour.md#ssh.
//
// The pure builders both SSH transports share (the native x/crypto/ssh
// transport included) are in internal/remotecmd: the remote command, the
// preamble, the agent.command fragment. The remote command ends the
// runtime's whole process group on the remote host when the session stops
// or the connection drops; see remotecmd.RemoteCommand for
// the script, line by line.
package sshexec
