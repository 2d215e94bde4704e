package proxy

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	chatwire "github.com/hooks-gateway/hooks-gateway/internal/wire/chat"
	messageswire "github.com/hooks-gateway/hooks-gateway/internal/wire/messages"
	responseswire "github.com/hooks-gateway/hooks-gateway/internal/wire/responses"
)

// Surfaces builds the API surfaces the gateway serves under cfg's wire
// allowances, sealing under cfg's seal keys (one keyring shared by every
// surface: a seal names the member it travels in, not the surface).
func Surfaces(cfg *config.Config) ([]wire.Surface, error) {
	keys, err := cfg.Seal.Keyring()
	if err != nil {
		return nil, fmt.Errorf("seal keys: %w", err)
	}
	return []wire.Surface{
		chatwire.New(chatwire.Options{
			AllowRequestMembers:  cfg.Wire.Chat.AllowRequestMembers,
			AllowResponseMembers: cfg.Wire.Chat.AllowResponseMembers,
			StrictMembers:        config.StrictMembers(cfg.Wire.Chat.UnknownMembers),
			MaxMessages:          int(cfg.Limits.MaxMessages),
		}),
		responseswire.New(responseswire.Options{
			AllowRequestMembers:  cfg.Wire.Responses.AllowRequestMembers,
			AllowResponseMembers: cfg.Wire.Responses.AllowResponseMembers,
			AllowServerState:     cfg.Wire.Responses.AllowServerState,
			StrictMembers:        config.StrictMembers(cfg.Wire.Responses.UnknownMembers),
			Seal:                 keys,
			MaxMessages:          int(cfg.Limits.MaxMessages),
		}),
		messageswire.New(messageswire.Options{
			AllowRequestMembers:  cfg.Wire.Messages.AllowRequestMembers,
			AllowResponseMembers: cfg.Wire.Messages.AllowResponseMembers,
			AllowServerTools:     cfg.Wire.Messages.AllowServerTools,
			StrictMembers:        config.StrictMembers(cfg.Wire.Messages.UnknownMembers),
			Seal:                 keys,
			MaxMessages:          int(cfg.Limits.MaxMessages),
		}),
	}, nil
}

// surfacePath is the model-call route of a surface, where its clients
// send requests relative to their base URL.
func surfacePath(api wire.API) string {
	switch api {
	case wire.ChatCompletions:
		return "/v1/chat/completions"
	case wire.Responses:
		return "/v1/responses"
	case wire.Messages:
		return "/v1/messages"
	}
	return "/v1/" + string(api)
}

// refuseStoredState answers the routes that read or change state kept at
// the provider (stored responses, their input items, cancellation) with a
// 400 saying why: what they return was never judged by the policy in this
// session, and proxying them blind would bypass it.
func (s *Server) refuseStoredState(r chi.Router) {
	refuse := func(w http.ResponseWriter, r *http.Request) {
		writeError(w, errorf(http.StatusBadRequest, typeInvalid, "stored_state_unsupported",
			"%s %s reads or changes state stored at the provider, which the gateway cannot mediate; send the whole conversation in each request (store: false)",
			r.Method, loggablePath(r.URL.Path)))
	}
	r.HandleFunc("/v1/responses/*", refuse)
	r.HandleFunc("/v1/conversations", refuse)
	r.HandleFunc("/v1/conversations/*", refuse)
	r.HandleFunc("/v1/messages/batches", refuse)
	r.HandleFunc("/v1/messages/batches/*", refuse)
}

// loggablePath is a request path fit for a log line or an error message:
// quoted (no control characters reach the log) and at most 200 bytes.
func loggablePath(p string) string {
	const max = 200
	if len(p) > max {
		p = p[:max] + "…"
	}
	return strconv.Quote(p)
}
