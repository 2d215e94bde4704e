package proxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"

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
		mc, ok := s.openModelCall(w, r, surf, countParser(tc, r), false)
		if !ok {
			return
		}
		defer mc.budget.Close()
		ctx := r.Context()
		defer mc.finish(ctx, w)
		out, err := mc.countTokens(ctx, r, tc)
		mc.close(ctx, w, err)
		if err != nil {
			return
		}
		h := w.Header()
		h.Set(HeaderSession, mc.t.sessionHeader())
		if mc.t.worst != "" {
			h.Set(HeaderDecision, string(mc.t.worst))
		}
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(out)))
		w.WriteHeader(http.StatusOK)
		w.Write(out)
	}
}

// countTokens emits pre_model_call over the counting request (a count is
// no turn: no input, no output), sends the verdicted request upstream and
// checks the count.
func (mc *modelCall) countTokens(ctx context.Context, r *http.Request, tc tokenCounter) ([]byte, error) {
	s, req := mc.s, mc.req
	orig := mc.orig
	upBody, err := mc.preModelCall(ctx, orig, orig, wire.MintID("callreq-"))
	if err != nil {
		return nil, err
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
