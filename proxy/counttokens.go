package proxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// tokenCounter is a surface with a token-counting route beside its model
// call (Anthropic's POST /v1/messages/count_tokens, which Claude Code
// calls). The request carries a whole conversation to the provider, so it
// is mediated at pre_model_call like a model call; the answer is a count
// and no model text, so it is shape-checked rather than judged.
type tokenCounter interface {
	// ParseCountTokens parses a counting request; its Operation is the
	// counting endpoint's.
	ParseCountTokens(body []byte, query url.Values) (wire.Request, error)
	// CountTokensRelease checks an upstream count and returns the bytes to
	// release; anything but a count is an error wrapping
	// wire.ErrResponseInvalid.
	CountTokensRelease(body []byte) ([]byte, error)
}

// handleCountTokens serves a surface's token-counting route.
func (s *Server) handleCountTokens(surf wire.Surface, tc tokenCounter) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if o := observation(ctx); o != nil {
			o.api = surf.API()
		}
		pol, p, body, err := s.admitRequest(w, r)
		if err != nil {
			writeSurfaceError(w, surf, err)
			return
		}
		req, err := tc.ParseCountTokens(body, r.URL.Query())
		if err != nil {
			writeSurfaceError(w, surf, requestError(err))
			return
		}
		up, ok := pol.Router.Route(req.Model(), req.Operation())
		if !ok {
			writeSurfaceError(w, surf, &apiError{status: http.StatusNotFound, typ: typeInvalid, code: "model_not_found",
				message: "no upstream counts tokens for the requested model on this API", param: "model"})
			return
		}
		t, err := s.beginTurn(ctx, r, pol, p, req.Model(), req.ToolNames())
		if err != nil {
			writeSurfaceError(w, surf, err)
			return
		}
		mc := &modelCall{s: s, surf: surf, t: t, req: req, up: up}
		out, err := mc.countTokens(ctx, r, tc)
		if err != nil {
			reason := enforcement.ShutdownError
			if ctx.Err() != nil {
				reason = enforcement.ShutdownCancelled
			}
			t.end(ctx, reason)
			writeSurfaceError(w, surf, err)
			return
		}
		t.end(ctx, enforcement.ShutdownCompleted)
		h := w.Header()
		h.Set(HeaderSession, t.builder.SessionID)
		if t.worst != "" {
			h.Set(HeaderDecision, string(t.worst))
		}
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(out)))
		w.WriteHeader(http.StatusOK)
		w.Write(out)
	}
}

// countTokens emits pre_model_call over the counting request, sends the
// verdicted request upstream and checks the count.
func (mc *modelCall) countTokens(ctx context.Context, r *http.Request, tc tokenCounter) ([]byte, error) {
	s, t, req := mc.s, mc.t, mc.req
	orig := req.Messages()
	model := mc.model()
	if params := req.Params(); len(params) > 0 {
		model["params"] = params
	}
	fields := map[string]any{"model": model, "messages": orig, "request_id": newID("callreq-")}
	if tools := req.Tools(); len(tools) > 0 {
		fields["tools"] = tools
	}
	pre, err := t.emit(ctx, enforcement.PreModelCall, fields, enforcement.WithTargetValidator(req.CheckMessages))
	if err != nil {
		return nil, err
	}
	var newMessages any
	if final := pre.Context["messages"]; !jsonvalue.Equal(final, orig) {
		newMessages = final
	}
	upBody, err := req.UpstreamBody(newMessages)
	if err != nil {
		return nil, errorf(http.StatusInternalServerError, typeHostError, enforcement.ReasonTransformInvalid, "the verdicted request could not be written: %v", err)
	}
	uc := &upstreamCall{m: s.metrics, obs: observation(ctx), name: mc.up.Name()}
	defer uc.doneStatus()
	resp, err := s.callUpstream(ctx, uc, mc.up, req.Operation(), upBody, r.Header)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	const limit = 64 << 10 // a count is a few bytes
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		uc.doneErr(ctx, err)
	} else {
		uc.doneStatus()
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, errorf(499, typeGatewayError, "client_closed_request", "the client went away during the model call")
	case err != nil:
		return nil, errorf(http.StatusBadGateway, typeUpstream, "upstream_read_failed", "the upstream response could not be read")
	case len(b) > limit:
		return nil, errorf(http.StatusBadGateway, typeUpstream, "upstream_response_too_large", "the upstream token count exceeds %d bytes", limit)
	}
	out, err := tc.CountTokensRelease(b)
	if err != nil {
		if errors.Is(err, wire.ErrResponseInvalid) {
			return nil, errorf(http.StatusBadGateway, typeUpstream, "upstream_response_invalid", "the upstream response is not understood: %v", err)
		}
		return nil, errorf(http.StatusBadGateway, typeUpstream, "upstream_response_invalid", "the upstream token count is not understood")
	}
	return out, nil
}
