package journaltail

import "os"

// PrivateDir creates a start's private temporary directory in parent
// (empty: the default directory for temporary files), named from prefix
// and open to this user only. The caller removes it.
func PrivateDir(parent, prefix string) (string, error) {
	dir, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}
