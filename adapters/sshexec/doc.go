// Package sshexec will launch the runtime on a remote host through the local
// ssh binary (and optionally a native golang.org/x/crypto/ssh transport),
// implementing ports.Launcher with the option set and remote command of
// reference-tables §9.
//
// It is a placeholder until the SSH issue lands: nothing in acpdrive uses it
// yet, and a configuration naming SSH hosts is not accepted by the CLI.
package sshexec
