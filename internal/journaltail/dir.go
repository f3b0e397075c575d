package journaltail

import "os"

// PrivateDir creates a start's private temporary directory, named from
// prefix and readable by this user only. The caller removes it.
func PrivateDir(prefix string) (string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}
