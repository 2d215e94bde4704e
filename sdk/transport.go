package sdk

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Headers that join a chat completion to a gateway session (the gateway's
// stable names).
const (
	// HeaderSession names the managed session a model call belongs to.
	HeaderSession = "Agent-Hooks-Session"
	// HeaderTurnPoints set to "client" tells the gateway that the agent
	// emits input and output itself, so the gateway emits only
	// pre_model_call and post_model_call for the call.
	HeaderTurnPoints = "Agent-Hooks-Turn-Points"
	// HeaderAgent is agent.id on the gateway's contexts when the gateway key
	// does not name the agent.
	HeaderAgent = "Agent-Hooks-Agent"
)

// ErrLocalSession is returned by a Transport of a session that does not
// enforce through a gateway: its model calls would start a second,
// unrelated trail under the same session id at the gateway.
var ErrLocalSession = errors.New("agent-hooks: Transport needs a session created with NewRemoteSession")

// Transport returns an http.RoundTripper that routes the agent's model calls
// through the gateway in this session: each request is cloned and sent with
// Agent-Hooks-Session (the session id), Agent-Hooks-Turn-Points: client (the
// SDK emits input and output itself) and Agent-Hooks-Agent (the agent id),
// and with Authorization: Bearer <RemoteConfig.APIKey> when the request
// carries no Authorization of its own. base performs the requests; nil
// means http.DefaultTransport.
//
// With openai-go, point the client at the gateway's /v1 and use the
// transport:
//
//	client := openai.NewClient(
//		option.WithBaseURL(gatewayURL+"/v1"),
//		option.WithAPIKey(gatewayKey),
//		option.WithHTTPClient(&http.Client{Transport: session.Transport(nil)}),
//	)
//
// Call Start before the first model call: the session's agent_startup must
// be its first emission, and the gateway claims a session it has not seen
// started with its own agent_startup. The transport therefore fails closed:
// until Start has returned successfully, after End, once the session is
// blocked, for a session not created with NewRemoteSession, and for a
// request not addressed to the gateway (another scheme, host or path
// prefix than RemoteConfig.BaseURL) it returns an error and sends nothing.
func (s *Session) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	r, _ := s.em.(*remoteEmitter)
	return &sessionTransport{s: s, remote: r, base: base}
}

// sessionTransport is the RoundTripper Session.Transport returns.
type sessionTransport struct {
	s      *Session
	remote *remoteEmitter
	base   http.RoundTripper
}

// RoundTrip sends req through the gateway in the session, or refuses it.
func (t *sessionTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.check(req); err != nil {
		if req.Body != nil {
			req.Body.Close() // RoundTrip owns the body, even on error
		}
		return nil, fmt.Errorf("agent-hooks transport: %w", err)
	}
	out := req.Clone(req.Context())
	out.Header.Set(HeaderSession, t.remote.sessionID)
	out.Header.Set(HeaderTurnPoints, "client")
	out.Header.Set(HeaderAgent, t.remote.agent.ID)
	if t.remote.apiKey != "" && out.Header.Get("Authorization") == "" {
		out.Header.Set("Authorization", "Bearer "+t.remote.apiKey)
	}
	return t.base.RoundTrip(out)
}

// check refuses a model call that would escape the session.
func (t *sessionTransport) check(req *http.Request) error {
	if t.remote == nil {
		return ErrLocalSession
	}
	t.s.mu.Lock()
	started, blocked, ended := t.s.started, t.s.blocked, t.s.ended
	t.s.mu.Unlock()
	switch {
	case ended:
		return ErrSessionEnded
	case blocked:
		return ErrSessionBlocked
	case !started || !t.remote.claimed.Load():
		// started alone is not enough: the agent_startup may still be in
		// flight, and a model call arriving first would claim the session.
		return ErrNotStarted
	}
	if req.URL == nil || !t.addressedToGateway(req) {
		return errors.New("the request is not addressed to the gateway at RemoteConfig.BaseURL")
	}
	return nil
}

// addressedToGateway reports whether req goes to the gateway: same scheme
// and host as the base URL, and a path under its prefix.
func (t *sessionTransport) addressedToGateway(req *http.Request) bool {
	b, u := t.remote.base, req.URL
	if !strings.EqualFold(u.Scheme, b.Scheme) || !strings.EqualFold(u.Host, b.Host) {
		return false
	}
	return b.Path == "" || u.Path == b.Path || strings.HasPrefix(u.Path, b.Path+"/")
}
