package enforcement

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// FinishIncremental is response.finish_reason of a post_model_call over a
// prefix of a response still streaming (§12.1 exception, AH-CTK-110).
const FinishIncremental = "incremental"

// FinishStreamIncomplete is response.finish_reason of the post_model_call
// that refuses a stream whose content no verdict covered (§12.1).
const FinishStreamIncomplete = "stream_incomplete"

// ErrReleasedRewrite marks a verdicted target that would rewrite content
// already released to the caller. A target validator returning an error
// that wraps it makes the combined verdict deny
// host_error:streaming_unsupported (released bytes cannot be retracted)
// rather than host_error:transform_invalid.
var ErrReleasedRewrite = errors.New("the transform rewrites content already released to the caller")

// StreamJudge is how a StreamMediator emits: the host builds, sequences
// and dispatches each post_model_call as it would any other.
type StreamJudge interface {
	// Judge emits post_model_call over response ({content, tool_calls,
	// finish_reason}); check, when not nil, must run as a target
	// validator of the emission (WithTargetValidator, combined with the
	// host's own). It returns an error only when the emission could not
	// be made or was cut short (a canceled context, a store failure).
	Judge(ctx context.Context, response map[string]any, check TargetValidator) (*Outcome, error)
	// Refuse records post_model_call over response with a host deny
	// (reason, message) and dispatches no interceptor (Emitter.Refuse).
	Refuse(ctx context.Context, response map[string]any, reason, message string) (*Outcome, error)
}

// StreamMediator is the release accounting of one model response mediated
// incrementally under the §12.1 exception, with the exposure bound
// "none": no byte reaches the caller ahead of a permitting verdict over
// it.
//
//   - Each Segment emits an ordinary post_model_call over the whole
//     assembled prefix (finish_reason "incremental"), so a policy sees
//     every match whatever its length; the watermark advances only when
//     that verdict permits unchanged, and only to the prefix's last word
//     boundary: a token still arriving is held back whole.
//   - A deny is terminal: everything not yet released is withheld,
//     including text an earlier verdict permitted.
//   - A transform releases nothing of its prefix and switches the rest of
//     the response to buffering: Final judges it whole. A verdicted target
//     that rewrites released text fails closed with
//     host_error:streaming_unsupported; one that keeps it releases the
//     verdicted remainder.
//   - Past the segment cap, or once the caller calls Buffer (a tool call
//     started), the rest is buffered likewise.
//   - A stream that ends short of its proper end with text no verdict
//     covered is refused (Cut): post_model_call with finish_reason
//     stream_incomplete and host_error:streaming_unsupported.
//   - evaluate_only verdicts never gate release: they are recorded, and
//     the text is released as if permitted.
//
// The text is the response's text as its reader assembles it
// (ResponseText): an answer in several text parts is mediated as their
// join, so each verdict covers everything before it across the parts,
// and Final accepts a complete response whose content is a part array
// whose text extends the released text.
//
// Released is the only content that may become durable (item 4). A
// StreamMediator is not safe for concurrent use.
type StreamMediator struct {
	judge       StreamJudge
	maxSegments int

	judged    string // the prefix the last segment judged
	released  string // text handed to the caller
	segments  int
	buffering bool
	closed    error // set once terminal: the reason nothing more is released
}

// NewStreamMediator returns the accounting for one response. maxSegments
// caps the segment emissions (0: no cap); past it the rest is buffered.
func NewStreamMediator(judge StreamJudge, maxSegments int) *StreamMediator {
	return &StreamMediator{judge: judge, maxSegments: maxSegments}
}

// errMediatorClosed is returned by calls after a terminal outcome.
var errMediatorClosed = errors.New("agent-hooks: the mediated stream already ended")

// Released is the text released to the caller so far.
func (m *StreamMediator) Released() string { return m.released }

// Buffering reports whether the rest of the response is judged whole by
// Final rather than segment by segment.
func (m *StreamMediator) Buffering() bool { return m.buffering }

// Buffer switches the rest of the response to buffering; the host calls
// it when the response starts anything but plain text (a tool call).
func (m *StreamMediator) Buffer() { m.buffering = true }

// Segments is how many segment emissions were made.
func (m *StreamMediator) Segments() int { return m.segments }

// Segment judges prefix, the response's text assembled so far, and
// returns the text it releases: what prefix adds to Released. It returns
// "" without emitting while buffering, or when prefix adds nothing to
// what was judged. A deny returns *BlockedError and ends the stream; so
// does a failed emission (its error).
func (m *StreamMediator) Segment(ctx context.Context, prefix string) (string, error) {
	if m.closed != nil {
		return "", errMediatorClosed
	}
	if !strings.HasPrefix(prefix, m.judged) {
		return "", m.fail(errors.New("agent-hooks: a segment does not extend the text judged before it"))
	}
	if m.buffering || len(prefix) == len(m.judged) {
		return "", nil
	}
	if m.maxSegments > 0 && m.segments >= m.maxSegments {
		m.buffering = true
		return "", nil
	}
	m.segments++
	m.judged = prefix
	resp := map[string]any{"content": prefix, "tool_calls": []any{}, "finish_reason": FinishIncremental}
	out, err := m.judge.Judge(ctx, resp, m.keepsReleased)
	if err != nil {
		return "", m.fail(err)
	}
	switch {
	case !out.Proceed:
		return "", m.fail(&BlockedError{Outcome: out})
	case out.Mode == Enforce && out.Verdict.Decision == DecisionTransform:
		// Nothing of a rewritten prefix is released: Final judges the
		// whole response and its target is what the caller gets.
		m.buffering = true
		return "", nil
	}
	return m.release(prefix), nil
}

// Final judges the complete response (its real finish_reason and tool
// calls) at the stream's proper end. On a permit it returns the outcome
// and the text still to release: the verdicted content's text
// (ResponseText) after Released. It returns *BlockedError on a deny,
// including the fail-closed deny of a verdicted content that rewrites
// released text, and the refusal (Refuse, host_error:streaming_unsupported)
// of a complete response whose text does not extend Released. When nothing
// was released and the verdicted content is not a string, rest is "" and
// the host renders the target itself.
func (m *StreamMediator) Final(ctx context.Context, response map[string]any) (*Outcome, string, error) {
	if m.closed != nil {
		return nil, "", errMediatorClosed
	}
	if !strings.HasPrefix(ResponseText(response["content"]), m.released) {
		// The complete answer contradicts the text its segments released
		// (a stream whose final snapshot rewrites its deltas): it cannot
		// continue what the caller already has.
		out, err := m.judge.Refuse(ctx, response, ReasonStreamingUnsupported,
			fmt.Sprintf("the complete response does not extend the %d bytes already released", len(m.released)))
		if err != nil {
			return nil, "", m.fail(err)
		}
		return out, "", m.fail(&BlockedError{Outcome: out})
	}
	out, err := m.judge.Judge(ctx, response, m.keepsReleased)
	if err != nil {
		return nil, "", m.fail(err)
	}
	if !out.Proceed {
		return out, "", m.fail(&BlockedError{Outcome: out})
	}
	m.closed = errMediatorClosed
	target := response
	if out.Mode == Enforce && out.Verdict.IsPermit() {
		if t, ok := out.Context["response"].(map[string]any); ok {
			target = t
		}
	}
	if _, ok := target["content"].(string); !ok && m.released == "" {
		return out, "", nil
	}
	text := ResponseText(target["content"])
	if !strings.HasPrefix(text, m.released) {
		// Unreachable: the response was checked to extend the released
		// text before it was judged, and keepsReleased holds a transform
		// to it.
		return out, "", fmt.Errorf("agent-hooks: the verdicted response does not extend the %d bytes already released", len(m.released))
	}
	rest := text[len(m.released):]
	m.released = text
	return out, rest, nil
}

// Cut settles a stream that ended short of its proper end (cut, errored
// upstream, over its buffer) after delivering text. Text no verdict
// covered fails closed: Cut refuses post_model_call over the whole
// delivered text with finish_reason stream_incomplete and
// host_error:streaming_unsupported, and returns that outcome; it returns
// nil when every delivered byte was judged (an errored model call). The
// residue is never released.
func (m *StreamMediator) Cut(ctx context.Context, delivered, why string) (*Outcome, error) {
	if m.closed != nil {
		return nil, nil // denied or settled: nothing more is released
	}
	m.closed = errMediatorClosed
	// While buffering, the host holds content no verdict covered (a
	// transformed prefix's tail, tool-call fragments).
	if len(delivered) <= len(m.judged) && !m.buffering {
		return nil, nil
	}
	resp := map[string]any{"content": delivered, "tool_calls": []any{}, "finish_reason": FinishStreamIncomplete}
	return m.judge.Refuse(ctx, resp, ReasonStreamingUnsupported, why)
}

// keepsReleased is the target validator of every emission: a verdicted
// response whose content no longer begins with the released text cannot
// be honoured.
func (m *StreamMediator) keepsReleased(target any) error {
	if m.released == "" {
		return nil
	}
	t, ok := target.(map[string]any)
	if !ok {
		return fmt.Errorf("%w: the response is not an object", ErrReleasedRewrite)
	}
	if !strings.HasPrefix(ResponseText(t["content"]), m.released) {
		return ErrReleasedRewrite
	}
	return nil
}

// partText is the type of a text part in a response's content.
const partText = "text"

// ResponseText is the text a response's content carries as its reader
// assembles it, the text a StreamMediator releases: a string is itself; a
// part array is the join of its text parts ({"type":"text","text":…}), in
// order, with nothing between them (as openai-go's output_text joins a
// Responses answer's text parts, and an application joins an Anthropic
// answer's text blocks). Reasoning, refusals and other parts are not text
// the caller is shown as the answer; any other content carries no text.
func ResponseText(content any) string {
	switch c := content.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, p := range c {
			if m, ok := p.(map[string]any); ok && m["type"] == partText {
				s, _ := m["text"].(string)
				b.WriteString(s)
			}
		}
		return b.String()
	}
	return ""
}

// release moves the watermark over a permitted prefix and returns the
// text released: up to the prefix's last word boundary, so that a token
// still streaming (a credential, an address) is never released in part
// on a verdict that saw only its beginning. The rest stays permitted but
// withheld until a later verdict covers more, or Final.
func (m *StreamMediator) release(prefix string) string {
	end := max(releasableEnd(prefix), len(m.released))
	rest := prefix[len(m.released):end]
	m.released = prefix[:end]
	return rest
}

// MaxHoldBack bounds the text a permitted prefix holds back after its last
// word boundary: a run of text without one releases all but this many
// bytes.
const MaxHoldBack = 256

// releasableEnd is the end of prefix's last word boundary (after a space
// or a punctuation mark that does not occur inside tokens), at least
// len(prefix) - MaxHoldBack, on a rune boundary.
func releasableEnd(prefix string) int {
	floor := len(prefix) - MaxHoldBack
	for i := len(prefix); i > 0 && i > floor; {
		r, size := utf8.DecodeLastRuneInString(prefix[:i])
		if wordBoundary(r) {
			return i
		}
		i -= size
	}
	if floor <= 0 {
		return 0
	}
	for floor > 0 && !utf8.RuneStart(prefix[floor]) {
		floor--
	}
	return floor
}

// wordBoundary reports whether a token ends at r: spaces, and punctuation
// other than the marks credentials, addresses and paths carry inside.
func wordBoundary(r rune) bool {
	if unicode.IsSpace(r) {
		return true
	}
	if !unicode.IsPunct(r) && !unicode.IsSymbol(r) {
		return false
	}
	return !strings.ContainsRune("-_./+=:@%~#&?$!*'\\|^`", r)
}

func (m *StreamMediator) fail(err error) error {
	m.closed = err
	return err
}
