package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/acpdrive/acpdrive/domain"
)

// localWorkspace resolves a local launch's workspace the way a shell
// user expects (docs/behaviour.md#cli): a relative --workspace is taken
// against the current directory, like --add-dir (localAdditionalDirectories).
// A remote launch's workspace is the remote host's and is left as written.
func localWorkspace(cfg domain.Config, workspace string) (string, error) {
	if cfg.Remote() {
		return workspace, nil
	}
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return "", fmt.Errorf("--workspace %s: %w", workspace, err)
	}
	return abs, nil
}

// localAdditionalDirectories resolves a local launch's relative
// --add-dir against the current directory; a remote launch's are left as
// written (and must be absolute).
func localAdditionalDirectories(cfg *domain.Config) error {
	if cfg.Remote() {
		return nil
	}
	dirs := cfg.Session.AdditionalDirectories
	for i, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return fmt.Errorf("--add-dir %s: %w", d, err)
		}
		dirs[i] = abs
	}
	return nil
}

// checkAdditionalDirectories checks each additional directory of a local
// launch the way the workspace is checked: it must exist and be a
// directory (invalid_workspace_cwd, docs/behaviour.md#start-up-errors).
func checkAdditionalDirectories(cfg domain.Config) error {
	if cfg.Remote() {
		return nil
	}
	for _, d := range cfg.Session.AdditionalDirectories {
		st, err := os.Stat(d)
		switch {
		case err != nil:
			return domain.WrapError(domain.KindInvalidWorkspaceCWD, "additional directory does not exist", err)
		case !st.IsDir():
			return domain.WrapError(domain.KindInvalidWorkspaceCWD, "additional directory is not a directory", fmt.Errorf("additional directory %q", d))
		}
	}
	return nil
}
