package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/seal"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/internal/wire/mcp"
	"github.com/hooks-gateway/hooks-gateway/metrics"
	"github.com/hooks-gateway/hooks-gateway/providers"
)

// apiMCP labels the MCP routes in contexts, metrics and logs.
const apiMCP wire.API = "mcp"

// mcpServer is one configured MCP server as the policy serves it.
type mcpServer struct {
	name    string
	url     string
	prefix  string
	headers http.Header
	client  *http.Client
}

// mcpRoutes are the policy's MCP servers and the extra methods clients may
// send them.
type mcpRoutes struct {
	servers      map[string]*mcpServer
	allowMethods []string
}

// buildMCP builds the MCP servers of m.
func buildMCP(m config.MCP) *mcpRoutes {
	routes := &mcpRoutes{servers: make(map[string]*mcpServer, len(m.Servers)), allowMethods: m.AllowMethods}
	for _, s := range m.Servers {
		routes.servers[s.Name] = &mcpServer{
			name: s.Name, url: s.URL, prefix: s.Prefix(), headers: s.RequestHeaders(),
			client: &http.Client{
				Transport: providers.NewTransport(config.DefaultConnectTimeout, s.Timeout),
				Timeout:   s.Timeout,
				// A redirect is relayed, never followed with the call's body.
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			},
		}
	}
	return routes
}

// bracketed reports whether the gateway brackets requests of method with
// pre_tool_call and post_tool_call: every method whose answer carries a
// server's content to the client (tools/call under its tool's name).
func bracketed(method string) bool {
	switch method {
	case mcp.MethodInitialize, mcp.MethodDiscover, mcp.MethodToolsCall, mcp.MethodToolsList,
		"resources/list", "resources/templates/list", "resources/read",
		"prompts/list", "prompts/get", "completion/complete":
		return true
	}
	return false
}

// handleMCP serves POST /mcp/{server}: one JSON-RPC message, mediated.
func (s *Server) handleMCP(w http.ResponseWriter, r *http.Request) {
	obs := observation(r.Context())
	if obs != nil {
		obs.api = apiMCP
	}
	pol, srv, p, ok := s.admitMCP(w, r)
	if !ok {
		return
	}
	obs.countMCP(srv.name)
	body, err := readBody(w, r, s.opts.MaxRequestBytes)
	if err != nil {
		writeError(w, err)
		return
	}
	m, err := mcp.Parse(body)
	obs.mcpMessage(m)
	if err == nil && (m.Kind == mcp.Request || m.Kind == mcp.Notification) {
		err = mcp.CheckStandardHeaders(r.Header, m)
	}
	if err != nil {
		writeJSONBody(w, http.StatusBadRequest, mcp.ErrorBody(idOf(m), rpcError(err)))
		return
	}
	switch m.Kind {
	case mcp.Notification:
		s.mcpNotification(w, r, srv, m)
	case mcp.Response:
		// The gateway forwards no server request, so no answer is awaited.
		writeJSONBody(w, http.StatusBadRequest, mcp.ErrorBody(nil, mcp.Errorf(mcp.CodeInvalidRequest,
			"no server request is open through the gateway: it answers servers' requests itself")))
	default:
		switch {
		case m.Method == mcp.MethodPing:
			obs.mcpDone(metrics.MCPAllowed)
			b, _ := mcp.ResultBody(m.ID, map[string]any{})
			writeJSONBody(w, http.StatusOK, b)
		case bracketed(m.Method) || slices.Contains(pol.mcp().allowMethods, m.Method):
			s.mcpCall(w, r, pol, p, srv, m)
		default:
			obs.mcpDone(metrics.MCPDenied) // refused by configuration
			// The method is not quoted back: it is the client's text.
			writeJSONBody(w, http.StatusOK, mcp.ErrorBody(m.ID, mcp.Errorf(mcp.CodeMethodNotFound,
				"the gateway does not mediate this method (mcp.allow_methods lists extra methods)")))
		}
	}
}

// handleMCPDelete serves DELETE /mcp/{server}: a session-based client
// ending its MCP session. It carries no content; the server's status is
// relayed.
func (s *Server) handleMCPDelete(w http.ResponseWriter, r *http.Request) {
	_, srv, _, ok := s.admitMCP(w, r)
	if !ok {
		return
	}
	sessionID, ok := s.openMCPSession(w, r, srv, nil)
	if !ok {
		return
	}
	h := srv.headers.Clone()
	if sessionID != "" {
		h.Set(mcp.HeaderSessionID, sessionID)
	}
	if v := r.Header.Get(mcp.HeaderProtocolVersion); mcp.IsRevision(v) {
		h.Set(mcp.HeaderProtocolVersion, v)
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodDelete, srv.url, nil)
	if err != nil {
		writeError(w, err)
		return
	}
	req.Header = h
	resp, err := srv.client.Do(req)
	if err != nil {
		writeError(w, errorf(http.StatusBadGateway, typeUpstream, "mcp_server_unreachable", "the MCP server %s could not be reached", srv.name))
		return
	}
	resp.Body.Close()
	w.WriteHeader(resp.StatusCode)
}

// handleMCPGet answers GET /mcp/{server}: the gateway opens no stream of
// server-initiated messages (what a server would send there reaches no
// verdict), which the transport lets a server refuse with 405.
func (s *Server) handleMCPGet(w http.ResponseWriter, r *http.Request) {
	if _, _, _, ok := s.admitMCP(w, r); !ok {
		return
	}
	w.Header().Set("Allow", "POST, DELETE")
	writeError(w, errorf(http.StatusMethodNotAllowed, typeInvalid, "method_not_allowed",
		"the gateway opens no server-initiated stream: server messages reach clients only as answers to their requests"))
}

// admitMCP authenticates an MCP request and finds its server, answering
// the client itself when it may not proceed.
func (s *Server) admitMCP(w http.ResponseWriter, r *http.Request) (*Policy, *mcpServer, Principal, bool) {
	pol := s.Policy()
	p, err := s.authenticate(r, pol)
	if err == nil {
		err = s.authorize(r.Context(), p, config.APIMCP, "")
	}
	if err != nil {
		writeError(w, err)
		return nil, nil, p, false
	}
	name := chi.URLParam(r, "server")
	srv, ok := pol.mcp().servers[name]
	if !ok || !p.allowsMCPServer(name) {
		// A server the key may not reach is as absent as an unknown one.
		writeError(w, errorf(http.StatusNotFound, typeNotFound, "mcp_server_not_found", "no MCP server of this name is configured for this key"))
		return nil, nil, p, false
	}
	return pol, srv, p, true
}

// allowsMCPServer reports whether p's key may reach the MCP server name.
func (p Principal) allowsMCPServer(name string) bool {
	return len(p.MCPServers) == 0 || slices.Contains(p.MCPServers, name)
}

// mcp is the policy's MCP routes (none when it was built without).
func (p *Policy) mcp() *mcpRoutes {
	if p.MCP == nil {
		return &mcpRoutes{}
	}
	return p.MCP
}

// mcpNotification passes a client notification the gateway knows to the
// server, or accepts one it withholds; any other is refused.
func (s *Server) mcpNotification(w http.ResponseWriter, r *http.Request, srv *mcpServer, m *mcp.Message) {
	switch m.Method {
	case "notifications/initialized", "notifications/cancelled": // passed on
	case "notifications/roots/list_changed", "notifications/progress":
		// Accepted, not passed on: they concern capabilities the gateway
		// withholds from servers.
		w.WriteHeader(http.StatusAccepted)
		return
	default:
		writeJSONBody(w, http.StatusBadRequest, mcp.ErrorBody(nil, mcp.Errorf(mcp.CodeMethodNotFound,
			"the gateway does not pass this notification")))
		return
	}
	params, err := forwardedParams(m)
	if err != nil {
		writeJSONBody(w, http.StatusBadRequest, mcp.ErrorBody(nil, rpcError(err)))
		return
	}
	body, err := mcp.RequestBody(nil, m.Method, params)
	if err != nil {
		writeJSONBody(w, http.StatusBadRequest, mcp.ErrorBody(nil, mcp.Errorf(mcp.CodeInvalidParams, "the notification cannot be written")))
		return
	}
	sessionID, ok := s.openMCPSession(w, r, srv, nil)
	if !ok {
		return
	}
	resp, err := srv.post(r.Context(), r.Header, sessionID, m.Method, params, nil, body)
	if err != nil {
		writeError(w, errorf(http.StatusBadGateway, typeUpstream, "mcp_server_unreachable", "the MCP server %s could not be reached", srv.name))
		return
	}
	resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.WriteHeader(resp.StatusCode)
}

// forwardedParams are the params of a forwarded notification as the
// gateway rebuilds them: no verdict judges a notification, so it carries
// only what the gateway reads the meaning of. notifications/initialized
// has none; notifications/cancelled names the request (an id, as the
// client's requests carry them) and loses its free-text reason and _meta.
func forwardedParams(m *mcp.Message) (map[string]any, error) {
	if m.Method != "notifications/cancelled" {
		return nil, nil
	}
	id := m.Params["requestId"]
	if mcp.CheckID(id) != nil {
		return nil, mcp.Errorf(mcp.CodeInvalidParams, "notifications/cancelled needs params.requestId, a string or an integer")
	}
	return map[string]any{"requestId": id}, nil
}

// mcpCall is one bracketed request: pre_tool_call over what the server
// would receive, the server's answer, post_tool_call over what the client
// would receive; only verdicted values cross.
func (s *Server) mcpCall(w http.ResponseWriter, r *http.Request, pol *Policy, p Principal, srv *mcpServer, m *mcp.Message) {
	ctx := r.Context()
	call, err := mcp.ProjectCall(m, srv.prefix)
	if err != nil {
		writeJSONBody(w, http.StatusOK, mcp.ErrorBody(m.ID, rpcError(err)))
		return
	}
	// A client's Mcp-Param-* header must carry one of its arguments' values.
	if _, err := mcp.ParamHeaders(r.Header, call.Args); err != nil {
		writeJSONBody(w, http.StatusBadRequest, mcp.ErrorBody(m.ID, rpcError(err)))
		return
	}
	mcpSession, ok := s.openMCPSession(w, r, srv, m)
	if !ok {
		return
	}
	agentID, err := s.requestAgent(r, p)
	if err != nil {
		writeError(w, err)
		return
	}
	id := s.sessionIDOf(r, pol, p, agentID, "")
	t, err := s.beginTurn(ctx, r, pol, p, agentID, id, "", nil, nil)
	if err != nil {
		ae := asAPIError(err)
		observation(ctx).mcpDone(mcpOutcomeOf(ae))
		s.mcpFailure(w, m, ae)
		return
	}
	mc := &mcpCallState{s: s, t: t, srv: srv, m: m, call: call, session: mcpSession}
	status, body, sessionID := mc.run(ctx, r)
	observation(ctx).mcpDone(mc.outcome)
	reason := enforcement.ShutdownCompleted
	if ctx.Err() != nil {
		reason = enforcement.ShutdownCancelled
	}
	t.end(ctx, reason)
	if sessionID != "" {
		w.Header().Set(mcp.HeaderSessionID, s.opts.MCPSeal.SealString(mcpSessionKind(srv), sessionID))
	}
	writeJSONBody(w, status, body)
}

// mcpSessionKind binds a sealed MCP session id to its server: a seal made
// for one server does not open for another.
func mcpSessionKind(srv *mcpServer) seal.Kind { return seal.Kind("mcp.session." + srv.name) }

// openMCPSession opens the client's Mcp-Session-Id: the client holds the
// gateway's seal of the id the server issued (which no verdict could
// judge), and the server gets back exactly its own. A value the gateway
// did not seal for this server is an unknown session: 404, the status
// that tells a client to start a new MCP session. m is the request being
// answered (nil for a notification or DELETE).
func (s *Server) openMCPSession(w http.ResponseWriter, r *http.Request, srv *mcpServer, m *mcp.Message) (string, bool) {
	v := r.Header.Get(mcp.HeaderSessionID)
	if v == "" {
		return "", true
	}
	sid, err := s.opts.MCPSeal.OpenString(mcpSessionKind(srv), v)
	if err != nil || !mcp.IsSessionID(sid) {
		writeJSONBody(w, http.StatusNotFound, mcp.ErrorBody(idOf(m), mcp.Errorf(mcp.CodeInvalidRequest,
			"the %s header names no MCP session this gateway opened for this server; initialize a new one", mcp.HeaderSessionID)))
		return "", false
	}
	return sid, true
}

// mcpCallState is one bracketed call in flight.
type mcpCallState struct {
	s    *Server
	t    *turn
	srv  *mcpServer
	m    *mcp.Message
	call *mcp.Call
	// args are the verdicted arguments, the ones the server received.
	args map[string]any
	// session is the server's MCP session id the client's seal opened to.
	session string
	// outcome is the call's metrics outcome once known ("" for an error);
	// transformed says a verdict rewrote the arguments or the result.
	outcome     string
	transformed bool
}

// run emits the call's points around the server's answer and returns the
// client's answer: its status, body and the server's session id.
func (mc *mcpCallState) run(ctx context.Context, r *http.Request) (int, []byte, string) {
	m, call := mc.m, mc.call
	ext := mc.extensions()
	toolCall := enforcement.ToolCall{ID: mcp.IDString(m.ID), Name: call.Name, Args: call.Args}
	fields := enforcement.PreToolFields(toolCall)
	fields["extensions"] = ext
	pre, err := mc.t.emit(ctx, enforcement.PreToolCall, fields, enforcement.WithTargetValidator(checkArgsObject))
	if err != nil {
		return mc.blocked(err)
	}
	mc.transformed = appliedTransform(pre)
	mc.args, _ = pre.Context.Target().(map[string]any)
	params := call.Params(m.Method, mc.args)
	body, err := mcp.RequestBody(m.ID, m.Method, params)
	if err != nil {
		return mc.blocked(errorf(http.StatusInternalServerError, typeHostError, enforcement.ReasonTransformInvalid, "the verdicted request could not be written: %v", err))
	}
	paramHeaders, _ := mcp.ParamHeaders(r.Header, mc.args) // checked against the client's arguments already
	mc.t.stage = stageUpstream
	start := time.Now()
	answer, sessionID, err := mc.srv.call(ctx, r.Header, mc.session, m, params, paramHeaders, body, mc.s.opts.StreamBufferLimit)
	if o := observation(ctx); o != nil {
		o.upstream += time.Since(start) // the server's time is not the gateway's overhead
	}
	if err != nil {
		var status *mcpStatusError
		if errors.As(err, &status) && status.code == http.StatusNotFound {
			// The server forgot the MCP session: the client must start a
			// new one (the transport's rule), so the status is relayed.
			return http.StatusNotFound, mcp.ErrorBody(m.ID, mcp.Errorf(mcp.CodeUnavailable, "the MCP session is unknown to the server; initialize a new one")), ""
		}
		mc.s.log.Warn("mcp server call failed", "server", mc.srv.name, "session", mc.t.builder.SessionID, "error", withoutQuoted(err.Error()))
		return http.StatusOK, mcp.ErrorBody(m.ID, mcp.Errorf(mcp.CodeUnavailable, "the MCP server %s did not answer the gateway: %s", mc.srv.name, serverFailure(err))), ""
	}
	value, isError, resultErr := mc.resultValue(answer)
	if resultErr != nil {
		return http.StatusOK, mcp.ErrorBody(m.ID, mcp.Errorf(mcp.CodeUnavailable, "the MCP server %s answered with an invalid result: %v", mc.srv.name, resultErr)), ""
	}
	toolCall.Args = mc.args
	fields = enforcement.PostToolFields(toolCall, value, isError)
	fields["tool_result"].(map[string]any)["duration_ms"] = jsonNumber(time.Since(start).Milliseconds())
	fields["extensions"] = ext
	validator := checkMethodResult
	if m.Method == mcp.MethodToolsCall {
		validator = mcp.CheckToolResult
	}
	post, err := mc.t.emit(ctx, enforcement.PostToolCall, fields, enforcement.WithTargetValidator(validator))
	if err != nil {
		status, body, _ := mc.blocked(err)
		return status, body, sessionID
	}
	mc.t.stage = stageRelease
	mc.transformed = mc.transformed || appliedTransform(post)
	out, err := mc.render(answer, post.Context.Target(), isError)
	if err != nil {
		return mc.blocked(errorf(http.StatusInternalServerError, typeHostError, enforcement.ReasonTransformInvalid, "the verdicted result could not be written: %v", err))
	}
	mc.outcome = metrics.MCPAllowed
	if mc.transformed {
		mc.outcome = metrics.MCPTransformed
	}
	return http.StatusOK, out, sessionID
}

// resultValue projects the server's answer as the tool result: a tools/call
// result by mcp.ToolResult, any other method's result less its _meta, and
// an error answer as its message with is_error set.
func (mc *mcpCallState) resultValue(answer *mcp.Message) (any, bool, error) {
	if answer.Error != nil {
		return answer.Error.Message, true, nil
	}
	if mc.m.Method == mcp.MethodToolsCall {
		return mcp.ToolResult(answer.Result)
	}
	result := mcp.MethodResult(answer.Result)
	if mc.m.Method == mcp.MethodToolsList {
		result, _ = mcp.WithoutUncallable(result)
	}
	return result, false, nil
}

// render writes the client's answer from the verdicted tool result.
func (mc *mcpCallState) render(answer *mcp.Message, value any, isError bool) ([]byte, error) {
	id := mc.m.ID
	if answer.Error != nil {
		msg, ok := value.(string)
		if !ok {
			b, err := jsonvalue.Marshal(value)
			if err != nil {
				return nil, err
			}
			msg = string(b)
		}
		e := &mcp.RPCError{Code: mcp.RelayedCode(answer.Error.Code), Message: msg}
		if d := mcp.VersionData(answer.Error.Code, answer.Error.Data); d != nil {
			e.Data = d // the revisions a client negotiates with, rebuilt
		}
		return mcp.ErrorBody(id, e), nil
	}
	if mc.m.Method == mcp.MethodToolsCall {
		result, err := mcp.WriteToolResult(value, isError)
		if err != nil {
			return nil, err
		}
		return mcp.ResultBody(id, result)
	}
	obj, ok := value.(map[string]any)
	if !ok {
		return nil, errors.New("the result is not an object")
	}
	return mcp.ResultBody(id, obj)
}

// blocked answers a call a verdict blocked, or one that failed before its
// answer: a tools/call with an error result carrying the reason (the
// agent's loop goes on and the model learns why), any other method with a
// JSON-RPC error.
func (mc *mcpCallState) blocked(err error) (int, []byte, string) {
	ae := mc.s.callError(apiMCP, mc.t.builder.SessionID, mc.t.stage, mc.t.point, err)
	mc.outcome = mcpOutcomeOf(ae)
	return mcpDenial(mc.m, ae)
}

// mcpFailure answers a request refused before its turn began.
func (s *Server) mcpFailure(w http.ResponseWriter, m *mcp.Message, ae *apiError) {
	status, body, _ := mcpDenial(m, ae)
	writeJSONBody(w, status, body)
}

// mcpDenial is the answer to m for ae: a verdict (or a failure the
// gateway closed on) as an error result of a tools/call, else a JSON-RPC
// error; the verdict's members ride in _meta / data, as in the model
// routes' error envelope.
func mcpDenial(m *mcp.Message, ae *apiError) (int, []byte, string) {
	verdict := map[string]any{"type": ae.typ, "code": ae.code, "message": ae.message}
	if ae.point != "" {
		verdict["interception_point"] = string(ae.point)
	}
	if ae.session != "" {
		verdict["session_id"] = ae.session
	}
	if ae.sequence != nil {
		verdict["sequence"] = jsonNumber(*ae.sequence)
	}
	if m.Method == mcp.MethodToolsCall && (ae.typ == typeDenied || ae.typ == typeHostError) {
		b, err := mcp.ResultBody(m.ID, mcp.DeniedResult(ae.message, verdict))
		if err == nil {
			return http.StatusOK, b, ""
		}
	}
	code := int64(mcp.CodeDenied)
	if ae.typ != typeDenied {
		code = mcp.CodeUnavailable
	}
	return http.StatusOK, mcp.ErrorBody(m.ID, &mcp.RPCError{Code: code, Message: ae.message, Data: verdict}), ""
}

// extensions are the call's context extensions: the policy's, the surface
// (api mcp), and the server and method, for policies that tell them apart
// beyond the tool's name; a tools/call's other params (its _meta) are
// shown here, as they reach the server.
func (mc *mcpCallState) extensions() map[string]any {
	ext := buildContextExtensions(mc.t.pol, apiMCP)
	gw := ext[ExtensionNamespace].(map[string]any)
	gw["mcp_server"], gw["mcp_method"] = mc.srv.name, mc.m.Method
	if len(mc.call.Rest) > 0 {
		gw["mcp_params"] = mc.call.Rest
	}
	return ext
}

// checkArgsObject keeps a verdicted pre_tool_call target an object: MCP
// arguments and params are objects.
func checkArgsObject(target any) error {
	if _, ok := target.(map[string]any); !ok {
		return errors.New("tool_call.args must stay an object")
	}
	return nil
}

// checkMethodResult keeps a verdicted result of a method other than
// tools/call an object.
func checkMethodResult(target any) error {
	if _, ok := target.(map[string]any); !ok {
		return errors.New("the result must stay an object")
	}
	return nil
}

func jsonNumber(n int64) any { return json.Number(strconv.FormatInt(n, 10)) }

// rpcError is err as a JSON-RPC error.
func rpcError(err error) *mcp.RPCError {
	var re *mcp.RPCError
	if errors.As(err, &re) {
		return re
	}
	return mcp.Errorf(mcp.CodeInvalidRequest, "%v", err)
}

// idOf is m's id, nil when m could not be read.
func idOf(m *mcp.Message) any {
	if m == nil {
		return nil
	}
	return m.ID
}

// mcpStatusError is a server's non-2xx answer.
type mcpStatusError struct{ code int }

func (e *mcpStatusError) Error() string { return fmt.Sprintf("the server answered HTTP %d", e.code) }

// serverFailure says what went wrong with a server call, without its text.
func serverFailure(err error) string {
	var status *mcpStatusError
	switch {
	case errors.As(err, &status):
		return status.Error()
	case errors.Is(err, mcp.ErrTooLarge):
		return mcp.ErrTooLarge.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return "it timed out"
	case errors.Is(err, errNoAnswer), errors.Is(err, errTooManyRequests):
		return err.Error()
	}
	return "the exchange failed"
}

var (
	errNoAnswer        = errors.New("its stream ended without the answer")
	errTooManyRequests = fmt.Errorf("it sent more than %d requests of its own before the answer", maxServerRequests)
)

// maxServerRequests bounds the server requests the gateway answers (with
// a refusal) while it waits for one answer.
const maxServerRequests = 8

// post sends one message to the server, with the client's MCP session
// (sessionID, opened from the client's seal) and protocol revision,
// the standard headers computed from the verdicted method and params, and
// the server's configured headers.
func (srv *mcpServer) post(ctx context.Context, client http.Header, sessionID, method string, params map[string]any, paramHeaders http.Header, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	h := srv.headers.Clone()
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if sessionID != "" {
		h.Set(mcp.HeaderSessionID, sessionID)
	}
	if v := client.Get(mcp.HeaderProtocolVersion); mcp.IsRevision(v) {
		h.Set(mcp.HeaderProtocolVersion, v)
	}
	if method != "" {
		mcp.SetStandardHeaders(h, method, params)
	}
	for k, vs := range paramHeaders {
		h[k] = vs
	}
	req.Header = h
	return srv.client.Do(req)
}

// call sends the verdicted request and reads the server's answer to it,
// from a JSON body or from its event stream (bounded by limit). Requests
// the server makes of the client meanwhile are refused to the server by
// the gateway; its notifications are not relayed (their text would reach
// the client unjudged).
func (srv *mcpServer) call(ctx context.Context, client http.Header, sessionID string, m *mcp.Message, params map[string]any, paramHeaders http.Header, body []byte, limit int64) (*mcp.Message, string, error) {
	resp, err := srv.post(ctx, client, sessionID, m.Method, params, paramHeaders, body)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		if a := refusal(resp, m, limit); a != nil {
			return a, "", nil
		}
		return nil, "", &mcpStatusError{code: resp.StatusCode}
	}
	issued := resp.Header.Get(mcp.HeaderSessionID)
	if issued != "" && !mcp.IsSessionID(issued) {
		return nil, "", errors.New("the server's session id is not visible ASCII")
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "text/event-stream" {
		b, err := readAllLimited(resp.Body, limit)
		if err != nil {
			return nil, "", err
		}
		a, err := mcp.Parse(b)
		if err != nil {
			return nil, "", err
		}
		if a.Kind != mcp.Response || !mcp.SameID(a.ID, m.ID) {
			return nil, "", errors.New("the server answered with another message than the response to the request")
		}
		return a, issued, nil
	}
	events := mcp.NewEventReader(resp.Body, limit)
	refused := 0
	for {
		a, err := events.Next()
		if errors.Is(err, io.EOF) {
			return nil, "", errNoAnswer
		}
		if err != nil {
			return nil, "", err
		}
		switch a.Kind {
		case mcp.Response:
			if mcp.SameID(a.ID, m.ID) {
				return a, issued, nil
			}
		case mcp.Request:
			// Each refusal is a request the gateway makes: a server that
			// keeps asking is cut off rather than answered without end.
			if refused++; refused > maxServerRequests {
				return nil, "", errTooManyRequests
			}
			srv.refuse(ctx, client, sessionID, a)
		}
	}
}

// refusal reads a server's 4xx answer that carries a JSON-RPC error for
// the request (an unsupported revision, a header the server disputes):
// the transport's way to refuse a request, which clients read as the
// request's error. It is judged like any error answer. A 404 stays a
// status: it tells the client its MCP session is gone.
func refusal(resp *http.Response, m *mcp.Message, limit int64) *mcp.Message {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode/100 != 4 || resp.StatusCode == http.StatusNotFound || mt != "application/json" {
		return nil
	}
	b, err := readAllLimited(resp.Body, min(limit, 64<<10))
	if err != nil {
		return nil
	}
	a, err := mcp.Parse(b)
	if err != nil || a.Kind != mcp.Response || a.Error == nil || (a.ID != nil && !mcp.SameID(a.ID, m.ID)) {
		return nil
	}
	return a
}

// refuse answers a server's request to the client on the client's
// behalf: the gateway relays none (sampling, elicitation and roots would
// carry content in both directions outside any verdict), and the
// capabilities it forwards declare none.
func (srv *mcpServer) refuse(ctx context.Context, client http.Header, sessionID string, req *mcp.Message) {
	body := mcp.ErrorBody(req.ID, mcp.Errorf(mcp.CodeMethodNotFound, "the gateway relays no server request to its clients"))
	resp, err := srv.post(ctx, client, sessionID, "", nil, nil, body)
	if err == nil {
		resp.Body.Close()
	}
}

// readAllLimited reads r to its end, failing beyond limit bytes.
func readAllLimited(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, mcp.ErrTooLarge
	}
	return b, nil
}
