package localexec
