package proxy

import (
	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	chatwire "github.com/hooks-gateway/hooks-gateway/internal/wire/chat"
)

// Surfaces builds the API surfaces the gateway serves under cfg's wire
// allowances.
func Surfaces(cfg *config.Config) []wire.Surface {
	return []wire.Surface{
		chatwire.New(chatwire.Options{
			AllowRequestMembers:  cfg.Wire.Chat.AllowRequestMembers,
			AllowResponseMembers: cfg.Wire.Chat.AllowResponseMembers,
		}),
	}
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
