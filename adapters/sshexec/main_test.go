package sshexec

import (
	"testing"

	"github.com/acpdrive/acpdrive/internal/testbin"
)

func TestMain(m *testing.M) { testbin.Main(m) }
