package proxy

import (
	"errors"
	"maps"
	"net/http"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/specschema"
)

// contextSchemas are the spec's per-point context schemas the emit API
// checks, compiled once when the server is built. A compile failure (a
// broken build) is kept so that every emission fails closed.
type contextSchemas struct {
	set *specschema.Set
	err error
}

func loadContextSchemas() contextSchemas {
	set, err := specschema.Load()
	return contextSchemas{set: set, err: err}
}

// placeholderTimestamp stands in for the timestamp the gateway sets.
const placeholderTimestamp = "1970-01-01T00:00:00Z"

// checkEmitSchema validates an emitted context as the gateway will build
// it: the client's members as sent, the agent's id filled in from the key,
// and placeholders for the members the gateway sets (spec, timestamp,
// sequence, target) that satisfy the schema, so that only what the client
// chose can fail. A violation is a 400 naming its JSON path.
func (s *Server) checkEmitSchema(point enforcement.Point, obj map[string]any, agentID string) error {
	if s.schemas.err != nil {
		return errorf(http.StatusInternalServerError, typeGatewayError, "context_schemas_unavailable", "the context schemas failed to load")
	}
	ctx := maps.Clone(obj)
	agent := maps.Clone(obj["agent"].(map[string]any)) // parseEmit checked it is an object
	agent["id"] = agentID
	ctx["agent"] = agent
	ctx["spec"] = enforcement.SpecVersion
	ctx["timestamp"] = placeholderTimestamp
	ctx["sequence"] = 0
	ctx["target"] = nil // the schema accepts any target: the gateway derives it
	err := s.schemas.set.ValidateContext(string(point), ctx)
	var v *specschema.Violation
	switch {
	case err == nil:
		return nil
	case errors.As(err, &v):
		param := v.Path
		if param == "" {
			param = string(point)
		}
		return &apiError{status: http.StatusBadRequest, typ: typeInvalid, code: "invalid_request", param: param,
			message: "the context does not satisfy the " + string(point) + " context schema: " + v.Error()}
	default:
		return errorf(http.StatusInternalServerError, typeGatewayError, "context_schemas_unavailable", "the context could not be checked against its schema")
	}
}
