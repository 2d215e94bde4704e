package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jcs"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/membudget"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/providers"
)

// handleModelCall serves one surface's model-call route: the request is
// admitted, parsed and projected by surf, and runs through the emissions
// (agent_startup, input, pre_model_call, the upstream call,
// post_model_call, output, agent_shutdown); only verdicted bytes reach the
// upstream and the client.
func (s *Server) handleModelCall(surf wire.Surface) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		mc, ok := s.openModelCall(w, r, surf, requestParser(surf, r), true)
		if !ok {
			return
		}
		defer mc.budget.Close()
		err := mc.run(r.Context(), w, r)
		mc.noteDeny(err)
		mc.close(r.Context(), w, err)
		mc.finish(r.Context(), w)
	}
}

// finish gives up a managed turn's lease once its answer is on the wire:
// the answer is flushed first, so the client does not wait for the store.
// The lease only ever outlives the answer by this one round trip: End
// waits for it like for any call in flight, and nothing is emitted under
// it after the turn ended.
func (mc *modelCall) finish(ctx context.Context, w http.ResponseWriter) {
	if mc.t.lease == "" {
		return
	}
	if f, ok := w.(http.Flusher); ok && ctx.Err() == nil {
		f.Flush()
	}
	mc.t.release(ctx)
}

// openModelCall admits a model-call request, parses it with parse, routes
// it to an upstream serving its operation, reserves its first bytes of the
// buffer budget and begins its turn; inputs says whether the call emits
// input for its trailing user messages. On failure it has answered the
// client in surf's envelope; on success the caller closes mc.budget and,
// once it has answered, calls mc.finish.
//
// Cheap checks come before expensive ones: the body's size (reading it),
// the number of messages (counted before any is decoded), authorization
// and routing, the budget, then the projection and the number of input
// emissions it implies, and only then anything recorded.
func (s *Server) openModelCall(w http.ResponseWriter, r *http.Request, surf wire.Surface, parse bodyParser, inputs bool) (*modelCall, bool) {
	ctx := r.Context()
	o := observation(ctx)
	if o != nil {
		o.api = surf.API()
	}
	// refuse answers a failure before the call's turn began.
	refuse := func(err error) {
		writeSurfaceError(w, surf, s.callError(surf.API(), "", stageAdmission, "", err))
	}
	pol, p, body, err := s.admitRequest(w, r)
	if err != nil {
		refuse(err)
		return nil, false
	}
	var query url.Values // nil (read as empty) without a query: parsing one allocates
	if r.URL.RawQuery != "" {
		query = r.URL.Query()
	}
	memo := s.sessionMemo(r, p)
	req, err := parse(body, query, memoOf(memo))
	if err != nil {
		refuse(requestError(err))
		return nil, false
	}
	if o != nil {
		o.stream = req.Stream()
	}
	if err := s.authorize(ctx, p, string(surf.API()), req.Model()); err != nil {
		refuse(err)
		return nil, false
	}
	up, ok := pol.Router.Route(req.Model(), req.Operation())
	if !ok {
		writeSurfaceError(w, surf, &apiError{status: http.StatusNotFound, typ: typeInvalid, code: "model_not_found",
			message: "no upstream serves the requested model on this API", param: "model"})
		return nil, false
	}
	clientTurn, err := clientTurnPoints(r, p)
	if err != nil {
		refuse(err)
		return nil, false
	}
	budget, err := s.admitBuffered()
	if err != nil {
		refuse(err)
		return nil, false
	}
	orig := req.Messages()
	if n := turnInputs(orig, turnStart(orig)); inputs && !clientTurn && n > s.opts.MaxInputMessages {
		budget.Close()
		writeSurfaceError(w, surf, &apiError{status: http.StatusBadRequest, typ: typeInvalid, code: "too_many_input_messages",
			message: fmt.Sprintf("the request ends in %d user messages, each an input emission; at most %d are accepted (limits.max_input_messages)", n, s.opts.MaxInputMessages)})
		return nil, false
	}
	agentID, err := s.requestAgent(r, p)
	if err != nil {
		budget.Close()
		refuse(err)
		return nil, false
	}
	id := s.sessionIDOf(r, pol, p, agentID, req.Model())
	if d, ok := s.replayedDeny(pol, p, id, surf.API(), body); ok {
		budget.Close()
		writeSurfaceError(w, surf, &d)
		return nil, false
	}
	var userInputsOf func() ([]int, []string)
	if inputs && !clientTurn && id != "" {
		userInputsOf = func() ([]int, []string) { return userInputs(orig) }
	}
	t, err := s.beginTurn(ctx, r, pol, p, agentID, id, req.Model(), req.ToolNames(), userInputsOf)
	if err != nil {
		budget.Close()
		refuse(err)
		return nil, false
	}
	t.releaseLate = true // the caller's finish gives the lease up
	if t.managed && memo != nil {
		t.memoOpt = enforcement.WithObjectMemo(memo)
	}
	return &modelCall{s: s, surf: surf, t: t, req: req, orig: orig, up: up, clientTurn: clientTurn, budget: budget, body: body}, true
}

// clientTurnPoints reports whether the request's client emits its own
// input and output (Agent-Hooks-Turn-Points: client). Only a managed
// session's client can (it alone can emit them into the session), and,
// on a gateway that authenticates clients, only with a key allowed to.
func clientTurnPoints(r *http.Request, p Principal) (bool, error) {
	v := strings.TrimSpace(r.Header.Get(HeaderTurnPoints))
	switch {
	case !strings.EqualFold(v, "client"):
		return false, nil // the gateway's, as without the header
	case r.Header.Get(HeaderSession) == "":
		return false, &apiError{status: http.StatusBadRequest, typ: typeInvalid, code: "turn_points_unmanaged",
			message: HeaderTurnPoints + ": client needs a managed session (" + HeaderSession + "): the client emits input and output into it", param: HeaderTurnPoints}
	case p.authenticated() && !p.ClientTurnPoints:
		return false, &apiError{status: http.StatusForbidden, typ: typeAuth, code: "turn_points_not_allowed",
			message: "this API key may not emit its own turn points (auth.api_keys[].client_turn_points)", param: HeaderTurnPoints}
	}
	return true, nil
}

// close ends the call's turn after it ran: with err, the session ends as
// errored (cancelled when the client went away) and err is answered; the
// call ends its session itself before it releases an answer, so this
// only covers a client that went away mid-release.
func (mc *modelCall) close(ctx context.Context, w http.ResponseWriter, err error) {
	if err == nil {
		mc.t.end(ctx, enforcement.ShutdownCompleted)
		return
	}
	reason := enforcement.ShutdownError
	if ctx.Err() != nil {
		reason = enforcement.ShutdownCancelled
	}
	ae := mc.apiError(err) // before the shutdown moves the stage
	mc.t.end(ctx, reason)
	writeSurfaceError(w, mc.surf, ae)
}

// apiError is err in its envelope; an internal_error is logged and
// counted (Server.callError).
func (mc *modelCall) apiError(err error) *apiError {
	return mc.s.callError(mc.surf.API(), mc.t.builder.SessionID, mc.t.stage, mc.t.point, err)
}

// modelCall is one model call on one surface.
type modelCall struct {
	s    *Server
	surf wire.Surface
	t    *turn
	req  wire.Request
	// orig is the request's projected conversation, req.Messages().
	orig []any
	up   providers.Upstream
	// clientTurn is set when the client emits input and output itself.
	clientTurn bool
	// budget holds the call's share of the buffer budget.
	budget *membudget.Account
	// body is the client's request body, as a retry would repeat it.
	body []byte
	// extensions is the contexts' extensions member, once looked up.
	extensions map[string]any
	// modelID and vendor are the model member's values, boxed once for
	// the call's contexts.
	modelID, vendor any
}

// model is the context's model member: the requested id and the upstream
// serving it (the spec's model object is closed: the surface goes in
// extensions, see modelFields).
func (mc *modelCall) model() map[string]any {
	if mc.modelID == nil {
		mc.modelID, mc.vendor = mc.req.Model(), mc.up.Name()
	}
	return map[string]any{"id": mc.modelID, "vendor": mc.vendor}
}

// modelFields are the members of a model call's contexts: model, and the
// policy's context extensions with the surface added
// (extensions.hooks_gateway.api). The extensions member is built once per
// policy and surface (Policy.contextExtensionsFor) and shared by every
// call's contexts (they adopt their fields and nothing writes into them).
func (mc *modelCall) modelFields(model map[string]any) map[string]any {
	if mc.extensions == nil {
		mc.extensions = mc.contextExtensions()
	}
	return map[string]any{"model": model, "extensions": mc.extensions}
}

// contextExtensions is the extensions member of the call's contexts.
func (mc *modelCall) contextExtensions() map[string]any {
	if pol := mc.t.pol; pol != nil {
		return pol.contextExtensionsFor(mc.surf.API())
	}
	return buildContextExtensions(nil, mc.surf.API())
}

// run takes the model call through its emissions and answers the client.
// It writes nothing to w unless it returns nil (or has committed a stream).
func (mc *modelCall) run(ctx context.Context, w http.ResponseWriter, r *http.Request) error {
	s, t, req := mc.s, mc.t, mc.req
	orig := mc.orig
	messages := orig
	gatewayTurn := !mc.clientTurn
	if gatewayTurn {
		var err error
		if messages, err = s.emitInputs(ctx, t, messages); err != nil {
			return err
		}
	}
	var requestID any = wire.MintID("callreq-") // boxed once, for pre and post
	upBody, err := mc.preModelCall(ctx, orig, messages, requestID)
	if err != nil {
		return err
	}
	t.postOwed = true // from here the call ends with its post_model_call, or is cut (turn.end)
	post := &postCall{mc: mc, requestID: requestID, gatewayTurn: gatewayTurn}
	post.upstream = upstreamCall{m: s.metrics, obs: observation(ctx), name: mc.up.Name()}
	defer post.upstream.doneStatus() // every path records it earlier; this is the safety net
	upHeader := withAccept(r.Header, req.Stream())
	if req.Stream() {
		// Keep-alive covers the whole wait, the upstream's time to first
		// byte included.
		ka := post.startKeepAlive(w)
		call := func() (*http.Response, error) {
			t.stage = stageUpstream
			return s.callUpstream(ctx, &post.upstream, mc.up, req.Operation(), upBody, upHeader)
		}
		if mc.streamingMode() == config.StreamingIncremental {
			return post.incremental(ctx, w, ka, mc.surf.(wire.Incremental), call)
		}
		return post.stream(ctx, w, ka, call)
	}
	t.stage = stageUpstream
	resp, err := s.callUpstream(ctx, &post.upstream, mc.up, req.Operation(), upBody, upHeader)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return post.json(ctx, w, resp)
}

// preModelCall emits pre_model_call over messages (the client's
// conversation orig after the input emissions) and renders the verdicted
// request for the upstream: byte for byte the client's when the verdict
// left the conversation as the client sent it. requestID is the
// request_id member, a string.
func (mc *modelCall) preModelCall(ctx context.Context, orig, messages []any, requestID any) ([]byte, error) {
	req := mc.req
	model := mc.model()
	if params := req.Params(); len(params) > 0 {
		model["params"] = params
	}
	fields := mc.modelFields(model)
	fields["messages"], fields["request_id"] = messages, requestID
	if tools := req.Tools(); len(tools) > 0 {
		fields["tools"] = tools
	}
	checked := &checkedBody{req: req}
	pre, err := mc.t.emit(ctx, enforcement.PreModelCall, fields, enforcement.WithTargetValidator(checked.check))
	if err != nil {
		return nil, err
	}
	var newMessages any // nil keeps the client's conversation byte for byte
	if final := pre.Context["messages"]; !jsonvalue.Equal(final, orig) {
		newMessages = final
	}
	body, err := checked.upstreamBody(newMessages)
	if err != nil {
		return nil, errorf(http.StatusInternalServerError, typeHostError, enforcement.ReasonTransformInvalid, "the verdicted request could not be written: %v", err)
	}
	return body, nil
}

// checkedBody is the write-back check of one pre_model_call. On a
// wire.BodyChecker request it keeps the body the check rendered for the
// verdicted target, which the upstream then receives without a second
// rendering of the same conversation.
type checkedBody struct {
	req    wire.Request
	target []any // the target the check rendered body for
	body   []byte
}

// check is the emission's target validator: req's CheckMessages.
func (c *checkedBody) check(target any) error {
	bc, ok := c.req.(wire.BodyChecker)
	if !ok {
		return c.req.CheckMessages(target)
	}
	body, err := bc.CheckedBody(target)
	if list, isList := target.([]any); err == nil && isList {
		c.target, c.body = list, body
	}
	return err
}

// upstreamBody is req.UpstreamBody(messages), reusing the checked body when
// messages is the very target the check rendered (the same backing array
// and length: the engine hands the host the context it checked).
func (c *checkedBody) upstreamBody(messages any) ([]byte, error) {
	if list, ok := messages.([]any); ok && c.body != nil && sameList(list, c.target) {
		return c.body, nil
	}
	return c.req.UpstreamBody(messages)
}

// withAccept is the client's header h, with the Accept header the
// upstream adapters choose for a request that does (stream) or does not
// stream when the client sent none: the verdicted body streams exactly
// when the client's request does, and without it each adapter would scan
// the whole body again to find out.
func withAccept(h http.Header, stream bool) http.Header {
	if len(h.Values("Accept")) > 0 {
		return h
	}
	h = h.Clone()
	if h == nil {
		h = http.Header{}
	}
	if stream {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	return h
}

// sameList reports whether a and b are the same non-empty slice.
func sameList(a, b []any) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}

// callUpstream sends the verdicted request and maps transport failures and
// non-2xx answers to their client-facing errors. uc times the call; the
// caller ends it once a 2xx body has been read.
func (s *Server) callUpstream(ctx context.Context, uc *upstreamCall, up providers.Upstream, op wire.Operation, body []byte, h http.Header) (*http.Response, error) {
	// The records held so far (agent_startup, input, pre_model_call …)
	// are written before the request they allowed leaves.
	enforcement.HeldRecordsFrom(ctx).Flush()
	ctx, h = s.startUpstreamSpan(ctx, uc, h)
	uc.start = time.Now()
	resp, err := up.Send(ctx, op, body, h)
	if err != nil {
		uc.doneErr(ctx, err)
		if ctx.Err() != nil {
			return nil, errorf(499, typeGatewayError, "client_closed_request", "the client went away during the model call")
		}
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			return nil, errorf(http.StatusGatewayTimeout, typeUpstream, "upstream_timeout", "upstream %s did not answer in time", up.Name())
		case errors.Is(err, providers.ErrInvalidRequest):
			return nil, errorf(http.StatusBadRequest, typeInvalid, "invalid_request", "upstream %s cannot serve this request: %v", up.Name(), err)
		}
		s.log.Warn("upstream request failed", "upstream", up.Name(), "error", withoutURL(err))
		return nil, errorf(http.StatusBadGateway, typeUpstream, "upstream_unavailable", "upstream %s could not be reached", up.Name())
	}
	uc.status = resp.StatusCode
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		err := upstreamStatusError(up.Name(), resp)
		resp.Body.Close()
		uc.doneStatus()
		return nil, err
	}
	return resp, nil
}

// turnStart is the index of the first message of the new turn: the
// messages after the conversation's last assistant message or tool
// result, len(messages) when it ends in one. A turn's user messages are
// its inputs; the system and developer messages among them are not, and
// do not hide them (Claude Code ends every request with a system message
// after the user's).
func turnStart(messages []any) int {
	first := len(messages)
	for first > 0 {
		m, _ := messages[first-1].(map[string]any)
		switch m["role"] {
		case "user", "system", "developer":
			first--
			continue
		}
		break
	}
	return first
}

// turnInputs counts the user messages of the turn starting at first.
func turnInputs(messages []any, first int) int {
	n := 0
	for _, m := range messages[first:] {
		if m.(map[string]any)["role"] == "user" {
			n++
		}
	}
	return n
}

// emitInputs emits input for the user messages the session has not judged
// (inputsToJudge) and writes input transforms back into the messages.
func (s *Server) emitInputs(ctx context.Context, t *turn, messages []any) ([]any, error) {
	which, ids, err := s.inputsToJudge(ctx, t, messages)
	if err != nil {
		return nil, err
	}
	for _, i := range which {
		m := messages[i].(map[string]any)
		out, err := t.emit(ctx, enforcement.Input, enforcement.InputFields(m["content"], "user"),
			enforcement.WithTargetValidator(validateInputTarget))
		if err != nil {
			return nil, err
		}
		in, _ := out.Context["input"].(map[string]any)
		if !jsonvalue.Equal(in["content"], m["content"]) {
			cp := make(map[string]any, len(m))
			for k, v := range m {
				cp[k] = v
			}
			cp["content"] = in["content"]
			messages = append([]any(nil), messages...)
			messages[i] = cp
		}
	}
	// Recorded once every input proceeded (a denied one is judged again
	// when the client sends it again), by the step that numbers the
	// turn's next emission, pre_model_call.
	t.pendingInputs = ids
	return messages, nil
}

// inputsToJudge returns the indexes of the user messages to emit input
// for, in order, and, in a managed session, their identities to record
// once they proceeded. A per-request session judges the new turn's user
// messages. A managed session judges every user message it has not judged
// before, wherever it sits in the conversation (a history the client
// edited or made up reaches input too), and only those: an agent that
// sends its whole history every turn is not judged again on it. Past
// limits.max_input_messages, the newest are the inputs; the others reach
// policies at pre_model_call only.
func (s *Server) inputsToJudge(ctx context.Context, t *turn, messages []any) ([]int, []string, error) {
	if !t.managed || s.opts.Store == nil {
		var which []int
		for i := turnStart(messages); i < len(messages); i++ {
			if messages[i].(map[string]any)["role"] == "user" {
				which = append(which, i)
			}
		}
		return which, nil, nil
	}
	at, ids := t.inputAt, t.inputIDs
	if ids == nil {
		at, ids = userInputs(messages)
	}
	if len(ids) == 0 {
		return nil, nil, nil
	}
	judged := t.judged
	if len(judged) != len(ids) { // BeginCall could not tell (the session was Starting)
		var err error
		if judged, err = s.opts.Store.InputsJudged(ctx, t.key, ids); err != nil {
			return nil, nil, s.sessionStoreError(ctx, t.pol, err, t.builder.SessionID, enforcement.Input)
		}
	}
	var which []int
	var fresh []string
	for j, done := range judged {
		if !done {
			which, fresh = append(which, at[j]), append(fresh, ids[j])
		}
	}
	if n := len(which) - s.opts.MaxInputMessages; s.opts.MaxInputMessages > 0 && n > 0 {
		which, fresh = which[n:], fresh[n:]
	}
	return which, fresh, nil
}

// userInputs are the indexes and identities (inputIdentity) of the user
// messages of messages, a managed session's candidates for input.
func userInputs(messages []any) (at []int, ids []string) {
	for i, m := range messages {
		if m.(map[string]any)["role"] != "user" {
			continue
		}
		id, err := inputIdentity(m)
		if err != nil {
			continue // outside the canonical domain: pre_model_call judges it (and refuses it)
		}
		at, ids = append(at, i), append(ids, id)
	}
	return at, ids
}

// inputIdentity identifies a user message across turns: the SHA-256 of
// its canonical JSON (RFC 8785), the same whatever order the client wrote
// its members in.
func inputIdentity(m any) (string, error) {
	h := sha256.New()
	if err := jcs.HashCanonical(h, m, 0); err != nil {
		return "", err
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])[:16]), nil
}

// validateInputTarget checks that a transformed input can become a user
// message again: content must stay a string or an array of content parts.
func validateInputTarget(target any) error {
	in, ok := target.(map[string]any)
	if !ok {
		return errors.New("input is not an object")
	}
	switch c := in["content"].(type) {
	case string:
	case []any:
		for i, p := range c {
			if _, ok := p.(map[string]any); !ok {
				return fmt.Errorf("input.content[%d] is not a content part object", i)
			}
		}
	default:
		return errors.New("input.content must be a string or an array of content parts")
	}
	if in["role"] != "user" {
		return errors.New("input.role cannot change")
	}
	return nil
}

// admitRequest authenticates the client and reads its bounded JSON body
// under the policy in effect.
func (s *Server) admitRequest(w http.ResponseWriter, r *http.Request) (*Policy, Principal, []byte, error) {
	pol := s.Policy()
	p, err := s.authenticate(r, pol)
	if err != nil {
		return nil, Principal{}, nil, err
	}
	body, err := readBody(w, r, s.opts.MaxRequestBytes)
	if err != nil {
		return nil, Principal{}, nil, err
	}
	return pol, p, body, nil
}

// isJSONMediaType reports whether the Content-Type value v parses
// (mime.ParseMediaType) as application/json. The value clients send is
// answered without parsing, which allocates.
func isJSONMediaType(v string) bool {
	if v == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(v)
	return err == nil && mt == "application/json"
}

// readBody reads a bounded request body.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	// Required even on an empty body: a request without it is one any web
	// page can send cross-site without a preflight.
	if !isJSONMediaType(r.Header.Get("Content-Type")) {
		return nil, errorf(http.StatusUnsupportedMediaType, typeInvalid, "unsupported_media_type", "Content-Type must be application/json (the gateway accepts JSON requests only)")
	}
	body, err := readAllSized(http.MaxBytesReader(w, r.Body, limit), min(r.ContentLength, limit+1))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errorf(http.StatusRequestEntityTooLarge, typeInvalid, "request_too_large", "the request body exceeds %d bytes", limit)
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, errorf(http.StatusRequestTimeout, typeInvalid, "request_timeout", "the request did not arrive within server.read_timeout")
		}
		return nil, errorf(http.StatusBadRequest, typeInvalid, "body_unreadable", "the request body could not be read")
	}
	return body, nil
}

// requestError maps a surface's validation error to a 400 naming the field.
func requestError(err error) error {
	var re *wire.RequestError
	if errors.As(err, &re) {
		code := "invalid_request"
		if re.Code != "" {
			code = re.Code
		}
		return &apiError{status: http.StatusBadRequest, typ: typeInvalid, code: code, message: re.Error(), param: re.Field}
	}
	return errorf(http.StatusBadRequest, typeInvalid, "invalid_request", "the request is not valid for this API")
}

// upstreamStatusError answers a non-2xx upstream. Client errors (4xx, such
// as 401 or 429) keep their status so clients react as they would
// upstream; server errors become 502. The upstream's own message is not
// relayed because it may quote request content.
func upstreamStatusError(name string, resp *http.Response) error {
	status := http.StatusBadGateway
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		status = resp.StatusCode
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return errorf(status, typeUpstream, "upstream_status_"+strconv.Itoa(resp.StatusCode), "upstream %s answered HTTP %d", name, resp.StatusCode)
}

// withoutURL is err less the request URL a transport error quotes: an
// upstream URL can carry the request's model name (an Azure deployment),
// which is payload.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}
