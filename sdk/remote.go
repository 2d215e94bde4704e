package sdk

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// EmitPath is the gateway's emit endpoint, relative to its root.
const EmitPath = "/v1/agent-hooks/emit"

// DefaultRemoteTimeout bounds one emit call when RemoteConfig.Timeout is 0.
// It exceeds the gateway's default interceptor timeout (5 s) so that a slow
// policy is reported by the gateway (host_error:interceptor_timeout with its
// own record) before the SDK gives up on the call.
const DefaultRemoteTimeout = 10 * time.Second

// maxAnswerBytes bounds an emit answer: a context is at most 5 MiB by
// default, and the answer carries the enforced target and a verdict that
// may hold a transform value of similar size.
const maxAnswerBytes = 32 << 20

// ErrSessionConflict is matched (errors.Is) by every session-state refusal
// of the gateway (HTTP 409); the concrete error is a *SessionConflictError
// carrying the gateway's code.
var ErrSessionConflict = errors.New("agent-hooks: session state conflict")

// Gateway codes of the emit API's 409 answers.
const (
	CodeSessionNotStarted     = "session_not_started"
	CodeSessionAlreadyStarted = "session_already_started"
	CodeSessionEnded          = "session_ended"
	CodeSessionBlocked        = "session_blocked"
)

// SessionConflictError is the gateway refusing an emission because of the
// session's state (HTTP 409). It matches ErrSessionConflict, and also
// ErrNotStarted, ErrSessionEnded or ErrSessionBlocked for the codes
// session_not_started, session_ended and session_blocked, so callers can
// treat a remote session like a local one.
type SessionConflictError struct {
	Point     enforcement.Point
	SessionID string
	// Code is the gateway's error code, e.g. session_already_started.
	Code string
}

func (e *SessionConflictError) Error() string {
	return fmt.Sprintf("agent-hooks: gateway refused %s in session %s: %s", e.Point, e.SessionID, e.Code)
}

// Unwrap exposes ErrSessionConflict and the local sentinel matching Code.
func (e *SessionConflictError) Unwrap() []error {
	errs := []error{ErrSessionConflict}
	switch e.Code {
	case CodeSessionNotStarted:
		errs = append(errs, ErrNotStarted)
	case CodeSessionEnded:
		errs = append(errs, ErrSessionEnded)
	case CodeSessionBlocked:
		errs = append(errs, ErrSessionBlocked)
	}
	return errs
}

// RemoteConfig configures a Session that enforces through a gateway's emit
// API (POST {BaseURL}/v1/agent-hooks/emit): the gateway runs the central
// policy, assigns the sequence and writes the records.
type RemoteConfig struct {
	// BaseURL is the gateway root, e.g. http://localhost:8080 (required).
	// The emit API and, through Session.Transport, the chat completions are
	// reached under it.
	BaseURL string
	// Agent identifies the agent; ID and Framework are required.
	Agent enforcement.Agent
	// SessionID defaults to a random 128-bit hex id. The gateway accepts
	// 1–128 printable ASCII characters without spaces.
	SessionID string
	// APIKey is the gateway key, sent as Authorization: Bearer (optional).
	APIKey string
	// HTTPClient defaults to a client with its own tuned transport. Its
	// Timeout, if any, applies on top of Timeout.
	HTTPClient *http.Client
	// Timeout bounds each emit call: 0 means DefaultRemoteTimeout (10 s),
	// a negative value disables the bound (the caller's ctx still applies).
	Timeout time.Duration
	// Sink receives every record: the gateway's (decoded from each answer)
	// and the local host-failure records of emissions that failed closed.
	// Its errors and panics are ignored.
	Sink enforcement.RecordSink
	// Common optional members sent in every context (trace, tenant, actor,
	// extensions, …). The gateway-owned members spec, timestamp, sequence
	// and target, and the SDK-owned interception_point, agent and session,
	// are rejected.
	Common map[string]any
	// Policy is the gateway's declared surface, stated on the records the
	// SDK writes itself until the gateway's own records say otherwise
	// (see GatewayPolicy). The zero value is the gateway's defaults.
	Policy GatewayPolicy
}

// NewRemoteSession returns a session enforcing through the gateway at
// cfg.BaseURL. Nothing is sent until Start, which must come first: the
// gateway refuses every other emission in a session it has not seen start.
func NewRemoteSession(cfg RemoteConfig) (*Session, error) {
	base, err := parseBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	if cfg.Agent.ID == "" || cfg.Agent.Framework == "" {
		return nil, errors.New("sdk: Agent.ID and Agent.Framework are required")
	}
	if !validFramework(cfg.Agent.Framework) {
		return nil, errors.New("sdk: Agent.Framework must match ^[a-z0-9_-]+$")
	}
	id := cfg.SessionID
	if id == "" {
		if id, err = randomSessionID(); err != nil {
			return nil, err
		}
	} else if err := validSessionID(id); err != nil {
		return nil, err
	}
	common, err := commonTree(cfg.Common)
	if err != nil {
		return nil, err
	}
	declared, err := cfg.Policy.validate()
	if err != nil {
		return nil, err
	}
	client := cfg.HTTPClient
	if client == nil {
		client = defaultHTTPClient()
	}
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = DefaultRemoteTimeout
	}
	r := &remoteEmitter{
		client:    client,
		base:      base,
		emitURL:   base.JoinPath(EmitPath).String(),
		apiKey:    cfg.APIKey,
		agent:     cfg.Agent,
		sessionID: id,
		timeout:   timeout,
		sink:      cfg.Sink,
		common:    common,
		declared:  declared,
		// A copy: the caller may change its map after the call.
		pointModes: maps.Clone(cfg.Policy.PointModes),
	}
	return &Session{em: r, id: id}, nil
}

// parseBaseURL checks the gateway root: absolute http(s), no query or
// fragment. A trailing slash is dropped.
func parseBaseURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("sdk: RemoteConfig.BaseURL is required")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("sdk: RemoteConfig.BaseURL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("sdk: RemoteConfig.BaseURL must be an absolute http or https URL")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, errors.New("sdk: RemoteConfig.BaseURL must not carry credentials, a query or a fragment")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

func validFramework(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' && c != '-' {
			return false
		}
	}
	return s != ""
}

// validSessionID applies the gateway's session id alphabet, so a bad id
// fails at construction rather than at the first emission.
func validSessionID(id string) error {
	if len(id) > 128 {
		return errors.New("sdk: SessionID is longer than 128 bytes")
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x21 || c > 0x7e {
			return fmt.Errorf("sdk: SessionID has byte 0x%02x at offset %d: want printable ASCII without spaces", c, i)
		}
	}
	return nil
}

func randomSessionID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("sdk: session id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// reservedMember reports whether Common may not set member k: the gateway
// owns spec, timestamp, sequence and target; the SDK owns the rest.
func reservedMember(k string) bool {
	switch k {
	case "spec", "timestamp", "sequence", "target", "interception_point", "agent", "session":
		return true
	}
	return false
}

// commonTree converts Common to value trees once, rejecting reserved keys
// and values without a JSON representation.
func commonTree(common map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(common))
	for k, v := range common {
		if reservedMember(k) {
			return nil, fmt.Errorf("sdk: RemoteConfig.Common must not set %q", k)
		}
		tv, err := jsonvalue.FromGo(v)
		if err != nil {
			return nil, fmt.Errorf("sdk: RemoteConfig.Common[%q]: %w", k, err)
		}
		out[k] = tv
	}
	return out, nil
}

// defaultHTTPClient is a client with its own transport, sized for an agent
// that emits from several goroutines (parallel tool calls) to one gateway.
// Emit calls are bounded by RemoteConfig.Timeout through their context.
func defaultHTTPClient() *http.Client {
	t := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   32,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{Transport: t}
}

// remoteEmitter sends contexts to the gateway's emit API.
type remoteEmitter struct {
	client    *http.Client
	base      *url.URL
	emitURL   string
	apiKey    string
	agent     enforcement.Agent
	sessionID string
	timeout   time.Duration
	sink      enforcement.RecordSink
	common    map[string]any

	// claimed is set once the gateway accepted this session's
	// agent_startup; Transport lets model calls through only then.
	claimed atomic.Bool

	// declared and pointModes are RemoteConfig.Policy, read-only.
	declared   recordPolicy
	pointModes map[enforcement.Point]enforcement.Mode

	// mu guards the policy the gateway's records stated (per point and
	// latest), so local host-failure records describe the same policy.
	mu     sync.Mutex
	learnt map[enforcement.Point]recordPolicy
	latest *recordPolicy
	// trailID is the session id the gateway records the session under,
	// learnt from its first record: the client's id, or "<tenant>/<id>"
	// when the gateway key has a tenant, either followed by
	// "~<incarnation>" on a gateway that mints one (namesSession). ""
	// until then.
	trailID string
}

// ownRecord reports whether a gateway record's session_id is this
// session's, learning the trail id from the first one.
func (r *remoteEmitter) ownRecord(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.trailID != "" {
		return id == r.trailID
	}
	if namesSession(id, r.sessionID) {
		r.trailID = id
		return true
	}
	return false
}

// incarnationLen is the length of the incarnation a gateway on the memory
// store appends to a session's trail id ("~" and lowercase hex digits).
const incarnationLen = 12

// namesSession reports whether trail is a gateway's trail id for the
// client's session id: the id, or "<tenant>/<id>", followed by
// "~<incarnation>" where the gateway's store mints one per claim.
func namesSession(trail, id string) bool {
	named := func(name string) bool {
		return name == id || (strings.HasSuffix(name, "/"+id) && len(name) > len(id)+1)
	}
	if n := len(trail) - incarnationLen - 1; n > 0 && trail[n] == '~' && isLowerHex(trail[n+1:]) && named(trail[:n]) {
		return true
	}
	return named(trail)
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// trail is the session id local records carry: the gateway's trail id
// once known, else the client's.
func (r *remoteEmitter) trail() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.trailID != "" {
		return r.trailID
	}
	return r.sessionID
}

// emitAnswer is the emit API's 200 body.
type emitAnswer struct {
	Proceed *bool           `json:"proceed"`
	Mode    string          `json:"mode"`
	Verdict json.RawMessage `json:"verdict"`
	Target  json.RawMessage `json:"target"`
	Record  json.RawMessage `json:"record"`
}

// errorAnswer is the OpenAI error envelope of the gateway's other answers.
type errorAnswer struct {
	Error *struct {
		Type string `json:"type"`
		Code string `json:"code"`
	} `json:"error"`
}

// failure is an emission that failed closed on the SDK side.
type failure struct {
	reason  string
	message string
}

func (r *remoteEmitter) emit(ctx context.Context, point enforcement.Point, fields map[string]any) (*enforcement.Outcome, error) {
	if !point.Valid() {
		return nil, fmt.Errorf("agent-hooks: unknown interception point %q", point)
	}
	c, err := r.context(point, fields)
	var body []byte
	if err == nil {
		body, err = jsonvalue.Marshal(map[string]any(c))
	}
	if err != nil {
		// The value cannot be put on the wire: nothing reached the gateway
		// (no sequence number was taken), so only the SDK can record the
		// failure (§10.3).
		ts := time.Now().UTC().Format(enforcement.TimestampFormat)
		r.hostFailure(ctx, point, enforcement.ReasonContextInvalid, err.Error())
		return nil, &enforcement.ProjectionError{Point: point, SessionID: r.trail(), Sequence: -1, Timestamp: ts, Err: err}
	}
	out, f, err := r.post(ctx, point, c, body)
	switch {
	case err != nil:
		return nil, err
	case f != nil:
		return r.failClosed(ctx, point, c, *f), nil
	}
	if point == enforcement.AgentStartup && out.Proceed {
		r.claimed.Store(true)
	}
	return out, nil
}

// context builds the emitted members: Common, the point's fields,
// interception_point, agent and session, as value trees that share nothing
// with the caller's values.
func (r *remoteEmitter) context(point enforcement.Point, fields map[string]any) (enforcement.Context, error) {
	c := make(enforcement.Context, len(fields)+len(r.common)+4)
	for k, v := range r.common {
		c[k] = jsonvalue.DeepCopy(v)
	}
	for k, v := range fields {
		tv, err := jsonvalue.FromGo(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		c[k] = tv
	}
	agent := map[string]any{"id": r.agent.ID, "framework": r.agent.Framework}
	if r.agent.Name != "" {
		agent["name"] = r.agent.Name
	}
	if r.agent.Version != "" {
		agent["version"] = r.agent.Version
	}
	c["interception_point"] = string(point)
	c["agent"] = agent
	c["session"] = map[string]any{"id": r.sessionID}
	return c, nil
}

// post sends one emission. It returns the outcome of a 200 answer, a
// failure to fail closed on, or an error (session conflict, the caller's
// ctx ending).
func (r *remoteEmitter) post(ctx context.Context, point enforcement.Point, c enforcement.Context, body []byte) (*enforcement.Outcome, *failure, error) {
	callCtx, cancel := ctx, context.CancelFunc(func() {})
	if r.timeout > 0 {
		callCtx, cancel = context.WithTimeout(ctx, r.timeout)
	}
	defer cancel()
	req, err := http.NewRequestWithContext(callCtx, http.MethodPost, r.emitURL, bytes.NewReader(body))
	if err != nil {
		return nil, &failure{enforcement.ReasonInterceptorFailed, "agent-hooks gateway request could not be built"}, nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if r.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.apiKey)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		f, cerr := r.classify(ctx, callCtx, point, err, "agent-hooks gateway unreachable")
		return nil, f, cerr
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		f, cerr := r.classify(ctx, callCtx, point, err, "agent-hooks gateway answer could not be read")
		return nil, f, cerr
	}
	if len(answer) > maxAnswerBytes {
		return nil, &failure{enforcement.ReasonInterceptorFailed, "agent-hooks gateway answer exceeds the size bound"}, nil
	}
	switch {
	case resp.StatusCode == http.StatusOK:
		out, err := r.decode(point, c, answer)
		if err != nil {
			return nil, &failure{enforcement.ReasonInterceptorFailed, "agent-hooks gateway answer is malformed: " + err.Error()}, nil
		}
		r.deliver(ctx, out.Record)
		return out, nil, nil
	case resp.StatusCode == http.StatusConflict:
		if code, ok := sessionCode(answer); ok {
			return nil, nil, &SessionConflictError{Point: point, SessionID: r.sessionID, Code: code}
		}
	}
	msg := fmt.Sprintf("agent-hooks gateway answered HTTP %d", resp.StatusCode)
	if typ := errorType(answer); typ != "" {
		msg += " (" + typ + ")"
	}
	return nil, &failure{enforcement.ReasonInterceptorFailed, msg}, nil
}

// classify sorts a failed round trip: the caller's ctx ending is returned
// as its error (the gateway records its own side); the emit timeout and
// every other failure fail closed.
func (r *remoteEmitter) classify(ctx, callCtx context.Context, point enforcement.Point, err error, what string) (*failure, error) {
	if ctx.Err() != nil {
		return nil, fmt.Errorf("agent-hooks: %s emission: %w", point, ctx.Err())
	}
	if callCtx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		msg := "agent-hooks gateway call timed out"
		if r.timeout > 0 {
			msg = fmt.Sprintf("agent-hooks gateway did not answer within %s", r.timeout)
		}
		return &failure{enforcement.ReasonInterceptorTimeout, msg}, nil
	}
	return &failure{enforcement.ReasonInterceptorFailed, what}, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// decode turns a 200 answer into an outcome, checking that it is
// consistent with the emission it answers.
func (r *remoteEmitter) decode(point enforcement.Point, c enforcement.Context, answer []byte) (*enforcement.Outcome, error) {
	var a emitAnswer
	if err := json.Unmarshal(answer, &a); err != nil {
		return nil, errors.New("not a JSON object")
	}
	mode := enforcement.Mode(a.Mode)
	switch {
	case a.Proceed == nil:
		return nil, errors.New("proceed is missing")
	case !mode.Valid():
		return nil, errors.New("mode is not enforce or evaluate_only")
	case len(a.Verdict) == 0:
		return nil, errors.New("verdict is missing")
	case len(a.Target) == 0:
		return nil, errors.New("target is missing")
	case len(a.Record) == 0:
		return nil, errors.New("record is missing")
	}
	v, err := enforcement.DecodeVerdict(a.Verdict)
	if err != nil {
		return nil, errors.New("verdict is invalid")
	}
	switch v.Decision {
	case enforcement.DecisionAllow, enforcement.DecisionDeny, enforcement.DecisionTransform:
	default:
		return nil, errors.New("verdict.decision is unknown")
	}
	if want := mode == enforcement.EvaluateOnly || v.Decision != enforcement.DecisionDeny; *a.Proceed != want {
		return nil, errors.New("proceed contradicts the verdict and mode")
	}
	target, err := jsonvalue.Decode(a.Target)
	if err != nil {
		return nil, errors.New("target is not valid JSON")
	}
	rec := new(enforcement.Record)
	if err := json.Unmarshal(a.Record, rec); err != nil {
		return nil, errors.New("record is invalid")
	}
	if rec.InterceptionPoint != point || rec.Sequence < 0 || !r.ownRecord(rec.SessionID) {
		return nil, errors.New("record does not belong to this emission")
	}
	r.learn(rec)
	c["spec"] = enforcement.SpecVersion
	c["session"] = map[string]any{"id": rec.SessionID} // the gateway's trail id
	c["sequence"] = json.Number(strconv.FormatInt(rec.Sequence, 10))
	if rec.Timestamp != nil {
		c["timestamp"] = *rec.Timestamp
	}
	c.SetTarget(target)
	return &enforcement.Outcome{Verdict: v, Context: c, Record: rec, Mode: mode, Proceed: *a.Proceed}, nil
}

// sessionCode extracts the code of a 409 session-state answer.
func sessionCode(answer []byte) (string, bool) {
	var e errorAnswer
	if json.Unmarshal(answer, &e) != nil || e.Error == nil {
		return "", false
	}
	if !strings.HasPrefix(e.Error.Code, "session_") || !isToken(e.Error.Code) {
		return "", false
	}
	return e.Error.Code, true
}

// errorType returns the envelope's error type when it is a plain token (the
// gateway's types are a closed set); anything else is not echoed.
func errorType(answer []byte) string {
	var e errorAnswer
	if json.Unmarshal(answer, &e) != nil || e.Error == nil || !isToken(e.Error.Type) {
		return ""
	}
	return e.Error.Type
}

func isToken(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' && c != ':' {
			return false
		}
	}
	return true
}

// failClosed is the outcome of an emission the SDK could not complete:
// deny with the failure's reserved reason, Proceed false in either mode (the
// action failed on its own, not on a verdict: §10.3), and a local
// host-failure record (the gateway's record, if it wrote one, is not known).
func (r *remoteEmitter) failClosed(ctx context.Context, point enforcement.Point, c enforcement.Context, f failure) *enforcement.Outcome {
	rec := r.hostFailure(ctx, point, f.reason, f.message)
	return &enforcement.Outcome{
		Verdict: enforcement.Deny(f.reason, f.message),
		Context: c,
		Record:  rec,
		Mode:    rec.Mode,
		Proceed: false,
	}
}

// hostFailure builds and delivers a host-failure-shaped record: deny,
// null identities, no interceptor decided, sequence -1 (the gateway's
// number, if one was taken, is unknown), and the identity provider, mode
// and composition of policyAt.
func (r *remoteEmitter) hostFailure(ctx context.Context, point enforcement.Point, reason, message string) *enforcement.Record {
	ts := time.Now().UTC().Format(enforcement.TimestampFormat)
	p := r.policyAt(point)
	rec := &enforcement.Record{
		InterceptionPoint:      point,
		Mode:                   p.mode,
		Verdict:                enforcement.Deny(reason, message),
		IdentityProvider:       p.provider,
		SessionID:              r.trail(),
		Sequence:               -1,
		Timestamp:              &ts,
		Composition:            p.composition,
		InterceptorsRegistered: p.registered,
	}
	r.deliver(ctx, rec)
	return rec
}

// deliver hands a record to the sink; its errors and panics never alter
// control flow.
func (r *remoteEmitter) deliver(ctx context.Context, rec *enforcement.Record) {
	if r.sink == nil {
		return
	}
	defer func() { _ = recover() }()
	_ = r.sink.WriteRecord(context.WithoutCancel(ctx), rec)
}
