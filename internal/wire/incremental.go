package wire

import "io"

// Incremental is implemented by a Surface that can mediate a stream as it
// arrives (the §12.1 exception): the pipeline reads the upstream stream
// event by event, has each segment of the answer's text judged by an
// ordinary post_model_call over the assembled prefix, and releases to the
// client only text a verdict covered (the watermark).
//
// Only plain text is ever released ahead of the whole answer: text parts
// one after the other (several message items or text blocks included),
// judged and released as their join, the text their client shows. Once
// the answer carries anything else (a tool call, a refusal, reasoning,
// annotations), StreamReader.Plain turns false and the pipeline buffers
// the rest and judges it whole, as in buffered mode.
type Incremental interface {
	// OpenStream starts reading the upstream stream answering req; the
	// stream as a whole holds at most limit bytes (ErrBufferLimit past
	// it, as ReadStream).
	OpenStream(req Request, r io.Reader, limit int64) StreamReader
}

// StreamErrorer is a StreamReader that renders the events ending its own
// stream on an error after it released some: they continue the stream's
// numbering (the Responses sequence numbers) where Surface.StreamError,
// which knows no stream, starts afresh.
type StreamErrorer interface {
	StreamError(e Error) []byte
}

// StreamReader reads one upstream stream an event at a time and assembles
// it as the surface's official clients do. It is not safe for concurrent
// use. Nothing it reads has reached the client; it only renders events
// the caller then decides to write.
type StreamReader interface {
	// Next reads until one more event of the stream has been dispatched.
	// It reports done at the stream's proper end (the surface's terminal
	// event); then Stream returns the assembled answer. Errors are
	// *StreamError, as ReadStream's; after an error or done, Next must
	// not be called again.
	Next() (done bool, err error)
	// Text is the answer's plain text assembled so far: while Plain, the
	// content every official client would show, in order, its text parts
	// joined with nothing between them (enforcement.ResponseText of the
	// projection's content starts with it). Once Plain is false it stays
	// what it was.
	Text() string
	// Plain reports whether the answer so far is plain text only: text
	// parts one after the other, each begun after the one before it ended,
	// no tool call, refusal, reasoning or annotation. Once false it stays
	// false.
	Plain() bool
	// Head renders the events that open the client's stream before its
	// first text (chat: the role chunk; Responses: response.created,
	// response.in_progress, the first message item and its content part;
	// Messages: message_start and the first text block's start), from the
	// metadata read so far. It is called once, at the first release,
	// when Text is not empty.
	Head() ([]byte, error)
	// Delta renders the events that carry text, the next part of Text
	// after everything released so far, to the client. from is the byte
	// offset of text in Text; a surface may replay the upstream's own
	// events lying wholly inside [from, from+len(text)) and re-synthesize
	// the rest. Where text goes on into a later part, Delta ends the part
	// before it and opens the next on the client's stream.
	Delta(from int, text string) ([]byte, error)
	// Stream returns the whole assembled stream after Next reported
	// done. Its Response is what the final post_model_call judges.
	Stream() (Stream, error)
	// Tail renders the rest of the client's stream after released, the
	// text already written (Head and Deltas): the remainder of target's
	// content, any tool calls, the finish and usage events and the
	// stream's terminal event. target is the verdicted response target
	// ({content, tool_calls, finish_reason}), or nil for st's own
	// projection. It fails (*WriteBackError) when target's content does
	// not begin with released, or cannot be written on the stream
	// already opened (a part the client holds whole changed, a boundary
	// between released parts moved): released bytes cannot be rewritten.
	Tail(st Stream, target any, released string) ([]byte, error)
	// BufferedBytes is how many bytes of the stream are held so far.
	BufferedBytes() int64
}
