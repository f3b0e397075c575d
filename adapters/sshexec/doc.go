// Package sshexec launches the agent runtime on a remote host through the
// local ssh binary, implementing ports.Launcher with the option set and
// remote command of docs/behaviour.md#ssh.
//
// remote.go holds the pure builders every SSH transport shares (the
// native x/crypto/ssh transport included): RemoteCommand, Preamble and
// PassEnvValues. The remote command ends the runtime's whole process group
// on the remote host when the session stops or the connection drops
// (decision 9); see RemoteCommand for the script, line by line.
package sshexec
