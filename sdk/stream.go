package sdk

import (
	"context"
	"errors"
	"fmt"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// StreamFunc performs a streaming model call with the verdicted messages.
// It passes each text delta to yield as it arrives and returns the
// complete response (content, tool calls, finish reason) at the model's
// proper end. yield returns an error when the stream must stop (a deny):
// StreamFunc must then return at once, and its return value is ignored.
// An error from StreamFunc after deltas were yielded is a stream that
// died: text no verdict covered is withheld and refused.
//
// Only text goes through yield; tool calls arrive in the final response
// and are judged whole, never released piecemeal.
type StreamFunc func(ctx context.Context, messages any, yield func(delta string) error) (enforcement.ModelResponse, error)

// ReleaseFunc receives the response's text as verdicts cover it, in
// order: the concatenation of its calls is the verdicted content. It is
// where the agent shows text to its user. An error stops the stream.
type ReleaseFunc func(text string) error

// DefaultMaxSegments caps the segment emissions of one streamed response
// when StreamOptions leaves it zero; past it the rest is judged whole.
const DefaultMaxSegments = 64

// StreamOptions tunes ModelCallStream.
type StreamOptions struct {
	// MaxSegments caps the post_model_call emissions over prefixes of one
	// response (each judges the whole prefix, so their cost grows with
	// the square of the length); past it the rest of the response is
	// buffered and judged once. 0 is DefaultMaxSegments.
	MaxSegments int
}

// ErrIncrementalUnsupported is returned by ModelCallStream on a remote
// session: the gateway cannot record the SDK's own refusals, and a model
// call routed through the gateway is mediated there
// (streaming.mode: incremental).
var ErrIncrementalUnsupported = errors.New("agent-hooks: incremental model calls need a local session")

// ModelCallStream brackets one streamed model call under the §12.1
// incremental-mediation exception, with the exposure bound "none": text
// reaches release only after a post_model_call verdict covering it.
//
// pre_model_call is emitted as in ModelCall. A delta is judged when the
// next one arrives (a chunk boundary closes a segment): post_model_call
// over the whole text so far with finish_reason "incremental"; on a
// permit the new text goes to release. The complete response is judged
// once more at the end, with its real finish reason and tool calls, and
// the verdicted remainder goes to release. A deny stops the stream and
// withholds everything not yet released (*BlockedError). A transform
// releases nothing of its prefix and buffers the rest: the final verdict
// decides, and fails closed (host_error:streaming_unsupported) if it
// would rewrite released text. A stream that dies with text no verdict
// covered is refused with finish_reason stream_incomplete and
// host_error:streaming_unsupported (*BlockedError). Only released text
// may be kept (persisted) by the agent.
//
// The session declares buffered_output: false: an output deny cannot
// retract what was released.
func (s *Session) ModelCallStream(ctx context.Context, model string, messages any, call StreamFunc, release ReleaseFunc, opts StreamOptions) (enforcement.ModelResponse, error) {
	if err := s.step(); err != nil {
		return enforcement.ModelResponse{}, err
	}
	local, ok := s.em.(*localEmitter)
	if !ok {
		return enforcement.ModelResponse{}, ErrIncrementalUnsupported
	}
	pre, err := s.emitChecked(ctx, enforcement.PreModelCall, enforcement.PreModelFields(model, messages))
	if err != nil {
		return enforcement.ModelResponse{}, err
	}
	maxSegments := opts.MaxSegments
	if maxSegments <= 0 {
		maxSegments = DefaultMaxSegments
	}
	st := &streamCall{
		ctx:     ctx,
		med:     enforcement.NewStreamMediator(&localJudge{l: local, model: model}, maxSegments),
		release: release,
	}
	resp, err := call(ctx, pre.Context["messages"], st.yield)
	if st.stop != nil {
		return enforcement.ModelResponse{}, st.stop
	}
	if err != nil {
		out, rerr := st.med.Cut(ctx, st.text, "the model stream ended before it completed")
		if rerr != nil {
			return enforcement.ModelResponse{}, rerr
		}
		if out != nil && !out.Proceed {
			return enforcement.ModelResponse{}, &BlockedError{Outcome: out}
		}
		return enforcement.ModelResponse{}, fmt.Errorf("model call: %w", err)
	}
	if s, ok := resp.Content.(string); ok && s != st.text && st.med.Released() != "" {
		// The final response must be the text streamed: anything else
		// would have released a prefix of a different answer.
		return enforcement.ModelResponse{}, fmt.Errorf("model call: the final content differs from the %d bytes streamed", len(st.text))
	}
	target := enforcement.PostModelFields(model, resp)["response"].(map[string]any)
	out, rest, err := st.med.Final(ctx, target)
	if err != nil {
		return enforcement.ModelResponse{}, err
	}
	if rest != "" {
		if err := release(rest); err != nil {
			return enforcement.ModelResponse{}, fmt.Errorf("release: %w", err)
		}
	}
	return responseFrom(out.Context["response"])
}

// streamCall is the state of one ModelCallStream between yields.
type streamCall struct {
	ctx     context.Context
	med     *enforcement.StreamMediator
	release ReleaseFunc
	text    string // every delta so far
	stop    error  // set when the stream must stop: a deny, a failed release
}

// yield judges the text up to the previous delta (its chunk boundary is
// now known) and releases what the verdict covers, then holds delta.
func (st *streamCall) yield(delta string) error {
	if st.stop != nil {
		return st.stop
	}
	// Before the first delta text is "": Segment judges nothing.
	out, err := st.med.Segment(st.ctx, st.text)
	if err != nil {
		st.stop = err
		return err
	}
	if out != "" {
		if err := st.release(out); err != nil {
			st.stop = fmt.Errorf("release: %w", err)
			return st.stop
		}
	}
	st.text += delta
	return nil
}

// localJudge emits a mediator's post_model_calls through a local session.
type localJudge struct {
	l     *localEmitter
	model string
}

func (j *localJudge) Judge(ctx context.Context, response map[string]any, check enforcement.TargetValidator) (*enforcement.Outcome, error) {
	return j.l.emitWith(ctx, enforcement.PostModelCall, j.fields(response), enforcement.WithTargetValidator(check))
}

func (j *localJudge) Refuse(ctx context.Context, response map[string]any, reason, message string) (*enforcement.Outcome, error) {
	c, err := j.l.builder.Build(ctx, enforcement.PostModelCall, j.fields(response))
	if err != nil {
		return nil, err
	}
	var opts []enforcement.EmitOption
	if j.l.mode != "" {
		opts = append(opts, enforcement.WithMode(j.l.mode))
	}
	return j.l.emitter.Refuse(ctx, c, reason, message, opts...), nil
}

func (j *localJudge) fields(response map[string]any) map[string]any {
	return map[string]any{"model": map[string]any{"id": j.model}, "response": response}
}
