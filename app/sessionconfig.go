package app

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpclient"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// configClient is what applying a session configuration calls: the three
// configuration methods of ACP v1. A version without modes and legacy
// models applies the same plan through set_config_option alone (an offer
// of options only, protocol.offer).
type configClient interface {
	SetConfigOption(ctx context.Context, req acpwire.SetConfigOptionRequest) (acpwire.SetConfigOptionResponse, error)
	SetMode(ctx context.Context, req acpwire.SetModeRequest) error
	SetModel(ctx context.Context, req acpwire.SetModelRequest) error
}

// sessionOffer turns a session answer's modes, options and legacy models
// into the domain's offer.
func sessionOffer(modes *acpwire.SessionModeState, opts []acpwire.ConfigOption, models *acpwire.SessionModels) domain.SessionOffer {
	var o domain.SessionOffer
	if modes != nil {
		o.CurrentMode = modes.CurrentModeID
		for _, m := range modes.AvailableModes {
			o.Modes = append(o.Modes, m.ID)
		}
	}
	o.Options = offeredOptions(opts)
	if models != nil {
		o.CurrentModel = models.CurrentModelID
		for _, m := range models.AvailableModels {
			o.Models = append(o.Models, m.ModelID)
		}
	}
	return o
}

// offeredOptions turns the wire's options into the domain's offer.
func offeredOptions(in []acpwire.ConfigOption) []domain.OfferedOption {
	out := make([]domain.OfferedOption, 0, len(in))
	for _, o := range in {
		out = append(out, domain.OfferedOption{ID: o.ID, Category: o.Category, Boolean: o.IsBoolean(), Value: o.Value(), Values: o.Values()})
	}
	return out
}

// applyConfig puts session id into the state cfg asks for and verifies
// it (docs/behaviour.md#session-configuration): it plans the calls from
// the offer the session answered with, makes them in order (each bounded
// by timeout), follows the state each answer reports, and checks the
// result. It returns where the session stands. A setting the runtime does
// not offer, an option it does not have, a call it refuses and a setting
// that did not take are agent_not_found (a configuration refused at
// start); a call that times out or loses the connection is reported by
// callErr.
func applyConfig(ctx context.Context, client configClient, id string, cfg domain.SessionConfig, offer domain.SessionOffer,
	selectType string, timeout time.Duration, callErr func(method string, err error) error,
) (domain.SessionOffer, error) {
	calls, err := domain.PlanSessionConfig(cfg, offer)
	if err != nil {
		return offer, err
	}
	for _, c := range calls {
		callCtx, cancel := context.WithTimeout(ctx, timeout)
		method, err := makeCall(callCtx, client, id, c, &offer, selectType)
		cancel()
		if err != nil {
			var ce *acpclient.CallError
			if errors.As(err, &ce) {
				return offer, domain.WrapError(domain.KindAgentNotFound,
					"session configuration refused: "+c.Setting+" "+strconv.Quote(c.Value)+": "+ce.Error(), ce).WithReason(domain.ReasonNotOffered)
			}
			return offer, callErr(method, err)
		}
	}
	return offer, domain.VerifySessionConfig(cfg, offer)
}

// makeCall makes one call and records in offer the state its answer
// reports: set_config_option answers every option; set_mode and set_model
// answer nothing but success, which is taken as the new current value.
func makeCall(ctx context.Context, client configClient, id string, c domain.ConfigCall, offer *domain.SessionOffer, selectType string) (string, error) {
	switch c.Via {
	case domain.ConfigViaMode:
		if err := client.SetMode(ctx, acpwire.SetModeRequest{SessionID: id, ModeID: c.Value}); err != nil {
			return acpwire.MethodSessionSetMode, err
		}
		offer.CurrentMode = c.Value
		return acpwire.MethodSessionSetMode, nil
	case domain.ConfigViaModel:
		if err := client.SetModel(ctx, acpwire.SetModelRequest{SessionID: id, ModelID: c.Value}); err != nil {
			return acpwire.MethodSessionSetModel, err
		}
		offer.CurrentModel = c.Value
		return acpwire.MethodSessionSetModel, nil
	}
	req := acpwire.SetConfigOptionRequest{SessionID: id, ConfigID: c.OptionID, Value: c.Value}
	switch {
	case c.Boolean:
		req.Type, req.Value = "boolean", c.Value == "true"
	case selectType != "":
		req.Type = selectType // the version names a select's value by its type
	}
	resp, err := client.SetConfigOption(ctx, req)
	if err != nil {
		return acpwire.MethodSessionSetConfigOption, err
	}
	offer.Options = offeredOptions(resp.ConfigOptions)
	return acpwire.MethodSessionSetConfigOption, nil
}

// admitSessionConfig refuses, before any session is created, a system
// prompt or additional directories the runtime did not advertise
// (docs/behaviour.md#session-configuration).
func (s *Session) admitSessionConfig() error {
	adv := s.res.agent.Advertised
	return domain.CheckBeforeSession(s.opts.Settings.Session, adv.SystemPromptModes,
		slices.Contains(adv.SessionMarkers, "additionalDirectories"))
}

// systemPrompt is the systemPrompt the session's calls carry, nil for none.
func (s *Session) systemPrompt() *acpwire.SystemPrompt {
	cfg := s.opts.Settings.Session
	return acpwire.NewSystemPrompt(cfg.EffectiveSystemPromptMode(), cfg.SystemPrompt)
}

// configure applies the session configuration to the session the start
// created or continued, answering offer, and records the posture.
func (s *Session) configure(ctx context.Context, offer domain.SessionOffer) error {
	cfg := s.opts.Settings.Session
	proto := s.protocol()
	offer = proto.offer(offer) // what the version configures (docs/behaviour.md#protocol-v2)
	state := offer
	if cfg.Applies() {
		var err error
		state, err = applyConfig(ctx, s.conn.rt.client, s.ID(), cfg, offer, proto.selectType(), s.opts.Settings.EffectiveReadTimeout(),
			func(method string, err error) error { return s.startupError(ctx, method, err) })
		if err != nil {
			return err
		}
	}
	posture := state.Posture()
	if !posture.IsZero() {
		s.res.agent.Posture = &posture
		s.log.Info("session configuration", "mode", posture.Mode, "model", posture.Model, "config", posture.Text())
	}
	if s.res.created != nil && cfg.Applies() {
		s.recordCreated(state)
	}
	return nil
}

// recordCreated writes the configured state back into session/new's
// answer, which a probe reports.
func (s *Session) recordCreated(state domain.SessionOffer) {
	c := s.res.created
	if c.Modes != nil {
		c.Modes.CurrentModeID = state.Mode()
	}
	if c.Models != nil && state.CurrentModel != "" {
		c.Models.CurrentModelID = state.CurrentModel
	}
	for i := range c.ConfigOptions {
		for _, o := range state.Options {
			if o.ID == c.ConfigOptions[i].ID {
				v, _ := json.Marshal(o.Value)
				if o.Boolean {
					v = []byte(strconv.FormatBool(o.Value == "true"))
				}
				c.ConfigOptions[i].CurrentValue = v
			}
		}
	}
}

// Posture returns where the session's mode, model and options stood once
// its configuration was applied (docs/behaviour.md#session-configuration);
// the zero posture when the runtime reports none. Changes during the
// session arrive as mode_changed and config_options events.
func (s *Session) Posture() domain.SessionPosture {
	if p := s.res.agent.Posture; p != nil {
		return *p
	}
	return domain.SessionPosture{}
}
