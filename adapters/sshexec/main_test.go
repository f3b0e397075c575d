//go:build unix

package sshexec

import (
	"testing"

	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

func TestMain(m *testing.M) { testbin.Main(m) }
