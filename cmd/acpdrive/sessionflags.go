package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/acpdrive/acpdrive/domain"
)

// sessionFlags are the session configuration flags of run and probe
// (docs/behaviour.md#session-configuration). A flag given overrides the
// WORKFLOW.md's key; --config and --add-dir add to it.
type sessionFlags struct {
	url              urlFlags // run and probe only (urlflags.go)
	mode             string
	model            string
	options          []domain.ConfigSetting
	addDirs          []string
	systemPrompt     string
	systemPromptFile string
	systemPromptMode string
	sandbox          bool   // --sandbox (docs/behaviour.md#sandbox)
	sandboxNet       string // --sandbox-net
}

// register defines the flags.
func (f *sessionFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.mode, "mode", "", "put the session in mode `ID` before the first prompt (the option of category mode, else session/set_mode); refused at start when the runtime does not offer it (agent.mode)")
	fs.StringVar(&f.model, "model", "", "use model `VALUE` (the option of category model, else the legacy model list); refused at start when not offered (agent.model)")
	fs.Func("config", "set configuration option `ID=VALUE` before the first prompt (repeatable; agent.config_options)", func(v string) error {
		id, value, ok := strings.Cut(v, "=")
		if !ok || strings.TrimSpace(id) == "" || value == "" {
			return fmt.Errorf("want ID=VALUE, got %q", v)
		}
		f.options = append(f.options, domain.ConfigSetting{ID: strings.TrimSpace(id), Value: value})
		return nil
	})
	fs.Func("add-dir", "let the session use `DIR` beside the workspace (repeatable; sessionCapabilities.additionalDirectories; agent.additional_directories)", func(v string) error {
		// Resolved against the current directory for a local launch
		// (localPaths), as written for a remote one.
		f.addDirs = append(f.addDirs, v)
		return nil
	})
	fs.StringVar(&f.systemPrompt, "system-prompt", "", "system prompt `TEXT` sent on session/new and continuations (agent.system_prompt)")
	fs.StringVar(&f.systemPromptFile, "system-prompt-file", "", "read the system prompt from `FILE`")
	fs.BoolVar(&f.sandbox, "sandbox", false, "run the runtime and everything it spawns under bubblewrap: the filesystem read-only but the workspace, the --add-dir directories, a private temporary directory and the runtime's state directories, in a PID namespace that ends with the session; refused at start where bwrap is missing (agent.sandbox)")
	fs.StringVar(&f.sandboxNet, "sandbox-net", "", "the sandbox's network: host (the default) or none (agent.sandbox_net)")
	fs.StringVar(&f.systemPromptMode, "system-prompt-mode", "", "append (the default: after the runtime's own) or override (replaces it); refused at start when the runtime does not advertise the mode (agent.system_prompt_mode)")
}

// apply writes the flags given into cfg's session configuration.
func (f sessionFlags) apply(cfg *domain.Config) error {
	s := &cfg.Session
	if f.mode != "" {
		s.Mode = f.mode
	}
	if f.model != "" {
		s.Model = f.model
	}
	for _, o := range f.options {
		s.Options = setOption(s.Options, o)
	}
	s.AdditionalDirectories = append(s.AdditionalDirectories, f.addDirs...)
	if f.systemPrompt != "" && f.systemPromptFile != "" {
		return errors.New("--system-prompt and --system-prompt-file: give one of them")
	}
	if f.systemPrompt != "" {
		s.SystemPrompt = f.systemPrompt
	}
	if f.systemPromptFile != "" {
		b, err := os.ReadFile(f.systemPromptFile)
		if err != nil {
			return fmt.Errorf("--system-prompt-file: %w", err)
		}
		if strings.TrimSpace(string(b)) == "" {
			return fmt.Errorf("--system-prompt-file %s: the file is empty", f.systemPromptFile)
		}
		s.SystemPrompt = string(b)
	}
	if f.systemPromptMode != "" {
		s.SystemPromptMode = f.systemPromptMode
	}
	return f.applySandbox(&cfg.Sandbox)
}

// applySandbox writes --sandbox and --sandbox-net into sb.
func (f sessionFlags) applySandbox(sb *domain.Sandbox) error {
	if f.sandbox {
		sb.Enabled = true
	}
	if f.sandboxNet == "" {
		return nil
	}
	n, err := domain.ParseSandboxNetwork(f.sandboxNet)
	if err != nil {
		return fmt.Errorf("--sandbox-net: %w", err)
	}
	if !sb.Enabled {
		return errors.New("--sandbox-net: the sandbox is off (give --sandbox or agent.sandbox: true)")
	}
	sb.Network = n
	return nil
}

// setOption sets o in opts: a flag replaces the WORKFLOW.md's value of the
// same id, else it is added at the end.
func setOption(opts []domain.ConfigSetting, o domain.ConfigSetting) []domain.ConfigSetting {
	for i := range opts {
		if opts[i].ID == o.ID {
			opts[i].Value = o.Value
			return opts
		}
	}
	return append(opts, o)
}

// postureFields are run_result's mode and config of a posture.
func postureFields(p domain.SessionPosture) (string, map[string]string) {
	if len(p.Config) == 0 {
		return p.Mode, nil
	}
	cfg := make(map[string]string, len(p.Config))
	for _, s := range p.Config {
		cfg[s.ID] = s.Value
	}
	return p.Mode, cfg
}
