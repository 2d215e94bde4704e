package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/internal/membudget"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
	"github.com/hooks-gateway/hooks-gateway/metrics"
	"github.com/hooks-gateway/hooks-gateway/sessions"
)

// postCall evaluates an upstream response (post_model_call, then output
// when the response ends the turn) and releases only verdicted bytes.
type postCall struct {
	mc *modelCall
	// requestID is the call's request_id member (a string), boxed once
	// for both of its contexts.
	requestID   any
	gatewayTurn bool
	// upstream times the upstream call, in the postCall's own allocation.
	upstream upstreamCall
	// errorer, once an incremental stream released events, renders the
	// error that ends it, continuing its numbering.
	errorer wire.StreamErrorer
}

// verdicted is the outcome of evaluating a response.
type verdicted struct {
	target      map[string]any // the response target to release
	transformed bool           // target differs from the upstream's
	// output is the output emission's write-back check, kept here to
	// share the allocation.
	output outputCheck
}

// outputCheck checks an output target against post_model_call's
// verdicted response target: the response with the output's content must
// be writable back, and must keep the text already released.
type outputCheck struct {
	target   map[string]any
	released string
	resp     wire.Response
}

// withContent is the response target with content as its content.
func (o *outputCheck) withContent(content any) map[string]any {
	m := make(map[string]any, len(o.target))
	for k, x := range o.target {
		m[k] = x
	}
	m["content"] = content
	return m
}

// check is the output emission's target validator.
func (o *outputCheck) check(t any) error {
	out, ok := t.(map[string]any)
	if !ok {
		return errors.New("output is not an object")
	}
	if o.released != "" && !strings.HasPrefix(enforcement.ResponseText(out["content"]), o.released) {
		return enforcement.ErrReleasedRewrite
	}
	return o.resp.CheckWriteBack(o.withContent(out["content"]))
}

// release is the target to release: the verdicted one after an enforced
// transform, else nil (the upstream answer as projected).
func (v *verdicted) release() any {
	if v.transformed {
		return v.target
	}
	return nil
}

// evaluate emits post_model_call (and output) over a parsed response.
func (pc *postCall) evaluate(ctx context.Context, resp wire.Response) (*verdicted, error) {
	// Hold the answer's records (post_model_call, output, agent_shutdown)
	// until the answer is written: the upstream has been called, and the
	// client gets nothing before they are written (statusWriter).
	enforcement.HeldRecordsFrom(ctx).Hold()
	post, err := pc.mc.t.emit(ctx, enforcement.PostModelCall, pc.postFields(resp.Project(), resp),
		enforcement.WithTargetValidator(resp.CheckWriteBack))
	if err != nil {
		return nil, err
	}
	return pc.afterPost(ctx, resp, post, "")
}

// postFields are post_model_call's members over response (a projection,
// or a prefix of one); resp, when not nil, is the complete response whose
// usage they carry.
func (pc *postCall) postFields(response map[string]any, resp wire.Response) map[string]any {
	fields := pc.mc.modelFields(pc.mc.model())
	fields["response"], fields["request_id"] = response, pc.requestID
	if resp != nil {
		if u := resp.Usage(); u != nil {
			fields["usage"] = u
		}
	}
	return fields
}

// afterPost reads post_model_call's verdicted target and emits output when
// the response ends the turn. released is text already streamed to the
// client: an output transform must keep it (enforcement.ErrReleasedRewrite).
func (pc *postCall) afterPost(ctx context.Context, resp wire.Response, post *enforcement.Outcome, released string) (*verdicted, error) {
	t := pc.mc.t
	target, ok := post.Context["response"].(map[string]any)
	if !ok {
		return nil, hostFailure(enforcement.PostModelCall, t.builder.SessionID, "the verdicted response is not an object")
	}
	v := &verdicted{target: target, transformed: post.Mode == enforcement.Enforce && post.Verdict.Decision == enforcement.DecisionTransform}
	calls, _ := target["tool_calls"].([]any)
	if !pc.gatewayTurn || len(calls) > 0 {
		return v, nil
	}
	// The response ends the turn: output over the client-visible content.
	v.output = outputCheck{target: target, released: released, resp: resp}
	out, err := t.emit(ctx, enforcement.Output, enforcement.OutputFields(target["content"]),
		enforcement.WithTargetValidator(v.output.check))
	if err != nil {
		return nil, err
	}
	if out.Mode == enforcement.Enforce && out.Verdict.Decision == enforcement.DecisionTransform {
		o, _ := out.Context["output"].(map[string]any)
		v.target = v.output.withContent(o["content"])
		v.transformed = true
	}
	return v, nil
}

// json handles a non-streamed response.
func (pc *postCall) json(ctx context.Context, w http.ResponseWriter, resp *http.Response) error {
	if isEventStream(resp) {
		pc.upstream.doneStatus()
		return errorf(http.StatusBadGateway, typeUpstream, "upstream_unexpected_stream", "the upstream streamed a response to a non-streaming request")
	}
	limit := pc.mc.s.opts.MaxResponseBytes
	body, err := readAllSized(pc.mc.budget.Reader(io.LimitReader(resp.Body, limit+1)), min(resp.ContentLength, limit+1))
	if err != nil {
		if errors.Is(err, membudget.ErrExhausted) && ctx.Err() == nil {
			pc.upstream.doneStatus() // the upstream was fine; the gateway is full
			pc.mc.s.metrics.BufferBudgetRefusal(metrics.BudgetBuffering)
			return budgetError()
		}
		pc.upstream.doneErr(ctx, err)
		if ctx.Err() != nil {
			return errorf(499, typeGatewayError, "client_closed_request", "the client went away during the model call")
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return errorf(http.StatusGatewayTimeout, typeUpstream, "upstream_timeout", "the upstream did not finish the response in time")
		}
		return errorf(http.StatusBadGateway, typeUpstream, "upstream_read_failed", "the upstream response could not be read")
	}
	pc.upstream.doneStatus()
	if int64(len(body)) > limit {
		return errorf(http.StatusBadGateway, typeUpstream, "upstream_response_too_large", "the upstream response exceeds %d bytes", limit)
	}
	parsed, err := pc.mc.surf.ParseResponse(pc.mc.req, body)
	if err != nil {
		// Surface errors name fields and types, never content.
		return errorf(http.StatusBadGateway, typeUpstream, "upstream_response_invalid", "the upstream response is not understood: %v", err)
	}
	v, err := pc.evaluate(ctx, parsed)
	if err != nil {
		return err
	}
	pc.mc.t.stage = stageRelease
	out, err := parsed.Release(v.release())
	if err != nil {
		// The validator accepted it, so this is a gateway bug: fail closed.
		return hostFailure(enforcement.PostModelCall, pc.mc.t.builder.SessionID, "the verdicted response could not be written back")
	}
	pc.mc.t.end(ctx, enforcement.ShutdownCompleted)
	vals := pc.headers(w, 2)
	h := w.Header()
	h["Content-Type"] = oneValue(&vals, "application/json")
	h["Content-Length"] = oneValue(&vals, strconv.Itoa(len(out)))
	w.WriteHeader(http.StatusOK)
	w.Write(out)
	return nil
}

// headers sets the turn's session, decision and mode headers (what
// Header.Set would, its keys being canonical) with their values in one
// array, which has room for extra more the caller sets with oneValue.
func (pc *postCall) headers(w http.ResponseWriter, extra int) []string {
	t := pc.mc.t
	h := w.Header()
	vals := make([]string, 0, 3+extra)
	h[HeaderSession] = oneValue(&vals, t.sessionHeader())
	if t.worst != "" {
		h[HeaderDecision] = oneValue(&vals, string(t.worst))
	}
	if t.mode != "" {
		h[HeaderMode] = oneValue(&vals, string(t.mode))
	}
	return vals
}

// oneValue appends v to *vals and returns it as a one-value header slice
// of its own (capacity one, so an Add to it copies rather than writing
// over the next value).
func oneValue(vals *[]string, v string) []string {
	n := len(*vals)
	*vals = append(*vals, v)
	return (*vals)[n : n+1 : n+1]
}

// isEventStream reports whether resp's media type is text/event-stream
// (malformed parameters do not matter). The value upstreams send is
// answered without parsing, which allocates.
func isEventStream(resp *http.Response) bool {
	v := resp.Header.Get("Content-Type")
	if v == "text/event-stream" {
		return true
	}
	mt, _, _ := mime.ParseMediaType(v)
	return mt == "text/event-stream"
}

// stream handles a streamed response: the whole upstream stream is read and
// assembled before anything reaches the client (§12.1, §12.1a).
func (pc *postCall) stream(ctx context.Context, w http.ResponseWriter, ka *keepAlive, call func() (*http.Response, error)) error {
	st, v, err := pc.readAndEvaluate(ctx, call)
	committed := ka.stop()
	if err == nil {
		err = pc.releaseWhole(ctx, w, committed, st, v, config.StreamingBuffered)
	}
	if err != nil && committed {
		pc.streamError(ctx, w, err)
		return nil
	}
	return err
}

// releaseWhole writes a stream whose last verdict came before any of it
// was released: the 200 and the headers, decision included, unless a
// keep-alive committed them, then the verdicted events. It fails only
// before writing anything. mode labels the stream's metric.
func (pc *postCall) releaseWhole(ctx context.Context, w http.ResponseWriter, committed bool, st wire.Stream, v *verdicted, mode string) error {
	pc.mc.t.stage = stageRelease
	out, err := st.Release(v.release())
	if err != nil {
		// The validator accepted it, so this is a gateway bug: fail closed.
		return hostFailure(enforcement.PostModelCall, pc.mc.t.builder.SessionID, "the verdicted stream could not be synthesized")
	}
	pc.mc.t.end(ctx, enforcement.ShutdownCompleted)
	if !committed {
		setStreamHeaders(w, pc.headers(w, 3))
		w.WriteHeader(http.StatusOK)
	}
	if _, err := w.Write(out); err != nil {
		return nil // the client went away mid-release; nothing more to say
	}
	flush(w)
	observation(ctx).streamData(pc.mc.s.metrics, mode)
	return nil
}

// streamError ends a stream whose 200 is already out: the turn ends, and
// one error event in the surface's shape closes the stream.
func (pc *postCall) streamError(ctx context.Context, w http.ResponseWriter, err error) {
	reason := enforcement.ShutdownError
	if ctx.Err() != nil {
		reason = enforcement.ShutdownCancelled // the client went away
	}
	ae := pc.mc.apiError(err) // before the shutdown moves the stage
	pc.mc.t.end(ctx, reason)
	pc.mc.noteDeny(err)
	if pc.errorer != nil {
		w.Write(pc.errorer.StreamError(ae.wireError()))
	} else {
		w.Write(pc.mc.surf.StreamError(ae.wireError()))
	}
	flush(w)
}

// flush pushes what was written to the client, where the writer can.
func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// readAndEvaluate calls the upstream, buffers its whole stream and
// evaluates the assembled response.
func (pc *postCall) readAndEvaluate(ctx context.Context, call func() (*http.Response, error)) (wire.Stream, *verdicted, error) {
	resp, err := call()
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if !isEventStream(resp) {
		pc.upstream.doneStatus()
		return nil, nil, errorf(http.StatusBadGateway, typeUpstream, "upstream_not_streaming", "the upstream did not stream a response to a streaming request")
	}
	st, err := pc.mc.surf.ReadStream(pc.mc.req, pc.mc.budget.Reader(resp.Body), pc.mc.s.opts.StreamBufferLimit)
	if err != nil {
		if (errors.Is(err, wire.ErrBufferLimit) || errors.Is(err, membudget.ErrExhausted)) && ctx.Err() == nil {
			pc.upstream.doneStatus() // the upstream was fine; the stream outgrew the buffer
		} else {
			pc.upstream.doneErr(ctx, err)
		}
		return nil, nil, pc.streamFailure(ctx, err)
	}
	pc.upstream.doneStatus()
	pc.mc.s.metrics.ObserveStreamBuffer(st.BufferedBytes())
	v, err := pc.evaluate(ctx, st.Response())
	return st, v, err
}

// streamFailure maps a stream that could not be assembled. A stream over
// the buffer limit, or one that outgrew what was left of the buffer
// budget, is the §12.1 shape: post_model_call with finish_reason
// stream_incomplete and a host_error:streaming_unsupported self-verdict,
// nothing released. A cut or errored stream is an errored model call: no
// post_model_call.
func (pc *postCall) streamFailure(ctx context.Context, err error) error {
	s := pc.mc.s
	switch {
	case ctx.Err() != nil:
		return errorf(499, typeGatewayError, "client_closed_request", "the client went away during the model call")
	case errors.Is(err, wire.ErrBufferLimit), errors.Is(err, membudget.ErrExhausted):
		why := fmt.Sprintf("the upstream stream exceeds the %d-byte buffer", s.opts.StreamBufferLimit)
		if errors.Is(err, membudget.ErrExhausted) {
			s.metrics.BufferBudgetRefusal(metrics.BudgetBuffering)
			why = "the upstream stream outgrew what was left of the gateway's buffer budget (limits.buffer_budget)"
		} else {
			s.metrics.StreamBufferOverflow()
		}
		out, err := pc.refuse(ctx, map[string]any{"content": nil, "tool_calls": []any{}, "finish_reason": enforcement.FinishStreamIncomplete},
			enforcement.ReasonStreamingUnsupported, why)
		if err != nil {
			return err
		}
		return verdictError(out)
	case errors.Is(err, wire.ErrUpstreamEvent):
		return errorf(http.StatusBadGateway, typeUpstream, "upstream_stream_error", "the upstream reported an error inside the stream")
	case errors.Is(err, wire.ErrResponseInvalid):
		// Surface errors name event numbers and fields, never content.
		return errorf(http.StatusBadGateway, typeUpstream, "upstream_response_invalid", "the upstream stream is not understood: %v", err)
	case errors.Is(err, context.DeadlineExceeded):
		// The provider timeout fired while the stream was being read.
		return errorf(http.StatusGatewayTimeout, typeUpstream, "upstream_timeout", "the upstream did not finish the stream in time")
	}
	return errorf(http.StatusBadGateway, typeUpstream, "upstream_stream_incomplete", "the upstream stream ended before it completed")
}

// refuse records post_model_call over response with a host deny and no
// interceptor dispatched (§12.1's refusal of a stream).
func (pc *postCall) refuse(ctx context.Context, response map[string]any, reason, why string) (*enforcement.Outcome, error) {
	t := pc.mc.t
	t.postOwed = false
	c, err := t.builder.Build(ctx, enforcement.PostModelCall, pc.postFields(response, nil))
	if err != nil {
		if errors.Is(err, sessions.ErrSessionSealed) || errors.Is(err, sessions.ErrUnknownSession) {
			return nil, t.withheld(enforcement.PostModelCall)
		}
		t.emitter().RecordHostFailure(ctx, enforcement.HostFailure{Point: enforcement.PostModelCall, SessionID: t.builder.SessionID, Sequence: -1, Message: "session store unavailable"})
		return nil, hostFailure(enforcement.PostModelCall, t.builder.SessionID, errStore.Error())
	}
	out := t.emitter().Refuse(ctx, c, reason, why)
	t.note(out)
	return out, nil
}

// setStreamHeaders sets an event stream's three headers, their values
// appended to vals (see oneValue).
func setStreamHeaders(w http.ResponseWriter, vals []string) {
	h := w.Header()
	h["Content-Type"] = oneValue(&vals, "text/event-stream")
	h["Cache-Control"] = oneValue(&vals, "no-cache")
	h["X-Accel-Buffering"] = oneValue(&vals, "no")
}

// keepAlive sends SSE comments while a stream is buffered, when configured.
type keepAlive struct {
	mu        sync.Mutex
	once      sync.Once
	done      chan struct{}
	wg        sync.WaitGroup
	committed bool
}

func (pc *postCall) startKeepAlive(w http.ResponseWriter) *keepAlive {
	ka := &keepAlive{done: make(chan struct{})}
	every := pc.mc.s.opts.KeepAlive
	if every <= 0 {
		return ka
	}
	// The headers the first comment commits, read now: the emissions of
	// this goroutine's caller go on while it runs.
	h := pc.provisionalHeaders()
	ka.wg.Add(1)
	go func() {
		defer ka.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ka.done:
				return
			case <-t.C:
				ka.mu.Lock()
				if !ka.committed {
					h.commit(w)
					ka.committed = true
				}
				// A comment carries no content: nothing unverdicted escapes.
				io.WriteString(w, ": keep-alive\n\n")
				flush(w)
				ka.mu.Unlock()
			}
		}
	}()
	return ka
}

// stop ends the keep-alive and reports whether the status was committed.
// Calls after the first only report.
func (ka *keepAlive) stop() bool {
	ka.once.Do(func() {
		close(ka.done)
		ka.wg.Wait()
	})
	return ka.committed
}

// streamHeaders are the headers of a stream committed before its
// verdicts are all known (a keep-alive, an incremental release).
type streamHeaders struct {
	session string
	mode    enforcement.Mode
}

// provisionalHeaders reads the turn's headers as they stand. The mode
// counts the post_model_call still to come, so an answer that point
// judges in evaluate_only never claims enforcement.
func (pc *postCall) provisionalHeaders() streamHeaders {
	tn := pc.mc.t
	h := streamHeaders{session: tn.sessionHeader(), mode: tn.mode}
	if tn.emitter().ModeFor(enforcement.PostModelCall) == enforcement.EvaluateOnly {
		h.mode = enforcement.EvaluateOnly
	}
	return h
}

// commit writes the 200 and the stream headers. No decision header: the
// verdict is not known yet, and announcing the decisions so far ("allow")
// would be false if a later verdict denies.
func (sh streamHeaders) commit(w http.ResponseWriter) {
	h := w.Header()
	vals := make([]string, 0, 5) // one array for the five values
	h[HeaderSession] = oneValue(&vals, sh.session)
	if sh.mode != "" {
		h[HeaderMode] = oneValue(&vals, string(sh.mode))
	}
	setStreamHeaders(w, vals)
	w.WriteHeader(http.StatusOK)
}
